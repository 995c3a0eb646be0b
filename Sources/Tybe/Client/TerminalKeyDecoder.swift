import Foundation

/// Turns the bytes a terminal in raw mode sends into key strokes (`tether tybe keyboard`).
///
/// Handles printable ASCII, Enter, Tab, Backspace, Esc, arrow keys (`ESC [ A`…), Ctrl-letters
/// (`0x01`…`0x1A` → ⌃ + letter) and Alt/Option combinations (`ESC` + character → ⌥). Ctrl-]
/// (`0x1D`) means quit. An `ESC` alone is held until the next byte (or ``flush()``) decides.
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
                    guard pending.count >= 3 else { break }
                    let key: HIDKey? = switch pending[2] {
                    case UInt8(ascii: "A"): .arrowUp
                    case UInt8(ascii: "B"): .arrowDown
                    case UInt8(ascii: "C"): .arrowRight
                    case UInt8(ascii: "D"): .arrowLeft
                    case UInt8(ascii: "H"): .home
                    case UInt8(ascii: "F"): .end
                    default: nil
                    }
                    out.append(key.map { .key(KeyStroke($0)) } ?? .ignored(Array(pending.prefix(3))))
                    pending.removeFirst(3)
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
