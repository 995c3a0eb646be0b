import Foundation

/// A Bluetooth UUID: 16-, 32- or 128-bit.
///
/// Short UUIDs are aliases inside the Bluetooth Base UUID
/// (`0000xxxx-0000-1000-8000-00805F9B34FB`), so `BluetoothUUID("180A")` equals
/// `BluetoothUUID("0000180A-0000-1000-8000-00805F9B34FB")`. Values are stored as 128 bits and
/// printed in their shortest canonical upper-case form, as CoreBluetooth's `CBUUID` does.
public struct BluetoothUUID: Hashable, Sendable, Comparable {
    /// The most significant 64 bits of the 128-bit value.
    public let high: UInt64
    /// The least significant 64 bits of the 128-bit value.
    public let low: UInt64

    /// The Bluetooth Base UUID's low half; every 16/32-bit alias shares it.
    static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB
    static let baseHighSuffix: UInt64 = 0x0000_1000

    /// Creates a UUID from its 128-bit value.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Creates a 16-bit UUID (for example `0x180A`, Device Information).
    public init(_ short: UInt16) {
        self.init(UInt32(short))
    }

    /// Creates a 32-bit UUID.
    public init(_ value: UInt32) {
        self.init(high: UInt64(value) << 32 | Self.baseHighSuffix, low: Self.baseLow)
    }

    /// Creates a UUID from a Foundation `UUID`.
    public init(_ uuid: UUID) {
        let t = uuid.uuid
        let bytes = [t.0, t.1, t.2, t.3, t.4, t.5, t.6, t.7, t.8, t.9, t.10, t.11, t.12, t.13, t.14, t.15]
        self.init(bytes: bytes)!
    }

    /// Creates a UUID from 2, 4 or 16 big-endian bytes; nil for any other length.
    public init?(bytes: some Collection<UInt8>) {
        let b = Array(bytes)
        switch b.count {
        case 2: self.init(UInt16(b[0]) << 8 | UInt16(b[1]))
        case 4: self.init(b.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        case 16:
            self.init(
                high: b[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) },
                low: b[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        default: return nil
        }
    }

    /// Parses `"180A"`, `"0x180A"`, `"0000FEED"` or the 36-character dashed form (any case).
    /// Returns nil for anything else.
    public init?(string: String) {
        var s = Substring(string.trimmingCharacters(in: .whitespaces))
        if s.hasPrefix("0x") || s.hasPrefix("0X") { s = s.dropFirst(2) }
        switch s.count {
        case 4:
            guard let v = UInt16(s, radix: 16), s.allSatisfy(\.isHexDigit) else { return nil }
            self.init(v)
        case 8:
            guard let v = UInt32(s, radix: 16), s.allSatisfy(\.isHexDigit) else { return nil }
            self.init(v)
        case 36:
            let groups = s.split(separator: "-", omittingEmptySubsequences: false)
            guard groups.map(\.count) == [8, 4, 4, 4, 12] else { return nil }
            let hex = groups.joined()
            guard hex.allSatisfy(\.isHexDigit),
                  let hi = UInt64(hex.prefix(16), radix: 16),
                  let lo = UInt64(hex.suffix(16), radix: 16) else { return nil }
            self.init(high: hi, low: lo)
        default:
            return nil
        }
    }

    /// True when the value lies inside the Bluetooth Base UUID (a 16- or 32-bit alias).
    public var isBaseAlias: Bool {
        low == Self.baseLow && high & 0xFFFF_FFFF == Self.baseHighSuffix
    }

    /// The 16-bit alias, if this UUID has one.
    public var shortValue: UInt16? {
        guard isBaseAlias, high >> 32 <= 0xFFFF else { return nil }
        return UInt16(high >> 32)
    }

    /// The 16 big-endian bytes of the full 128-bit value.
    public var bytes128: [UInt8] {
        (0..<8).reversed().map { UInt8(truncatingIfNeeded: high >> (UInt64($0) * 8)) }
            + (0..<8).reversed().map { UInt8(truncatingIfNeeded: low >> (UInt64($0) * 8)) }
    }

    /// The shortest form's big-endian bytes (2, 4 or 16), as carried in advertisements.
    public var data: Data {
        if let short = shortValue { return Data([UInt8(short >> 8), UInt8(short & 0xFF)]) }
        if isBaseAlias {
            let v = UInt32(high >> 32)
            return Data([24, 16, 8, 0].map { UInt8(truncatingIfNeeded: v >> $0) })
        }
        return Data(bytes128)
    }

    /// The Foundation `UUID` with the same 128-bit value.
    public var foundationUUID: UUID {
        let b = bytes128
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                           b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }

    /// Canonical upper-case text: 4 or 8 hex digits for aliases, the dashed 36-character form otherwise.
    public var uuidString: String {
        if let short = shortValue { return hex(UInt64(short), digits: 4) }
        if isBaseAlias { return hex(high >> 32, digits: 8) }
        let h = hex(high, digits: 16), l = hex(low, digits: 16)
        return "\(h.prefix(8))-\(h.dropFirst(8).prefix(4))-\(h.suffix(4))-\(l.prefix(4))-\(l.suffix(12))"
    }

    /// The full dashed 36-character upper-case form, even for aliases.
    public var longString: String {
        let h = hex(high, digits: 16), l = hex(low, digits: 16)
        return "\(h.prefix(8))-\(h.dropFirst(8).prefix(4))-\(h.suffix(4))-\(l.prefix(4))-\(l.suffix(12))"
    }

    private func hex(_ v: UInt64, digits: Int) -> String {
        let s = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - s.count)) + s
    }

    public static func < (a: Self, b: Self) -> Bool { (a.high, a.low) < (b.high, b.low) }
}

extension BluetoothUUID: CustomStringConvertible {
    public var description: String { uuidString }
}

extension BluetoothUUID: ExpressibleByStringLiteral {
    /// Literal UUIDs are written by programmers, so a malformed one is a programming error.
    public init(stringLiteral value: String) {
        guard let uuid = BluetoothUUID(string: value) else {
            preconditionFailure("Invalid Bluetooth UUID literal: \(value)")
        }
        self = uuid
    }
}

extension BluetoothUUID: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let uuid = BluetoothUUID(string: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "Not a Bluetooth UUID: \(text)")
        }
        self = uuid
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(uuidString)
    }
}
