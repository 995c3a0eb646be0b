/// A HID usage on the Keyboard/Keypad page (0x07), as sent in a KEY opcode.
///
/// A struct rather than an enum so that any byte read off the wire can be represented; use
/// ``isValid`` to check the range the bridge accepts.
public struct HIDKey: RawRepresentable, Hashable, Sendable, Codable {
    /// The usage ID.
    public let rawValue: UInt8
    /// Wraps a usage ID (any byte, valid or not).
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Whether the bridge accepts this usage (0x04…0xE7); others are `INVALID_KEY`.
    public var isValid: Bool { (0x04...0xE7).contains(rawValue) }

    // MARK: Letters (0x04…0x1D)
    /// A key.
    public static let a = HIDKey(rawValue: 0x04)
    /// B key.
    public static let b = HIDKey(rawValue: 0x05)
    /// C key.
    public static let c = HIDKey(rawValue: 0x06)
    /// D key.
    public static let d = HIDKey(rawValue: 0x07)
    /// E key.
    public static let e = HIDKey(rawValue: 0x08)
    /// F key.
    public static let f = HIDKey(rawValue: 0x09)
    /// G key.
    public static let g = HIDKey(rawValue: 0x0A)
    /// H key.
    public static let h = HIDKey(rawValue: 0x0B)
    /// I key.
    public static let i = HIDKey(rawValue: 0x0C)
    /// J key.
    public static let j = HIDKey(rawValue: 0x0D)
    /// K key.
    public static let k = HIDKey(rawValue: 0x0E)
    /// L key.
    public static let l = HIDKey(rawValue: 0x0F)
    /// M key.
    public static let m = HIDKey(rawValue: 0x10)
    /// N key.
    public static let n = HIDKey(rawValue: 0x11)
    /// O key.
    public static let o = HIDKey(rawValue: 0x12)
    /// P key.
    public static let p = HIDKey(rawValue: 0x13)
    /// Q key.
    public static let q = HIDKey(rawValue: 0x14)
    /// R key.
    public static let r = HIDKey(rawValue: 0x15)
    /// S key.
    public static let s = HIDKey(rawValue: 0x16)
    /// T key.
    public static let t = HIDKey(rawValue: 0x17)
    /// U key.
    public static let u = HIDKey(rawValue: 0x18)
    /// V key.
    public static let v = HIDKey(rawValue: 0x19)
    /// W key.
    public static let w = HIDKey(rawValue: 0x1A)
    /// X key.
    public static let x = HIDKey(rawValue: 0x1B)
    /// Y key.
    public static let y = HIDKey(rawValue: 0x1C)
    /// Z key.
    public static let z = HIDKey(rawValue: 0x1D)

    // MARK: Digits (0x1E…0x27)
    /// 1 ! key.
    public static let digit1 = HIDKey(rawValue: 0x1E)
    /// 2 @ key.
    public static let digit2 = HIDKey(rawValue: 0x1F)
    /// 3 # key.
    public static let digit3 = HIDKey(rawValue: 0x20)
    /// 4 $ key.
    public static let digit4 = HIDKey(rawValue: 0x21)
    /// 5 % key.
    public static let digit5 = HIDKey(rawValue: 0x22)
    /// 6 ^ key.
    public static let digit6 = HIDKey(rawValue: 0x23)
    /// 7 & key.
    public static let digit7 = HIDKey(rawValue: 0x24)
    /// 8 * key.
    public static let digit8 = HIDKey(rawValue: 0x25)
    /// 9 ( key.
    public static let digit9 = HIDKey(rawValue: 0x26)
    /// 0 ) key.
    public static let digit0 = HIDKey(rawValue: 0x27)

    // MARK: Editing and whitespace
    /// Enter (Return).
    public static let enter = HIDKey(rawValue: 0x28)
    /// Escape.
    public static let escape = HIDKey(rawValue: 0x29)
    /// Backspace (Mac "Delete").
    public static let backspace = HIDKey(rawValue: 0x2A)
    /// Tab.
    public static let tab = HIDKey(rawValue: 0x2B)
    /// Space bar.
    public static let space = HIDKey(rawValue: 0x2C)

