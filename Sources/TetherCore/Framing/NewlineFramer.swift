import Foundation
import Logging

/// Splits a byte stream into newline-terminated lines.
///
/// Text protocols over BLE (for example a dynamometer notifying `"R:1234\n"`) deliver
/// their lines in arbitrary notification-sized chunks: one chunk may carry several lines,
/// and one line may span several chunks. `NewlineFramer` buffers the unfinished tail and
/// hands back every line as soon as its terminator arrives.
///
/// Framing rules:
/// - A line ends at `\n` (0x0A). The terminator is not part of the returned line.
/// - A single `\r` (0x0D) immediately before the `\n` is stripped too, even when the
///   `\r` and the `\n` arrive in different chunks. A `\r` anywhere else is kept.
/// - Empty lines are returned as empty `Data`; callers that do not care filter them out.
/// - A line whose content (excluding the terminator) is longer than
///   ``maxLineLength`` is discarded as a whole, counted in ``discardedLineCount`` and
///   logged once; framing resumes with the byte after its `\n`.
///
/// Splitting happens on bytes, and text is decoded only once a line is complete, so a
/// multi-byte UTF-8 character split across two chunks is decoded intact.
///
/// The framer is a value type with no internal synchronisation: give each connection
/// its own instance and drive it from one place.
public struct NewlineFramer: Sendable {
    /// The longest line, in bytes and excluding its terminator, that is delivered.
    public let maxLineLength: Int

    /// How many over-long lines were thrown away since this framer was created.
    public private(set) var discardedLineCount: Int = 0

    /// What a chunk completes, in stream order: lines, and the places where an over-long line
    /// was thrown away (so a consumer can report it where it was, not lose it silently).
    public enum Piece: Sendable, Hashable {
        /// A complete line, without its terminator.
        case line(Data)
        /// A line longer than ``NewlineFramer/maxLineLength`` was discarded; at least
        /// `seenBytes` of it had arrived when it was.
        case overlongLine(seenBytes: Int)
    }

    /// Filled while a chunk is scanned, handed out by ``pushPieces(_:)``.
    private var collected: [Piece] = []

    private var logger: Logger
    /// Bytes of the unfinished line. Never longer than `maxLineLength`.
    private var buffer: Data
    /// A `\r` that ended the previous chunk. Held aside because only the next byte tells
    /// whether it is part of a `\r\n` terminator or of the line's content.
    private var heldCarriageReturn = false
    /// True while skipping the rest of an over-long line up to its `\n`.
    private var discarding = false

    private static let lineFeed: UInt8 = 0x0A
    private static let carriageReturn: UInt8 = 0x0D

    /// Creates a framer.
    ///
    /// - Parameters:
    ///   - maxLineLength: The longest line, in bytes and excluding the terminator, to
    ///     deliver. Longer lines are discarded; this also bounds the framer's memory.
    ///     Must be at least 1.
    ///   - logger: Receives a warning for each discarded line.
    public init(maxLineLength: Int = 1024, logger: Logger = Logger(label: "tether.framing")) {
        precondition(maxLineLength > 0, "maxLineLength must be positive")
        self.maxLineLength = maxLineLength
        self.logger = logger
        // Sized for typical lines up front; removeAll(keepingCapacity:) then reuses it.
        self.buffer = Data(capacity: min(maxLineLength, 256))
    }

    /// The number of bytes received but not yet returned as part of a line.
    ///
    /// At most ``maxLineLength``, plus one while a full-length line's `\r` waits for the
    /// `\n` that may follow it. Bytes of a line being discarded are not counted.
    public var pendingByteCount: Int {
        buffer.count + (heldCarriageReturn ? 1 : 0)
    }

    /// Feeds the next chunk of the stream and returns every line it completes.
    ///
    /// - Parameter chunk: The bytes received, in order; any size, including empty.
    /// - Returns: The completed lines in stream order, each without its `\n` or `\r\n`.
    ///   Empty lines are included as empty `Data`.
    public mutating func push(_ chunk: Data) -> [Data] {
        pushPieces(chunk).compactMap { if case .line(let line) = $0 { line } else { nil } }
    }

    /// Feeds the next chunk of the stream and returns every line it completes and every
    /// over-long line it discarded, in stream order.
    public mutating func pushPieces(_ chunk: Data) -> [Piece] {
        chunk.withUnsafeBytes { raw in
            guard let base = raw.baseAddress, !raw.isEmpty else { return }
            process(base, count: raw.count)
        }
        defer { collected.removeAll(keepingCapacity: true) }
        return collected
    }

