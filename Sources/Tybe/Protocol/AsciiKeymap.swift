/// The US-QWERTY mapping between ASCII characters and keystrokes.
///
/// Data from the HID Usage Tables (Keyboard page 0x07) and the US layout: letters and
/// unshifted symbols need no modifier, capitals and shifted symbols add Left Shift.
public enum AsciiKeymap {
    /// Each key that types printable ASCII, with its unshifted and shifted character.
    static let keys: [(key: HIDKey, plain: Character, shifted: Character)] = {
        var rows: [(key: HIDKey, plain: Character, shifted: Character)] = []
        for (offset, letter) in "abcdefghijklmnopqrstuvwxyz".enumerated() {
            rows.append((HIDKey(rawValue: 0x04 + UInt8(offset)), letter, Character(letter.uppercased())))
        }
        // Usage order is 1…9, 0; the shifted row is the US number row.
        for (offset, pair) in zip("1234567890", "!@#$%^&*()").enumerated() {
            rows.append((HIDKey(rawValue: 0x1E + UInt8(offset)), pair.0, pair.1))
        }
        rows += [
            (.space, " ", " "),
            (.minus, "-", "_"), (.equal, "=", "+"),
            (.leftBracket, "[", "{"), (.rightBracket, "]", "}"), (.backslash, "\\", "|"),
            (.semicolon, ";", ":"), (.apostrophe, "'", "\""), (.grave, "`", "~"),
            (.comma, ",", "<"), (.period, ".", ">"), (.slash, "/", "?"),
        ]
        return rows
    }()

    /// Character → keystroke, built once from ``keys``.
    private static let forward: [Character: KeyStroke] = {
        var map: [Character: KeyStroke] = [:]
        for row in keys {
            map[row.plain] = KeyStroke(row.key)
            // Space has no distinct shifted character; keep it unmodified.
            if row.shifted != row.plain { map[row.shifted] = KeyStroke(row.key, .leftShift) }
        }
        map["\n"] = KeyStroke(.enter)
        // "\r\n" is a single Character in Swift; a lone "\r" is an old-Mac line end. Both are
        // one Enter, as in the reference ASCII→HID table.
        map["\r\n"] = KeyStroke(.enter)
        map["\r"] = KeyStroke(.enter)
        map["\t"] = KeyStroke(.tab)
        return map
    }()

    /// Keystroke (without modifiers) → (unshifted, shifted) character.
    private static let inverse: [HIDKey: (plain: Character, shifted: Character)] = {
        var map: [HIDKey: (plain: Character, shifted: Character)] = [:]
        for row in keys { map[row.key] = (row.plain, row.shifted) }
        map[.enter] = ("\n", "\n")
        map[.tab] = ("\t", "\t")
        return map
    }()

    /// The keystroke that types `character` on a US host: printable ASCII (U+0020…U+007E),
    /// `"\n"`, `"\r"` and `"\r\n"` → Enter, `"\t"` → Tab. Nil for anything else.
    public static func keystroke(for character: Character) -> KeyStroke? {
        forward[character]
    }

    /// What an English (US-QWERTY) host types for `stroke`: Shift on either side selects the
    /// shifted character; Enter gives `"\n"`, Tab `"\t"`. Nil when Ctrl, Alt or GUI is held
    /// (those are shortcuts, not text) or the key types no character.
    public static func character(for stroke: KeyStroke) -> Character? {
        let m = stroke.modifiers
        guard !m.hasCtrl, !m.hasAlt, !m.hasGUI, let pair = inverse[stroke.key] else { return nil }
        return m.hasShift ? pair.shifted : pair.plain
    }

    /// Every character ``keystroke(for:)`` maps: the 95 printable ASCII characters, `"\n"`
    /// and `"\t"` (the `"\r"` spellings of Enter are left out because they do not round-trip).
    public static let typeableCharacters: [Character] = {
        (0x20...0x7E).map { Character(Unicode.Scalar(UInt8($0))) } + ["\n", "\t"]
    }()
}