    // MARK: Symbols (US layout)
    /// - _ key.
    public static let minus = HIDKey(rawValue: 0x2D)
    /// = + key.
    public static let equal = HIDKey(rawValue: 0x2E)
    /// [ { key.
    public static let leftBracket = HIDKey(rawValue: 0x2F)
    /// ] } key.
    public static let rightBracket = HIDKey(rawValue: 0x30)
    /// \ | key.
    public static let backslash = HIDKey(rawValue: 0x31)
    /// ; : key.
    public static let semicolon = HIDKey(rawValue: 0x33)
    /// ' " key.
    public static let apostrophe = HIDKey(rawValue: 0x34)
    /// ` ~ key.
    public static let grave = HIDKey(rawValue: 0x35)
    /// , < key.
    public static let comma = HIDKey(rawValue: 0x36)
    /// . > key.
    public static let period = HIDKey(rawValue: 0x37)
    /// / ? key.
    public static let slash = HIDKey(rawValue: 0x38)
    /// Caps Lock.
    public static let capsLock = HIDKey(rawValue: 0x39)

    // MARK: Function keys (0x3A…0x45)
    /// F1.
    public static let f1 = HIDKey(rawValue: 0x3A)
    /// F2.
    public static let f2 = HIDKey(rawValue: 0x3B)
    /// F3.
    public static let f3 = HIDKey(rawValue: 0x3C)
    /// F4.
    public static let f4 = HIDKey(rawValue: 0x3D)
    /// F5.
    public static let f5 = HIDKey(rawValue: 0x3E)
    /// F6.
    public static let f6 = HIDKey(rawValue: 0x3F)
    /// F7.
    public static let f7 = HIDKey(rawValue: 0x40)
    /// F8.
    public static let f8 = HIDKey(rawValue: 0x41)
    /// F9.
    public static let f9 = HIDKey(rawValue: 0x42)
    /// F10.
    public static let f10 = HIDKey(rawValue: 0x43)
    /// F11.
    public static let f11 = HIDKey(rawValue: 0x44)
    /// F12.
    public static let f12 = HIDKey(rawValue: 0x45)

    // MARK: Navigation
    /// Insert.
    public static let insert = HIDKey(rawValue: 0x49)
    /// Home.
    public static let home = HIDKey(rawValue: 0x4A)
    /// Page Up.
    public static let pageUp = HIDKey(rawValue: 0x4B)
    /// Forward Delete.
    public static let delete = HIDKey(rawValue: 0x4C)
    /// End.
    public static let end = HIDKey(rawValue: 0x4D)
    /// Page Down.
    public static let pageDown = HIDKey(rawValue: 0x4E)
    /// Right arrow.
    public static let arrowRight = HIDKey(rawValue: 0x4F)
    /// Left arrow.
    public static let arrowLeft = HIDKey(rawValue: 0x50)
    /// Down arrow.
    public static let arrowDown = HIDKey(rawValue: 0x51)
    /// Up arrow.
    public static let arrowUp = HIDKey(rawValue: 0x52)

    // MARK: Language keys
    /// LANG1: Hangul/English toggle on Korean keyboards.
    public static let lang1 = HIDKey(rawValue: 0x90)
    /// LANG2: Hanja conversion on Korean keyboards.
    public static let lang2 = HIDKey(rawValue: 0x91)

    /// The 26 letter keys, a…z.
    public static let letters: [HIDKey] = (0x04...0x1D).map { HIDKey(rawValue: $0) }
    /// The digit keys in usage order, 1…9 then 0.
    public static let digits: [HIDKey] = (0x1E...0x27).map { HIDKey(rawValue: $0) }
    /// F1…F12.
    public static let functionKeys: [HIDKey] = (0x3A...0x45).map { HIDKey(rawValue: $0) }