    /// Feeds the next chunk of the stream and returns every line it completes as text.
    ///
    /// Lines are decoded as UTF-8; invalid sequences become U+FFFD rather than failing,
    /// because a corrupt line from a device should not stop the stream.
    ///
    /// - Parameter chunk: The bytes received, in order; any size, including empty.
    /// - Returns: The completed lines in stream order, without terminators. Empty lines
    ///   are included as empty strings.
    public mutating func pushLines(_ chunk: Data) -> [String] {
        push(chunk).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Forgets the unfinished line, for example when the connection drops, so that the
    /// next connection's first line is not glued onto the old one's tail.
    ///
    /// ``discardedLineCount`` is kept, since it describes the framer's history.
    public mutating func reset() {
        buffer.removeAll(keepingCapacity: true)
        heldCarriageReturn = false
        discarding = false
    }

    // MARK: - Scanning

    private mutating func process(_ base: UnsafeRawPointer, count: Int) {
        var start = 0

        if heldCarriageReturn {
            heldCarriageReturn = false
            if base.load(as: UInt8.self) == Self.lineFeed {
                // The held `\r` was a terminator: the buffer holds a complete line.
                finishLine(base, from: 0, to: 0)
                start = 1
            } else {
                // A lone `\r` is ordinary content.
                withUnsafeBytes(of: Self.carriageReturn) { cr in
                    appendPartial(cr.baseAddress!, from: 0, to: 1)
                }
            }
        }

        while start < count {
            // memchr is vectorised; it is what keeps large streams of short lines fast.
            guard let hit = memchr(base + start, Int32(Self.lineFeed), count - start) else {
                appendTail(base, from: start, to: count)
                return
            }
            let newline = UnsafeRawPointer(hit) - base
            if discarding {
                discarding = false
            } else {
                var end = newline
                if end > start && base.load(fromByteOffset: end - 1, as: UInt8.self) == Self.carriageReturn {
                    end -= 1
                }
                finishLine(base, from: start, to: end)
            }
            start = newline + 1
        }
    }

    /// Emits `buffer + base[from..<to]` as a line, or discards it if it is too long.
    private mutating func finishLine(_ base: UnsafeRawPointer, from: Int, to: Int) {
        let length = buffer.count + (to - from)
        if length > maxLineLength {
            noteDiscardedLine(length: length)
        } else if buffer.isEmpty {
            collected.append(.line(Data(bytes: base + from, count: to - from)))
        } else {
            // Copy out rather than hand over `buffer`, so its storage is reused for the
            // next partial line instead of being reallocated.
            var line = Data(capacity: length)
            line.append(buffer)
            line.append(base.assumingMemoryBound(to: UInt8.self) + from, count: to - from)
            collected.append(.line(line))
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Buffers the unterminated end of a chunk.
    private mutating func appendTail(_ base: UnsafeRawPointer, from: Int, to: Int) {
        guard !discarding, to > from else { return }
        var end = to
        if base.load(fromByteOffset: end - 1, as: UInt8.self) == Self.carriageReturn {
            heldCarriageReturn = true
            end -= 1
        }
        appendPartial(base, from: from, to: end)
    }

    /// Adds bytes to the unfinished line, switching to discard mode if it grows too long.
    private mutating func appendPartial(_ base: UnsafeRawPointer, from: Int, to: Int) {
        let length = buffer.count + (to - from)
        if length > maxLineLength {
            noteDiscardedLine(length: length)
            buffer.removeAll(keepingCapacity: true)
            // The held `\r` belongs to the discarded line, not to a terminator we care about.
            heldCarriageReturn = false
            discarding = true
            return
        }
        buffer.append(base.assumingMemoryBound(to: UInt8.self) + from, count: to - from)
    }

    private mutating func noteDiscardedLine(length: Int) {
        discardedLineCount += 1
        collected.append(.overlongLine(seenBytes: length))
        logger.warning(
            "Discarding line longer than the maximum",
            metadata: [
                "seenBytes": "\(length)",
                "maxLineLength": "\(maxLineLength)",
                "discardedLineCount": "\(discardedLineCount)",
            ]
        )
    }
}
