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

/// The columns a terminal gives `character`: 2 for East Asian wide and fullwidth characters
/// (Hangul syllables and jamo, CJK, fullwidth forms, most emoji), 0 for a lone combining mark
/// or zero-width character, 1 otherwise.
func terminalColumns(_ character: Character) -> Int {
    guard let first = character.unicodeScalars.first else { return 0 }
    if character.unicodeScalars.contains(where: { $0.properties.isEmojiPresentation }) { return 2 }
    switch first.value {
    case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
         0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
         0xFFE0...0xFFE6, 0x20000...0x3FFFD:
        return 2
    case 0x200B...0x200F, 0x2060...0x2064, 0xFEFF:
        return 0
    default:
        return first.properties.generalCategory == .nonspacingMark ? 0 : 1
    }
}

/// `line` cut to fit `columns` terminal columns, ending in "…" when cut, so a status line
/// redrawn in place never wraps onto a second line.
func fitToColumns(_ line: String, columns: Int) -> String {
    guard columns > 0 else { return "" }
    var used = 0
    var result = ""
    for character in line {
        let width = terminalColumns(character)
        if used + width > columns {
            // Room for the ellipsis: drop characters until it fits.
            while used + 1 > columns, let last = result.popLast() { used -= terminalColumns(last) }
            return result + "…"
        }
        result.append(character)
        used += width
    }
    return result
}

/// The width of the terminal on standard output, or nil when it is no terminal.
func terminalWidth() -> Int? {
    var size = winsize()
    guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
    return Int(size.ws_col)
}
