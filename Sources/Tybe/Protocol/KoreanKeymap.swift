/// The Dubeolsik (2-set) Korean layout: which keys type which Hangul compatibility jamo.
///
/// Data from libhangul's `hangul_keyboard_table_2` and its default combination table. The
/// planner only sends keystrokes; the host's Korean input method composes the syllables.
public enum KoreanKeymap {
    /// The jamo each letter key types without Shift, in key order a…z.
    static let plainJamo: [Character] = Array("ㅁㅠㅊㅇㄷㄹㅎㅗㅑㅓㅏㅣㅡㅜㅐㅔㅂㄱㄴㅅㅕㅍㅈㅌㅛㅋ")

    /// The jamo Shift changes: the five tense consonants and the two ㅒ/ㅖ vowels.
    static let shiftedJamo: [HIDKey: Character] = [
        .r: "ㄲ", .e: "ㄸ", .q: "ㅃ", .t: "ㅆ", .w: "ㅉ", .o: "ㅒ", .p: "ㅖ",
    ]

    /// Compound vowels and compound finals, typed as their two parts.
    static let compounds: [Character: (Character, Character)] = [
        "ㅘ": ("ㅗ", "ㅏ"), "ㅙ": ("ㅗ", "ㅐ"), "ㅚ": ("ㅗ", "ㅣ"), "ㅝ": ("ㅜ", "ㅓ"),
        "ㅞ": ("ㅜ", "ㅔ"), "ㅟ": ("ㅜ", "ㅣ"), "ㅢ": ("ㅡ", "ㅣ"),
        "ㄳ": ("ㄱ", "ㅅ"), "ㄵ": ("ㄴ", "ㅈ"), "ㄶ": ("ㄴ", "ㅎ"), "ㄺ": ("ㄹ", "ㄱ"),
        "ㄻ": ("ㄹ", "ㅁ"), "ㄼ": ("ㄹ", "ㅂ"), "ㄽ": ("ㄹ", "ㅅ"), "ㄾ": ("ㄹ", "ㅌ"),
        "ㄿ": ("ㄹ", "ㅍ"), "ㅀ": ("ㄹ", "ㅎ"), "ㅄ": ("ㅂ", "ㅅ"),
    ]

    /// Single-key jamo → keystroke.
    private static let singles: [Character: KeyStroke] = {
        var map: [Character: KeyStroke] = [:]
        for (key, jamo) in zip(HIDKey.letters, plainJamo) { map[jamo] = KeyStroke(key) }
        for (key, jamo) in shiftedJamo { map[jamo] = KeyStroke(key, .leftShift) }
        return map
    }()

    /// The keystrokes that type one Hangul compatibility jamo (U+3131…U+318E) on a Dubeolsik
    /// host: one key, Left Shift + key for ㄲ ㄸ ㅃ ㅆ ㅉ ㅒ ㅖ, or two keys for a compound vowel
    /// or compound final (ㅘ = ㅗ ㅏ, ㄳ = ㄱ ㅅ). Nil for archaic jamo and non-jamo.
    public static func keystrokes(forJamo jamo: Character) -> [KeyStroke]? {
        if let single = singles[jamo] { return [single] }
        if let (first, second) = compounds[jamo], let a = singles[first], let b = singles[second] {
            return [a, b]
        }
        return nil
    }

    /// Which compatibility jamo a Dubeolsik input method types for `stroke`: Shift (either side)
    /// gives ㄲ ㄸ ㅃ ㅆ ㅉ ㅒ ㅖ on their keys and the unshifted jamo on every other letter key.
    /// Nil for non-letter keys and when Ctrl, Alt or GUI is held.
    public static func jamo(for stroke: KeyStroke) -> Character? {
        let m = stroke.modifiers
        guard !m.hasCtrl, !m.hasAlt, !m.hasGUI, (0x04...0x1D).contains(stroke.key.rawValue) else {
            return nil
        }
        if m.hasShift, let shifted = shiftedJamo[stroke.key] { return shifted }
        return plainJamo[Int(stroke.key.rawValue - 0x04)]
    }

    /// The 51 modern compatibility jamo (U+3131…U+3163), all of which ``keystrokes(forJamo:)``
    /// maps.
    public static let typeableJamo: [Character] = (0x3131...0x3163).map {
        Character(Unicode.Scalar(UInt32($0))!)
    }
}
