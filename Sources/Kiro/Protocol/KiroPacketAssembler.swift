import Foundation

/// Why the device rejected (part of) what it received.
public enum KiroPacketError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A complete packet whose type byte is not a known command; it was skipped by its length.
    case unknownType(UInt8)
    /// The bytes do not form a valid packet or payload (the reason).
    case malformed(String)
    /// The packet's CRC-16 does not match its payload.
    case checksumMismatch
    /// A partial packet was dropped after the idle timeout passed without its remaining bytes.
    case timedOut

    /// A short phrase for logs.
    public var description: String {
        switch self {
        case .unknownType(let type): "unknown command type 0x\(String(type, radix: 16, uppercase: true))"
        case .malformed(let reason): "malformed packet: \(reason)"
        case .checksumMismatch: "checksum mismatch"
        case .timedOut: "partial packet timed out"
        }
    }
}

/// Reassembles commands from the writes the device receives (firmware-facts: long packets).
///
/// The app sends a packet in one write when it fits, or slices it into consecutive writes; one
/// write may also carry several packets. The header's length says where each packet ends.
/// This is the device's side of the link, used by the emulator.
///
/// Recovery:
/// - A partial packet that sees no new byte for at least ``idleTimeout`` is dropped and
///   reported as ``KiroPacketError/timedOut`` on the next ``push(_:at:)`` (push empty data to
///   poll). The write that follows starts a new packet.
/// - A header announcing more than ``maxPacketLength`` bytes cannot be trusted, and without a
///   start marker there is no way to resynchronise inside the write, so the rest of the buffered
///   bytes is dropped and reported as ``KiroPacketError/malformed(_:)``.
/// - A complete packet with an unknown type is skipped by its length and reported as
///   ``KiroPacketError/unknownType(_:)``, so newer commands do not desynchronise the stream.
///
/// At most ``maxPacketLength`` bytes stay buffered between pushes.
public struct KiroPacketAssembler: Sendable {
    /// Whether packets carry a trailing CRC-16/CCITT-FALSE of the payload.
    public let checksum: Bool
    /// Silence after which a partial packet is abandoned.
    public let idleTimeout: Duration
    /// The longest whole packet accepted: header, payload and checksum.
    public let maxPacketLength: Int

    private var buffer: [UInt8] = []
    private var lastByteAt: Duration?

    /// Creates an assembler.
    ///
    /// - Parameters:
    ///   - checksum: Whether each packet ends with the payload's CRC-16 (big-endian).
    ///   - idleTimeout: Silence after which a partial packet is dropped (2 s on the device).
    ///   - maxPacketLength: The longest whole packet accepted; raised to fit at least a header.
    public init(checksum: Bool = false, idleTimeout: Duration = .seconds(2), maxPacketLength: Int = 4096) {
        self.checksum = checksum
        self.idleTimeout = idleTimeout
        self.maxPacketLength = max(maxPacketLength, 3 + (checksum ? 2 : 0))
    }

    /// Bytes of an unfinished packet waiting for the rest.
    public var bufferedByteCount: Int { buffer.count }

    /// Feeds the bytes of one write received at `now` (any monotonic time base) and returns
    /// every packet it completes, in order, with the errors met on the way.
    public mutating func push(_ data: Data, at now: Duration) -> [Result<KiroCommand, KiroPacketError>] {
        var results: [Result<KiroCommand, KiroPacketError>] = []
        if !buffer.isEmpty, let last = lastByteAt, now - last >= idleTimeout {
            buffer.removeAll()
            results.append(.failure(.timedOut))
        }
        // Empty data is a poll: it may expire a partial packet but is not activity.
        guard !data.isEmpty else { return results }
        buffer.append(contentsOf: data)
        lastByteAt = now

        let trailer = checksum ? 2 : 0
        var start = 0
        while buffer.count - start >= 3 {
            let type = buffer[start]
            let length = Int(buffer[start + 1]) << 8 | Int(buffer[start + 2])
            let total = 3 + length + trailer
            guard total <= maxPacketLength else {
                results.append(.failure(.malformed(
                    "a \(total)-byte packet exceeds the \(maxPacketLength)-byte limit; dropped \(buffer.count - start) bytes")))
                start = buffer.count
                break
            }
            guard buffer.count - start >= total else { break }
            let payload = buffer[start + 3..<start + 3 + length]
            let crcOffset = start + 3 + length
            start += total
            if checksum {
                let sent = UInt16(buffer[crcOffset]) << 8 | UInt16(buffer[crcOffset + 1])
                guard CRC16.ccittFalse(bytes: payload) == sent else {
                    results.append(.failure(.checksumMismatch))
                    continue
                }
            }
            results.append(Self.decode(type: type, payload: Data(payload)))
        }
        buffer.removeFirst(start)
        return results
    }

    /// Drops any partial packet, as after a disconnection.
    public mutating func reset() {
        buffer.removeAll()
        lastByteAt = nil
    }

    private static func decode(type: UInt8, payload: Data) -> Result<KiroCommand, KiroPacketError> {
        do {
            return .success(try KiroCommand.decode(type: type, payload: payload))
        } catch let error as KiroPacketError {
            return .failure(error)
        } catch {
            return .failure(.malformed(String(describing: error)))
        }
    }
}
