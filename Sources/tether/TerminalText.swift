import Foundation

/// Text that came from a device (names, messages, firmware strings, error texts), made safe
/// to print on a terminal: control characters (C0, DEL, C1: escape sequences, carriage
/// returns, bells…) and bidirectional overrides (which can reorder what is shown) become
/// visible escapes such as `\n`, `\x1b` or `\u{202e}`. Everything else, emoji and Hangul
/// included, is kept.
func terminalSafe(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: needsEscape) else { return text }
    var result = ""
    result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
    for scalar in text.unicodeScalars {
        guard needsEscape(scalar) else {
            result.unicodeScalars.append(scalar)
            continue
        }
        switch scalar {
        case "\n": result += "\\n"
        case "\r": result += "\\r"
        case "\t": result += "\\t"
        default:
            result += scalar.value < 0x100 ? String(format: "\\x%02x", scalar.value) : String(format: "\\u{%x}", scalar.value)
        }
    }
    return result
}

/// `terminalSafe` for optional text.
func terminalSafe(_ text: String?) -> String? {
    text.map { terminalSafe($0) }
}

private func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x00...0x1F, 0x7F...0x9F: true
    // LRE, RLE, PDF, LRO, RLO; LRI, RLI, FSI, PDI; LRM, RLM, ALM.
    case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: true
    default: false
    }
}

/// JSON made safe for a terminal: `JSONEncoder` escapes C0 controls but writes DEL, C1
/// controls and bidirectional overrides as they are; inside JSON strings (the only place they
/// can be) they become `\u` escapes, which is still the same JSON.
func terminalSafeJSON(_ json: String) -> String {
    guard json.unicodeScalars.contains(where: needsEscape) else { return json }
    var result = ""
    for scalar in json.unicodeScalars {
        if needsEscape(scalar) {
            result += String(format: "\\u%04x", scalar.value)
        } else {
            result.unicodeScalars.append(scalar)
        }
    }
    return result
}
