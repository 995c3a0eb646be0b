import Foundation
import Logging
import TetherCore

/// The direction of a frame on a MeshCore serial or TCP stream, which picks its marker byte.
public enum MeshCoreStreamDirection: Sendable, Hashable {
    /// App to radio, marked `<` (0x3C).
    case toRadio
    /// Radio to app, marked `>` (0x3E).
    case fromRadio

    /// The byte that starts every frame in this direction.
    public var marker: UInt8 {
        switch self {
        case .toRadio: 0x3C
        case .fromRadio: 0x3E
        }
    }
}

/// `<`/`>` + u16 LE length framing used over serial and TCP.
///
/// BLE carries bare frames and needs none of this.
public enum MeshCoreStreamFraming {
    /// The longest payload the reassembler accepts.
    ///
    /// Above ``MeshCoreFrameLimits/maximumFrameSize`` (176) on purpose: a newer firmware that
    /// sends a somewhat longer frame is still delivered whole (the decoder then reports it),
    /// instead of its header being dropped and the search for a marker resuming inside its
    /// payload. It stays small so a corrupted length cannot make the reassembler wait for, or
    /// buffer, kilobytes of stream.
    public static let maximumFrameLength = 300

    /// Wraps one frame: the direction's marker, the payload's length as u16 little-endian,
    /// then the payload.
    ///
    /// MeshCore frames are never empty (they start with a code byte); an empty payload would
    /// produce a header that `LengthPrefixedReassembler` discards. The payload must be at
    /// most `UInt16.max` bytes.
    public static func frame(_ payload: Data, direction: MeshCoreStreamDirection) -> Data {
        precondition(payload.count <= Int(UInt16.max), "payload exceeds the 16-bit length field")
        var framed = Data(capacity: payload.count + 3)
        framed.append(direction.marker)
        framed.append(UInt8(truncatingIfNeeded: payload.count))
        framed.append(UInt8(truncatingIfNeeded: payload.count >> 8))
        framed.append(payload)
        return framed
    }

    /// A reassembler for frames arriving in `direction` (`.fromRadio` on the app side,
    /// `.toRadio` on the emulated radio's side).
    ///
    /// It skips bytes before a marker, discards headers announcing 0 or more than
    /// ``maximumFrameLength`` bytes, and drops a partial frame that waits longer than
    /// `idleTimeout` for its next byte. `logger` receives the reassembler's notices about
    /// skipped bytes and discarded frames.
    public static func reassembler<I: InstantProtocol>(
        receiving direction: MeshCoreStreamDirection,
        idleTimeout: Duration? = .seconds(2),
        logger: Logger = Logger(label: "meshcore.stream-framing")
    ) -> LengthPrefixedReassembler<I> where I.Duration == Duration {
        LengthPrefixedReassembler<I>(
            endianness: .little,
            marker: direction.marker,
            maxFrameLength: maximumFrameLength,
            idleTimeout: idleTimeout,
            logger: logger)
    }
}
