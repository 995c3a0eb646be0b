import Foundation

/// Big-endian integers of 1 to 4 bytes, as Cayenne LPP and the sensors' min/max/average
/// carry them (the rest of the protocol is little-endian).
enum BigEndianInteger {
    /// The integer `bytes` hold, sign-extended when `signed`.
    static func read(_ bytes: some Collection<UInt8>, signed: Bool) -> Int64 {
        var value: Int64 = 0
        for byte in bytes { value = value << 8 | Int64(byte) }
        let bits = Int64(bytes.count * 8)
        if signed, bits > 0, value & (1 << (bits - 1)) != 0 { value -= 1 << bits }
        return value
    }

    /// `value` rounded and clamped to what `width` bytes hold (0 for NaN), big-endian.
    static func write(_ value: Double, width: Int, signed: Bool) -> Data {
        let bits = Int64(width * 8)
        let lower: Int64 = signed ? -(1 << (bits - 1)) : 0
        let upper: Int64 = signed ? (1 << (bits - 1)) - 1 : (1 << bits) - 1
        let rounded = value.rounded()
        let clamped = rounded.isNaN ? 0 : min(max(rounded, Double(lower)), Double(upper))
        let integer = UInt64(bitPattern: Int64(clamped))
        return Data((0..<width).reversed().map { UInt8(truncatingIfNeeded: integer >> (8 * UInt64($0))) })
    }
}
