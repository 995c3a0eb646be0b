import Foundation

extension Data {
    /// Lower-case hex, two digits per byte and nothing between them (how keys and key prefixes
    /// are shown and stored).
    package var hexString: String { hexString(separator: "") }

    /// Hex, two digits per byte, with `separator` between bytes.
    package func hexString(separator: String, uppercase: Bool = false) -> String {
        let digits: [UInt8] = Array((uppercase ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
        var text = ""
        text.reserveCapacity(count * (2 + separator.utf8.count))
        for (index, byte) in enumerated() {
            if index > 0 { text += separator }
            text.unicodeScalars.append(Unicode.Scalar(digits[Int(byte >> 4)]))
            text.unicodeScalars.append(Unicode.Scalar(digits[Int(byte & 0x0F)]))
        }
        return text
    }

    /// Bytes from a hex string without separators, either case (nil on an odd length or a
    /// character that is not a hex digit).
    package init?(hexString: String) {
        let digits = Array(hexString.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = Self.nibble(digits[index]), let low = Self.nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        self.init(bytes)
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
