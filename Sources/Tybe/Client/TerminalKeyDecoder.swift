import Foundation

/// Turns the bytes a terminal in raw mode sends into key strokes (`tether tybe keyboard`).
///
/// Handles printable ASCII, Enter, Tab, Backspace, Esc, Ctrl-letters (`0x01`…`0x1A` → ⌃ +
/// letter), Alt/Option combinations (`ESC` + character → ⌥) and the keys terminals send as
/// sequences: arrows, Home, End, Insert, Delete, Page Up/Down, F1–F12 and Shift-Tab, with
/// their Shift/Alt/Ctrl/Meta modifiers (`ESC [ 1 ; 5 D` is Ctrl-Left). A whole sequence the
/// keyboard has no key for is one ``Output/ignored(_:)`` — never typed as its characters.
/// Ctrl-] (`0x1D`) means quit. An `ESC` alone is held until the next byte (or ``flush()``)
/// decides.
public struct TerminalKeyDecoder: Sendable {
    /// What a byte sequence meant.
    public enum Output: Sendable, Hashable {
        /// A key press.
        case key(KeyStroke)
        /// The user asked to quit.
        case quit
        /// Bytes with no key meaning (reported, not sent).
        case ignored([UInt8])
    }

    private var pending: [UInt8] = []

    /// Creates a decoder.
    public init() {}

    /// Decodes a chunk of terminal input.
    public mutating func push(_ bytes: some Sequence<UInt8>) -> [Output] {
        pending.append(contentsOf: bytes)
        var out: [Output] = []
        while let first = pending.first {
            if first == 0x1B {
                guard pending.count >= 2 else { break }
                if pending[1] == UInt8(ascii: "[") {
                    // A control sequence: parameter and intermediate bytes, then one final byte.
                    var end = 2
                    while end < pending.count, (0x20...0x3F).contains(pending[end]) { end += 1 }
                    guard end < pending.count else {
                        // Unfinished: wait for the rest, but never hold more than a sequence.
                        if pending.count > Self.maximumSequenceLength {
                            out.append(.ignored(pending))
                            pending.removeAll()
                        }
                        break
                    }
                    let sequence = Array(pending[0...end])
                    pending.removeFirst(end + 1)
                    if (0x40...0x7E).contains(sequence[end]), let stroke = Self.controlSequence(sequence) {
                        out.append(.key(stroke))
                    } else {
                        out.append(.ignored(sequence))
                    }
                    continue
                }
                if pending[1] == UInt8(ascii: "O") {
                    // SS3: F1–F4, and arrows/Home/End in the application cursor mode.
                    guard pending.count >= 3 else { break }
                    let sequence = Array(pending.prefix(3))
                    pending.removeFirst(3)
                    out.append(Self.finalKey(sequence[2]).map { .key(KeyStroke($0)) } ?? .ignored(sequence))
                    continue
                }
                // ESC + character: the terminal's way of sending Alt/Option.
                let next = pending[1]
                pending.removeFirst(2)
                if let stroke = Self.stroke(for: next) {
                    out.append(.key(KeyStroke(stroke.key, stroke.modifiers.union(.leftAlt))))
                } else {
                    out.append(.ignored([0x1B, next]))
                }
                continue
            }
            pending.removeFirst()
            if first == 0x1D {
                out.append(.quit)
            } else if let stroke = Self.stroke(for: first) {
                out.append(.key(stroke))
            } else {
                out.append(.ignored([first]))
            }
        }
        return out
    }

    /// Resolves a lone `ESC` held back by ``push(_:)`` as the Escape key.
    public mutating func flush() -> [Output] {
        guard pending == [0x1B] else { return [] }
        pending.removeAll()
        return [.key(KeyStroke(.escape))]
    }

    /// The longest control sequence held while waiting for its final byte.
    static let maximumSequenceLength = 32

    /// `ESC [ params final`: arrows, Home/End, Shift-Tab (`Z`), F1–F4 (`P`…`S`) and the `~`
    /// keys (Insert, Delete, Page Up/Down, Home/End, F5–F12), with xterm's modifier parameter
    /// (`1;5D` is Ctrl-Left: 1 + Shift 1, Alt 2, Ctrl 4, Meta 8). Nil for anything else.
    static func controlSequence(_ sequence: [UInt8]) -> KeyStroke? {
        guard sequence.count >= 3, let final = sequence.last else { return nil }
        let text = String(decoding: sequence[2..<(sequence.count - 1)], as: UTF8.self)
        let fields = text.isEmpty ? [] : text.split(separator: ";", omittingEmptySubsequences: false).map { Int($0) }
        guard fields.allSatisfy({ $0 != nil }), fields.count <= 2 else { return nil }
        let numbers = fields.compactMap { $0 }
        var modifiers: HIDModifiers = []
        if numbers.count == 2 {
            let bits = numbers[1] - 1
            guard (0...15).contains(bits) else { return nil }
            if bits & 1 != 0 { modifiers.insert(.leftShift) }
            if bits & 2 != 0 { modifiers.insert(.leftAlt) }
            if bits & 4 != 0 { modifiers.insert(.leftCtrl) }
            if bits & 8 != 0 { modifiers.insert(.leftGUI) }
        }
        let key: HIDKey?
        switch final {
        case UInt8(ascii: "~"):
            key = numbers.first.flatMap { tildeKeys[$0] }
        case UInt8(ascii: "Z"):
            return numbers.isEmpty ? KeyStroke(.tab, .leftShift) : nil
        default:
            // Only the modifier form (`1;m`) carries parameters here.
            guard numbers.isEmpty || numbers.first == 1 else { return nil }
            key = finalKey(final)
        }
        return key.map { KeyStroke($0, modifiers) }
    }

    /// The keys named by a sequence's final byte (CSI and SS3 alike).
    static func finalKey(_ final: UInt8) -> HIDKey? {
        switch final {
        case UInt8(ascii: "A"): .arrowUp
        case UInt8(ascii: "B"): .arrowDown
        case UInt8(ascii: "C"): .arrowRight
        case UInt8(ascii: "D"): .arrowLeft
        case UInt8(ascii: "H"): .home
        case UInt8(ascii: "F"): .end
        case UInt8(ascii: "P"): .f1
        case UInt8(ascii: "Q"): .f2
        case UInt8(ascii: "R"): .f3
        case UInt8(ascii: "S"): .f4
        default: nil
        }
    }

    /// `ESC [ n ~` (VT220 and xterm numbering).
    static let tildeKeys: [Int: HIDKey] = [
        1: .home, 2: .insert, 3: .delete, 4: .end, 5: .pageUp, 6: .pageDown, 7: .home, 8: .end,
        11: .f1, 12: .f2, 13: .f3, 14: .f4, 15: .f5, 17: .f6, 18: .f7, 19: .f8, 20: .f9, 21: .f10,
        23: .f11, 24: .f12,
    ]

    static func stroke(for byte: UInt8) -> KeyStroke? {
        switch byte {
        case 0x0D, 0x0A: return KeyStroke(.enter)
        case 0x09: return KeyStroke(.tab)
        case 0x7F, 0x08: return KeyStroke(.backspace)
        case 0x01...0x1A:
            return AsciiKeymap.keystroke(for: Character(Unicode.Scalar(byte + 0x60))).map { KeyStroke($0.key, [.leftCtrl]) }
        case 0x20...0x7E:
            return AsciiKeymap.keystroke(for: Character(Unicode.Scalar(byte)))
        default:
            return nil
        }
    }
}
