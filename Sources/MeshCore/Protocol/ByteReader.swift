import Foundation

/// Reads little-endian fields from one MeshCore frame.
///
/// Offsets are relative to the frame's `startIndex`, so slices of a larger `Data` are safe.
/// Every read that runs past the end throws ``MeshCoreDecodeError/truncated(code:needed:got:)``
/// naming the frame's code byte, how many bytes the frame needed and how many it had.
struct ByteReader {
    /// The whole frame, code byte included.
    let frame: Data
    /// The frame's code byte, reported in errors.
    let code: UInt8
    /// The next byte to read, relative to `frame.startIndex`.
    private(set) var offset: Int

    /// Creates a reader positioned just after the code byte.
    init(_ frame: Data, code: UInt8, offset: Int = 1) {
        self.frame = frame
        self.code = code
        self.offset = offset
    }

    /// The number of bytes not read yet.
    var remaining: Int { max(0, frame.count - offset) }

    /// Whether every byte has been read.
    var isAtEnd: Bool { remaining == 0 }

    /// Throws unless `count` more bytes are available.
    func require(_ count: Int) throws(MeshCoreDecodeError) {
        guard count >= 0, remaining >= count else {
            throw .truncated(code: code, needed: offset + max(count, 0), got: frame.count)
        }
    }

    mutating func u8() throws(MeshCoreDecodeError) -> UInt8 {
        try require(1)
        let value = frame[frame.startIndex + offset]
        offset += 1
        return value
    }

    mutating func i8() throws(MeshCoreDecodeError) -> Int8 {
        Int8(bitPattern: try u8())
    }

    mutating func u16() throws(MeshCoreDecodeError) -> UInt16 {
        try require(2)
        let base = frame.startIndex + offset
        offset += 2
        return UInt16(frame[base]) | UInt16(frame[base + 1]) << 8
    }

    mutating func u32() throws(MeshCoreDecodeError) -> UInt32 {
        try require(4)
        let base = frame.startIndex + offset
        offset += 4
        var value: UInt32 = 0
        for index in 0..<4 {
            value |= UInt32(frame[base + index]) << (8 * UInt32(index))
        }
        return value
    }

    mutating func i32() throws(MeshCoreDecodeError) -> Int32 {
        Int32(bitPattern: try u32())
    }

    /// The next `count` bytes, as a new `Data` indexed from zero.
    mutating func bytes(_ count: Int) throws(MeshCoreDecodeError) -> Data {
        try require(count)
        let base = frame.startIndex + offset
        offset += count
        return Data(frame[base..<(base + count)])
    }

    /// Every byte not read yet (possibly none), as a new `Data` indexed from zero.
    mutating func rest() -> Data {
        let count = remaining
        let base = frame.startIndex + min(offset, frame.count)
        offset += count
        return Data(frame[base..<(base + count)])
    }

    /// A fixed-width, NUL-padded string field: cut at the first NUL, decoded leniently.
    mutating func string(fixed width: Int) throws(MeshCoreDecodeError) -> String {
        MeshCoreText.decode(nulPadded: try bytes(width))
    }

    /// The rest of the frame as text, decoded leniently.
    mutating func restString() -> String {
        String(decoding: rest(), as: UTF8.self)
    }
}

/// Builds a MeshCore frame from little-endian fields.
struct ByteWriter {
    /// The bytes written so far.
    private(set) var data: Data

    /// Creates a writer, optionally starting with a code byte.
    init(code: UInt8? = nil, capacity: Int = 32) {
        data = Data(capacity: capacity)
        if let code { data.append(code) }
    }

    mutating func u8(_ value: UInt8) {
        data.append(value)
    }

    mutating func i8(_ value: Int8) {
        data.append(UInt8(bitPattern: value))
    }

    mutating func bool(_ value: Bool) {
        data.append(value ? 1 : 0)
    }

    mutating func u16(_ value: UInt16) {
        data.append(UInt8(truncatingIfNeeded: value))
        data.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    mutating func u32(_ value: UInt32) {
        for index in 0..<4 {
            data.append(UInt8(truncatingIfNeeded: value >> (8 * UInt32(index))))
        }
    }

    mutating func i32(_ value: Int32) {
        u32(UInt32(bitPattern: value))
    }

    mutating func bytes(_ value: Data) {
        data.append(value)
    }

    /// Writes exactly `width` bytes: `value` cut to `width`, or padded with zeros.
    mutating func bytes(_ value: Data, fixed width: Int) {
        let kept = value.prefix(width)
        data.append(kept)
        if kept.count < width {
            data.append(Data(count: width - kept.count))
        }
    }

    /// Writes the whole string as UTF-8, without a terminator.
    mutating func string(_ value: String) {
        data.append(contentsOf: Array(value.utf8))
    }

    /// Writes a fixed-width, NUL-padded string field, truncating on a character boundary.
    mutating func string(_ value: String, fixed width: Int) {
        bytes(MeshCoreText.utf8(value, maxBytes: width), fixed: width)
    }
}

/// Text helpers shared by the codecs.
package enum MeshCoreText {
    /// Decodes a NUL-padded field: everything before the first NUL, as lenient UTF-8.
    package static func decode(nulPadded bytes: Data) -> String {
        let end = bytes.firstIndex(of: 0) ?? bytes.endIndex
        return String(decoding: bytes[bytes.startIndex..<end], as: UTF8.self)
    }

    /// The UTF-8 bytes of the longest prefix of `text`, made of whole characters, that fits in
    /// `maxBytes`. A character is never split, so neither is any UTF-8 sequence.
    package static func utf8(_ text: String, maxBytes: Int) -> Data {
        var result = Data()
        for character in text {
            let encoded = character.utf8
            guard result.count + encoded.count <= maxBytes else { break }
            result.append(contentsOf: Array(encoded))
        }
        return result
    }
}

/// Conversions between the wire's fixed-point integers and `Double`.
package enum MeshCoreFixedPoint {
    /// `value × scale`, rounded and clamped to `Int32` (0 for NaN).
    package static func int32(_ value: Double, scale: Double) -> Int32 {
        let scaled = (value * scale).rounded()
        guard !scaled.isNaN else { return 0 }
        if scaled >= Double(Int32.max) { return .max }
        if scaled <= Double(Int32.min) { return .min }
        return Int32(scaled)
    }

    /// `value × scale`, rounded and clamped to `UInt32` (0 for NaN).
    package static func uint32(_ value: Double, scale: Double) -> UInt32 {
        let scaled = (value * scale).rounded()
        guard !scaled.isNaN else { return 0 }
        if scaled >= Double(UInt32.max) { return .max }
        if scaled <= 0 { return 0 }
        return UInt32(scaled)
    }

    /// `value × scale`, rounded and clamped to `Int8` (0 for NaN).
    package static func int8(_ value: Double, scale: Double) -> Int8 {
        let scaled = (value * scale).rounded()
        guard !scaled.isNaN else { return 0 }
        if scaled >= Double(Int8.max) { return .max }
        if scaled <= Double(Int8.min) { return .min }
        return Int8(scaled)
    }
}
