import Foundation
import Logging

/// An error from encoding a length-prefixed frame.
public enum FramingError: Error, Equatable, Sendable {
    /// The payload does not fit the 16-bit length field.
    ///
    /// - Parameters:
    ///   - length: The payload's length in bytes.
    ///   - max: The longest payload the length field can describe.
    case frameTooLong(length: Int, max: Int)
}

/// Reassembles frames of the form `[optional marker byte][UInt16 length][payload]` from a
/// byte stream delivered in arbitrary chunks.
///
/// BLE notifications and serial reads cut a frame wherever they like, and may pack several
/// frames into one chunk. The reassembler keeps the unfinished frame and returns each
/// payload once all of its bytes are in.
///
/// For example, MeshCore's serial and TCP framing uses the marker `>` (0x3E) for frames
/// from the radio and `<` (0x3C) for frames to it, followed by a little-endian length:
///
/// ```swift
/// var reassembler = LengthPrefixedReassembler<ContinuousClock.Instant>(
///     endianness: .little, marker: 0x3E)
/// let payloads = reassembler.push(chunk, at: .now)
/// ```
///
/// Recovery from bad input:
/// - With a marker, bytes before a marker are skipped and counted in
///   ``skippedByteCount``. A header whose length is 0 or above ``maxFrameLength`` is
///   counted in ``discardedFrameCount``; only its marker byte is dropped and the search
///   for the next marker resumes right after it, so a real frame hiding in the bad
///   header's length bytes is still found.
/// - Without a marker there is nothing to search for, so a bad header makes the
///   reassembler drop the rest of the chunk (counted in ``skippedByteCount``) and expect
///   the next chunk to start a frame.
/// - With an ``idleTimeout``, a partial frame that has waited longer than the timeout
///   for its next byte is dropped when the next chunk arrives, on the assumption that
///   its remaining bytes were lost.
///
/// Memory is bounded: at most the header plus ``maxFrameLength`` bytes are buffered,
/// whatever the input. The reassembler is a value type with no internal
/// synchronisation: give each connection its own instance.
public struct LengthPrefixedReassembler<Instant: InstantProtocol>: Sendable
where Instant.Duration == Duration {
    /// The byte order of the 16-bit length field.
    public enum Endianness: Sendable {
        /// Most significant byte first (network order).
        case big
        /// Least significant byte first.
        case little
    }

    /// The byte order of the length field.
    public let endianness: Endianness
    /// The byte that starts every frame, or `nil` if frames start directly with the length.
    public let marker: UInt8?
    /// The longest payload accepted; longer headers are treated as corruption.
    public let maxFrameLength: Int
    /// How long a partial frame may wait for its next byte, or `nil` to wait forever.
    public let idleTimeout: Duration?

    /// How many frames were dropped: headers announcing a zero or over-long length, and
    /// partial frames abandoned after ``idleTimeout``.
    public private(set) var discardedFrameCount: Int = 0
    /// How many bytes were dropped outside of any frame while resynchronising.
    public private(set) var skippedByteCount: Int = 0

    private var logger: Logger
    /// The unfinished frame, header included. Empty between frames.
    private var buffer: Data
    /// When the last non-empty chunk arrived; the idle timeout is measured from it.
    private var lastByteAt: Instant?

    /// The length of a frame header: the marker, if any, plus the two length bytes.
    private var headerLength: Int { marker == nil ? 2 : 3 }

    /// Creates a reassembler.
    ///
    /// - Parameters:
    ///   - endianness: The byte order of the 16-bit length field.
    ///   - marker: The byte that starts every frame, or `nil` if there is none. A marker
    ///     lets the reassembler resynchronise after garbage.
    ///   - maxFrameLength: The longest payload to accept, from 1 to `UInt16.max`. Headers
    ///     announcing more are treated as corruption. It also bounds memory use.
    ///   - idleTimeout: How long a partial frame may wait for its next byte before it is
    ///     abandoned, or `nil` to wait forever.
    ///   - logger: Receives a warning for each discarded frame and a notice for each run
    ///     of skipped bytes.
    public init(
        endianness: Endianness = .big,
        marker: UInt8? = nil,
        maxFrameLength: Int = 4096,
        idleTimeout: Duration? = .seconds(2),
        logger: Logger = Logger(label: "tether.framing")
    ) {
        precondition(
            (1...Int(UInt16.max)).contains(maxFrameLength),
            "maxFrameLength must be between 1 and \(UInt16.max)")
        if let idleTimeout {
            precondition(idleTimeout >= .zero, "idleTimeout must not be negative")
        }
        self.endianness = endianness
        self.marker = marker
        self.maxFrameLength = maxFrameLength
        self.idleTimeout = idleTimeout
        self.logger = logger
        self.buffer = Data()
    }

    /// The number of bytes of the unfinished frame, header included.
    ///
    /// Never more than ``maxFrameLength`` plus the header (2 bytes, or 3 with a marker).
    public var pendingByteCount: Int { buffer.count }

    /// Feeds the next chunk of the stream and returns every payload it completes.
    ///
    /// - Parameters:
    ///   - chunk: The bytes received, in order; any size, including empty.
    ///   - now: When the chunk arrived. Used only for ``idleTimeout``; pass a
    ///     non-decreasing instant from the same clock each time.
    /// - Returns: The payloads completed by this chunk, in stream order, without headers.
    public mutating func push(_ chunk: Data, at now: Instant) -> [Data] {
        if let idleTimeout, let lastByteAt, !buffer.isEmpty,
            lastByteAt.duration(to: now) > idleTimeout
        {
            discardedFrameCount += 1
            logger.warning(
                "Discarding partial frame after idle timeout",
                metadata: [
                    "pendingBytes": "\(buffer.count)",
                    "idleTimeout": "\(idleTimeout)",
                    "discardedFrameCount": "\(discardedFrameCount)",
                ]
            )
            buffer.removeAll(keepingCapacity: true)
        }

        var payloads: [Data] = []
        chunk.withUnsafeBytes { raw in
            guard let base = raw.baseAddress, !raw.isEmpty else { return }
            lastByteAt = now
            consume(base, count: raw.count, into: &payloads)
        }
        return payloads
    }

    /// The reader paused (its consumer had no room) and reads again at `now`: a partial frame's
    /// wait for its next byte starts again, so the time spent not reading is not taken for the
    /// sender's silence. The bytes that follow were waiting in the socket all along; without
    /// this, a slow consumer's pause longer than ``idleTimeout`` discarded a frame that was
    /// arriving whole.
    public mutating func resumeReading(at now: Instant) {
        if lastByteAt != nil { lastByteAt = now }
    }

    /// Forgets the unfinished frame, for example when the connection drops, so that the
    /// next connection's bytes are not read as the rest of an old frame.
    ///
    /// The discard and skip counters are kept, since they describe the reassembler's history.
    public mutating func reset() {
        buffer.removeAll(keepingCapacity: true)
        lastByteAt = nil
    }

    /// Encodes a payload as one frame.
    ///
    /// An empty payload encodes to a bare header announcing length 0, which
    /// ``LengthPrefixedReassembler`` rejects as corruption; avoid sending one to a peer
    /// that frames the same way.
    ///
    /// - Parameters:
    ///   - payload: The bytes to frame.
    ///   - endianness: The byte order of the 16-bit length field.
    ///   - marker: The byte to put before the length, or `nil` for none.
    /// - Returns: The header followed by the payload.
    /// - Throws: ``FramingError/frameTooLong(length:max:)`` if the payload is longer than
    ///   `UInt16.max` bytes.
    public static func frame(
        _ payload: Data, endianness: Endianness = .big, marker: UInt8? = nil
    ) throws -> Data {
        guard payload.count <= Int(UInt16.max) else {
            throw FramingError.frameTooLong(length: payload.count, max: Int(UInt16.max))
        }
        let length = UInt16(payload.count)
        var frame = Data(capacity: 3 + payload.count)
        if let marker { frame.append(marker) }
        switch endianness {
        case .big:
            frame.append(UInt8(truncatingIfNeeded: length >> 8))
            frame.append(UInt8(truncatingIfNeeded: length))
        case .little:
            frame.append(UInt8(truncatingIfNeeded: length))
            frame.append(UInt8(truncatingIfNeeded: length >> 8))
        }
        frame.append(payload)
        return frame
    }

    // MARK: - Parsing

    /// Runs the input through the frame state machine. Bytes are copied into `buffer` only
    /// as far as the current frame needs them, which is what keeps memory bounded even for
    /// huge chunks.
    private mutating func consume(
        _ base: UnsafeRawPointer, count: Int, into payloads: inout [Data]
    ) {
        var index = 0
        while index < count {
            if buffer.isEmpty, let marker {
                guard let hit = memchr(base + index, Int32(marker), count - index) else {
                    noteSkipped(count - index)
                    return
                }
                let markerIndex = UnsafeRawPointer(hit) - base
                if markerIndex > index { noteSkipped(markerIndex - index) }
                index = markerIndex
            }

            if buffer.count < headerLength {
                let take = min(headerLength - buffer.count, count - index)
                append(base, from: index, count: take)
                index += take
                if buffer.count < headerLength { return }
            }

            let length = announcedLength()
            guard length > 0 && length <= maxFrameLength else {
                discardedFrameCount += 1
                logger.warning(
                    "Discarding frame with invalid length",
                    metadata: [
                        "length": "\(length)",
                        "maxFrameLength": "\(maxFrameLength)",
                        "discardedFrameCount": "\(discardedFrameCount)",
                    ]
                )
                if marker != nil {
                    // The length bytes may themselves hold the next real marker, so they go
                    // back through the search rather than being thrown away.
                    let rest = Data(buffer.dropFirst())
                    buffer.removeAll(keepingCapacity: true)
                    rest.withUnsafeBytes { raw in
                        consume(raw.baseAddress!, count: raw.count, into: &payloads)
                    }
                } else {
                    buffer.removeAll(keepingCapacity: true)
                    if count > index { noteSkipped(count - index) }
                    return
                }
                continue
            }

            let have = buffer.count - headerLength
            let take = min(length - have, count - index)
            if have == 0 && take == length {
                // The whole payload is in this chunk: skip the intermediate copy.
                payloads.append(Data(bytes: base + index, count: length))
                buffer.removeAll(keepingCapacity: true)
            } else {
                append(base, from: index, count: take)
                if buffer.count == headerLength + length {
                    payloads.append(buffer.subdata(in: headerLength..<buffer.count))
                    buffer.removeAll(keepingCapacity: true)
                }
            }
            index += take
        }
    }

    private mutating func append(_ base: UnsafeRawPointer, from: Int, count: Int) {
        buffer.append(base.assumingMemoryBound(to: UInt8.self) + from, count: count)
    }

    /// Reads the length field of the complete header at the start of `buffer`.
    private func announcedLength() -> Int {
        let first = buffer.startIndex + (marker == nil ? 0 : 1)
        let a = Int(buffer[first])
        let b = Int(buffer[first + 1])
        switch endianness {
        case .big: return a << 8 | b
        case .little: return b << 8 | a
        }
    }

    private mutating func noteSkipped(_ byteCount: Int) {
        skippedByteCount += byteCount
        logger.notice(
            "Skipped bytes outside of a frame while resynchronising",
            metadata: [
                "skippedBytes": "\(byteCount)",
                "skippedByteCount": "\(skippedByteCount)",
            ]
        )
    }
}
