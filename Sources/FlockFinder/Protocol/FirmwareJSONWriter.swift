import Foundation

/// Writes flat JSON objects byte for byte the way the firmware does: keys in the given order,
/// no whitespace, strings escaped minimally, non-ASCII left as UTF-8.
///
/// `JSONEncoder` cannot promise key order or the number formats, so the firmware's wire format
/// is produced by hand.
package struct FirmwareJSONWriter {
    /// One scalar value of a flat firmware object.
    enum Value {
        case string(String)
        case int(Int)
        case uint(UInt64)
        case double(Double)
        case bool(Bool)
    }

    /// Serialises `fields` as one JSON object, in order.
    static func object(_ fields: KeyValuePairs<String, Value>) -> Data {
        var out = "{"
        var first = true
        for (key, value) in fields {
            if !first { out += "," }
            first = false
            appendString(key, to: &out)
            out += ":"
            switch value {
            case .string(let string): appendString(string, to: &out)
            case .int(let int): out += String(int)
            case .uint(let uint): out += String(uint)
            case .double(let double): out += formatNumber(double)
            case .bool(let bool): out += bool ? "true" : "false"
            }
        }
        out += "}"
        return Data(out.utf8)
    }

    /// The shortest decimal text that reads back as exactly `value`, without a trailing `.0`
    /// (so 0.9 → `0.9`, 0.85 → `0.85`, 1 → `1`, as ArduinoJson prints them). Non-finite values
    /// have no JSON spelling and print as `null`.
    package static func formatNumber(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 1e15 {
            // Integral and exactly representable as Int64: print without a fraction.
            return String(Int64(value))
        }
        // Swift's description is the shortest round-tripping form (e.g. 1e-07); valid JSON.
        return value.description
    }

    /// Appends `string` as a JSON string literal.
    static func appendString(_ string: String, to out: inout String) {
        out += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
