import Foundation

/// Length-prefixed UTF-8 strings as the Kiro protocol carries them (§3.2).
public enum KiroString {
    /// The most bytes a string can carry: its length prefix is a single byte.
    public static let maxBytes = 255

    /// The longest prefix of `string` with at most `maxCharacters` characters and at most
    /// `maxBytes` UTF-8 bytes.
    ///
    /// Cuts only between `Character`s (grapheme clusters), so it never splits a UTF-8 sequence
    /// or an emoji: the device would otherwise render a broken glyph. Equivalent to truncating
    /// to `maxCharacters` and then dropping whole characters from the end until the bytes fit.
    public static func truncated(_ string: String, maxCharacters: Int, maxBytes: Int = maxBytes) -> String {
        var characters = 0
        var bytes = 0
        var end = string.startIndex
        while end < string.endIndex, characters < maxCharacters {
            let next = string.index(after: end)
            let size = string.utf8.distance(from: end, to: next)
            // Byte counts only grow with the prefix, so the first overflow ends it.
            guard bytes + size <= maxBytes else { break }
            bytes += size
            characters += 1
            end = next
        }
        return String(string[..<end])
    }

    /// `[length][UTF-8 bytes]` for `string` truncated to `maxCharacters` characters and 255 bytes.
    public static func encode(_ string: String, maxCharacters: Int) -> Data {
        Data(bytes(string, maxCharacters: maxCharacters))
    }

    /// The encoded form as an array, for building packets without intermediate `Data`s.
    static func bytes(_ string: String, maxCharacters: Int) -> [UInt8] {
        let body = Array(truncated(string, maxCharacters: maxCharacters).utf8)
        return [UInt8(body.count)] + body
    }

    /// The string for `bytes` if they are well-formed UTF-8, else nil (no repair, so a corrupt
    /// packet is noticed rather than shown with replacement characters).
    static func decodeUTF8(_ bytes: ArraySlice<UInt8>) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        return text.utf8.elementsEqual(bytes) ? text : nil
    }
}

/// CRC-16 checksums.
public enum CRC16 {
    /// CRC-16/CCITT-FALSE: polynomial 0x1021, initial value 0xFFFF, no reflection, no final XOR.
    ///
    /// Later Kiro firmware appends it, big-endian, after the payload (Appendix B). The check
    /// value for the ASCII bytes of `"123456789"` is `0x29B1`.
    public static func ccittFalse(_ data: Data) -> UInt16 {
        ccittFalse(bytes: data)
    }

    /// CRC-16/CCITT-FALSE over any byte sequence.
    public static func ccittFalse(bytes: some Sequence<UInt8>) -> UInt16 {
        var crc: UInt16 = 0xFFFF
        for byte in bytes {
            crc = (crc << 8) ^ table[Int((crc >> 8) ^ UInt16(byte))]
        }
        return crc
    }

    /// One table lookup per byte instead of eight shifts; day packs are a few kilobytes.
    private static let table: [UInt16] = (0..<256).map { index in
        var value = UInt16(index) << 8
        for _ in 0..<8 {
            value = value & 0x8000 != 0 ? (value << 1) ^ 0x1021 : value << 1
        }
        return value
    }
}

/// Appends big-endian fields to a payload.
struct KiroByteWriter {
    private(set) var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) {
        bytes.append(value)
    }

    mutating func bool(_ value: Bool) {
        bytes.append(value ? 0x01 : 0x00)
    }

    mutating func u16(_ value: UInt16) {
        bytes.append(UInt8(value >> 8))
        bytes.append(UInt8(value & 0xFF))
    }

    mutating func raw(_ values: some Sequence<UInt8>) {
        bytes.append(contentsOf: values)
    }

    mutating func string(_ value: String, maxCharacters: Int) {
        bytes.append(contentsOf: KiroString.bytes(value, maxCharacters: maxCharacters))
    }
}

/// Reads big-endian fields from a payload, throwing ``KiroPacketError/malformed(_:)`` instead
/// of reading past the end, so no input can crash it.
struct KiroByteReader {
    private let bytes: [UInt8]
    private(set) var offset = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var remaining: Int { bytes.count - offset }

    mutating func u8(_ field: String) throws -> UInt8 {
        guard remaining >= 1 else { throw KiroPacketError.malformed("\(field) is missing at offset \(offset)") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u16(_ field: String) throws -> UInt16 {
        let high = try u8(field)
        let low = try u8(field)
        return UInt16(high) << 8 | UInt16(low)
    }

    mutating func bool(_ field: String) throws -> Bool {
        let start = offset
        switch try u8(field) {
        case 0x00: return false
        case 0x01: return true
        case let other: throw KiroPacketError.malformed("\(field) at offset \(start) is \(other), not 0 or 1")
        }
    }

    mutating func raw(_ count: Int, _ field: String) throws -> ArraySlice<UInt8> {
        guard count >= 0, remaining >= count else {
            throw KiroPacketError.malformed("\(field) needs \(count) bytes at offset \(offset), \(remaining) left")
        }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    mutating func string(_ field: String) throws -> String {
        let length = Int(try u8("\(field) length"))
        let start = offset
        guard let text = KiroString.decodeUTF8(try raw(length, field)) else {
            throw KiroPacketError.malformed("\(field) at offset \(start) is not valid UTF-8")
        }
        return text
    }

    func finish() throws {
        guard remaining == 0 else {
            throw KiroPacketError.malformed("\(remaining) unexpected bytes after the payload")
        }
    }
}