    /// The key's human label (Mac client format): `↩ esc ⌫ ⇥ ␣ ← → ↑ ↓ ⇪`, lowercase letters,
    /// digits, the unshifted symbol, `F1`…`F12`; unnamed usages print as `0xNN`.
    public var label: String {
        if let named = Self.labels[rawValue] { return named }
        if let character = AsciiKeymap.character(for: KeyStroke(self)), character.isASCII,
            !character.isWhitespace
        {
            return String(character)
        }
        if (0x3A...0x45).contains(rawValue) { return "F\(rawValue - 0x3A + 1)" }
        return "0x" + tybeHexByte(rawValue)
    }

    /// Keys whose label is a glyph or word rather than the character they type.
    private static let labels: [UInt8: String] = [
        0x28: "↩", 0x29: "esc", 0x2A: "⌫", 0x2B: "⇥", 0x2C: "␣", 0x39: "⇪",
        0x49: "ins", 0x4A: "↖", 0x4B: "⇞", 0x4C: "⌦", 0x4D: "↘", 0x4E: "⇟",
        0x4F: "→", 0x50: "←", 0x51: "↓", 0x52: "↑",
        0x90: "한/영", 0x91: "漢字",
    ]
}

extension HIDKey: CustomStringConvertible {
    /// The key's ``label``.
    public var description: String { label }
}

/// The modifier byte of a HID boot keyboard report, as sent in a KEY opcode.
public struct HIDModifiers: OptionSet, Hashable, Sendable, Codable {
    /// The modifier bits.
    public let rawValue: UInt8
    /// Wraps modifier bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Left Control.
    public static let leftCtrl = HIDModifiers(rawValue: 0x01)
    /// Left Shift.
    public static let leftShift = HIDModifiers(rawValue: 0x02)
    /// Left Alt (Option).
    public static let leftAlt = HIDModifiers(rawValue: 0x04)
    /// Left GUI (Command / Windows).
    public static let leftGUI = HIDModifiers(rawValue: 0x08)
    /// Right Control.
    public static let rightCtrl = HIDModifiers(rawValue: 0x10)
    /// Right Shift.
    public static let rightShift = HIDModifiers(rawValue: 0x20)
    /// Right Alt (Option).
    public static let rightAlt = HIDModifiers(rawValue: 0x40)
    /// Right GUI (Command / Windows).
    public static let rightGUI = HIDModifiers(rawValue: 0x80)

    /// Either Control.
    public var hasCtrl: Bool { !isDisjoint(with: [.leftCtrl, .rightCtrl]) }
    /// Either Shift.
    public var hasShift: Bool { !isDisjoint(with: [.leftShift, .rightShift]) }
    /// Either Alt.
    public var hasAlt: Bool { !isDisjoint(with: [.leftAlt, .rightAlt]) }
    /// Either GUI.
    public var hasGUI: Bool { !isDisjoint(with: [.leftGUI, .rightGUI]) }

    /// The Mac glyphs for the held modifiers, in Mac order `⌃ ⌥ ⇧ ⌘` (sides are not shown).
    public var label: String {
        (hasCtrl ? "⌃" : "") + (hasAlt ? "⌥" : "") + (hasShift ? "⇧" : "") + (hasGUI ? "⌘" : "")
    }
}

/// One key press and release with modifiers held: the operands of a KEY opcode.
public struct KeyStroke: Hashable, Sendable, Codable {
    /// The key.
    public var key: HIDKey
    /// The modifiers held while it is pressed.
    public var modifiers: HIDModifiers

    /// Creates a keystroke.
    public init(_ key: HIDKey, _ modifiers: HIDModifiers = []) {
        self.key = key
        self.modifiers = modifiers
    }

    /// The Mac client's human label: modifier glyphs `⌃ ⌥ ⇧ ⌘` then the key's label,
    /// e.g. `"⇧a"`, `"⌃c"`, `"⌘↩"`.
    public var label: String { modifiers.label + key.label }
}

extension KeyStroke: CustomStringConvertible {
    /// The keystroke's ``label``.
    public var description: String { label }
}

/// Two upper-case hex digits; avoids Foundation's `String(format:)` in hot paths.
func tybeHexByte(_ byte: UInt8) -> String {
    let digits = Array("0123456789ABCDEF")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
}
