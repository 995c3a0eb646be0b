import Tybe

/// A Dubeolsik (2-set) Hangul input method, as the target host's Korean input source runs it.
///
/// It takes one compatibility jamo per keystroke and composes syllables the way the macOS,
/// Windows and libhangul 2-set input methods do:
///
/// - an initial consonant and a vowel make a syllable, and a following consonant becomes its
///   final (ㅇ ㅏ ㄴ → 안);
/// - a final followed by a vowel moves to the next syllable (각 + ㅏ → 가가);
/// - vowels combine into compound vowels (ㅗ+ㅏ=ㅘ, ㅗ+ㅐ=ㅙ, ㅗ+ㅣ=ㅚ, ㅜ+ㅓ=ㅝ, ㅜ+ㅔ=ㅞ,
///   ㅜ+ㅣ=ㅟ, ㅡ+ㅣ=ㅢ) and finals into compound finals (ㄳ ㄵ ㄶ ㄺ ㄻ ㄼ ㄽ ㄾ ㄿ ㅀ ㅄ); a compound
///   final followed by a vowel splits (닭 + ㅏ → 달가);
/// - a consonant or vowel that cannot join the syllable being composed commits it and starts
///   anew, so a lone jamo commits as itself (ㄱ ㄴ → ㄱㄴ);
/// - ``backspace()`` removes the last jamo typed from the syllable being composed (괜 → 괘 → 고 →
///   ㄱ), or the last committed character when nothing is being composed.
///
/// ``preedit`` is the syllable being composed (shown underlined by a real host); ``committed``
/// is the text already finished.
public struct KoreanInputMethod: Sendable, Hashable {
    /// Text the input method has finished composing.
    public var committed: String = ""
    /// The jamo typed for the syllable being composed, in order: backspace replays all but the
    /// last, which is how real 2-set input methods undo one keystroke at a time.
    private var keys: [Character] = []
    private var syllable = Syllable()

    /// Creates an input method with nothing composed.
    public init() {}

    /// The syllable being composed: a precomposed syllable once it has an initial and a vowel,
    /// otherwise the lone jamo; empty when nothing is being composed.
    public var preedit: String { syllable.text }

    /// Everything typed so far: ``committed`` followed by ``preedit``.
    public var text: String { committed + preedit }

    /// Types one jamo. Characters that are not modern compatibility jamo commit the syllable
    /// being composed and are appended as they are.
    public mutating func input(_ jamo: Character) {
        if Hangul.isConsonant(jamo) {
            inputConsonant(jamo)
        } else if Hangul.isVowel(jamo) {
            inputVowel(jamo)
        } else {
            commit()
            committed.append(jamo)
        }
    }

    /// Removes the last jamo typed from the syllable being composed, or the last committed
    /// character when nothing is being composed.
    public mutating func backspace() {
        guard !keys.isEmpty else {
            if !committed.isEmpty { committed.removeLast() }
            return
        }
        keys.removeLast()
        let replay = keys
        keys = []
        syllable = Syllable()
        // Everything in `keys` belonged to one syllable, so replaying cannot commit anything.
        for jamo in replay { input(jamo) }
    }

    /// Finishes the syllable being composed (a space, Enter, a click elsewhere...).
    public mutating func commit() {
        committed += syllable.text
        syllable = Syllable()
        keys = []
    }

    /// Forgets everything, committed text included.
    public mutating func reset() {
        self = KoreanInputMethod()
    }

    // MARK: Composition

    private mutating func inputConsonant(_ consonant: Character) {
        switch (syllable.initial, syllable.medial, syllable.final) {
        case (.some, .some, nil) where Hangul.finals.contains(consonant):
            // ㄸ ㅃ ㅉ never end a syllable, so they fall through to start the next one.
            syllable.final = consonant
        case (.some, .some, .some(let final)):
            if let compound = Hangul.compoundFinals[Pair(final, consonant)] {
                syllable.final = compound
            } else {
                startNew(initial: consonant)
                return
            }
        case (nil, nil, nil):
            syllable.initial = consonant
        default:
            // A lone consonant, a lone vowel, or ㄸ/ㅃ/ㅉ after a vowel: commit, start afresh.
            startNew(initial: consonant)
            return
        }
        keys.append(consonant)
    }

    private mutating func inputVowel(_ vowel: Character) {
        switch (syllable.medial, syllable.final) {
        case (nil, nil):
            syllable.medial = vowel
            keys.append(vowel)
        case (.some(let medial), nil):
            if let compound = Hangul.compoundVowels[Pair(medial, vowel)] {
                syllable.medial = compound
                keys.append(vowel)
            } else {
                commit()
                syllable.medial = vowel
                keys = [vowel]
            }
        case (.some, .some(let final)):
            // The final moves to the next syllable; a compound final gives up only its second half.
            let moved: Character
            if let (first, second) = Hangul.splitFinals[final] {
                syllable.final = first
                moved = second
            } else {
                syllable.final = nil
                moved = final
            }
            commit()
            syllable.initial = moved
            syllable.medial = vowel
            keys = [moved, vowel]
        case (nil, .some):
            // Unreachable: a final is only ever added after a vowel.
            commit()
            syllable.medial = vowel
            keys = [vowel]
        }
    }

    private mutating func startNew(initial consonant: Character) {
        commit()
        syllable.initial = consonant
        keys = [consonant]
    }
}

/// An ordered pair of jamo, the key of the combination tables.
private struct Pair: Hashable {
    let first: Character
    let second: Character
    init(_ first: Character, _ second: Character) {
        self.first = first
        self.second = second
    }
}

/// The syllable being composed, as compatibility jamo.
private struct Syllable: Hashable, Sendable {
    var initial: Character?
    var medial: Character?
    var final: Character?

    var text: String {
        guard let medial else { return initial.map(String.init) ?? "" }
        guard let initial else { return String(medial) }
        return Hangul.compose(initial: initial, medial: medial, final: final).map(String.init) ?? String(initial) + String(medial)
    }
}

/// Unicode Hangul tables: the TR 15 orders of initials, medials and finals as compatibility jamo.
private enum Hangul {
    static let initials = Array("ㄱㄲㄴㄷㄸㄹㅁㅂㅃㅅㅆㅇㅈㅉㅊㅋㅌㅍㅎ")
    static let medials = Array("ㅏㅐㅑㅒㅓㅔㅕㅖㅗㅘㅙㅚㅛㅜㅝㅞㅟㅠㅡㅢㅣ")
    /// Index 0 is "no final".
    static let finalOrder = Array("ㄱㄲㄳㄴㄵㄶㄷㄹㄺㄻㄼㄽㄾㄿㅀㅁㅂㅄㅅㅆㅇㅈㅊㅋㅌㅍㅎ")
    /// The consonants a single key can put in the final position.
    static let finals: Set<Character> = Set(finalOrder).subtracting(splitFinals.keys)

    static let compoundVowels: [Pair: Character] = [
        Pair("ㅗ", "ㅏ"): "ㅘ", Pair("ㅗ", "ㅐ"): "ㅙ", Pair("ㅗ", "ㅣ"): "ㅚ",
        Pair("ㅜ", "ㅓ"): "ㅝ", Pair("ㅜ", "ㅔ"): "ㅞ", Pair("ㅜ", "ㅣ"): "ㅟ",
        Pair("ㅡ", "ㅣ"): "ㅢ",
    ]

    static let splitFinals: [Character: (Character, Character)] = [
        "ㄳ": ("ㄱ", "ㅅ"), "ㄵ": ("ㄴ", "ㅈ"), "ㄶ": ("ㄴ", "ㅎ"), "ㄺ": ("ㄹ", "ㄱ"),
        "ㄻ": ("ㄹ", "ㅁ"), "ㄼ": ("ㄹ", "ㅂ"), "ㄽ": ("ㄹ", "ㅅ"), "ㄾ": ("ㄹ", "ㅌ"),
        "ㄿ": ("ㄹ", "ㅍ"), "ㅀ": ("ㄹ", "ㅎ"), "ㅄ": ("ㅂ", "ㅅ"),
    ]

    static let compoundFinals: [Pair: Character] = {
        var table: [Pair: Character] = [:]
        for (compound, parts) in splitFinals { table[Pair(parts.0, parts.1)] = compound }
        return table
    }()

    static func isConsonant(_ c: Character) -> Bool { range(c, 0x3131...0x314E) }
    static func isVowel(_ c: Character) -> Bool { range(c, 0x314F...0x3163) }

    private static func range(_ c: Character, _ r: ClosedRange<UInt32>) -> Bool {
        guard c.unicodeScalars.count == 1, let scalar = c.unicodeScalars.first else { return false }
        return r.contains(scalar.value)
    }

    /// The precomposed syllable U+AC00 + (L × 21 + V) × 28 + T.
    static func compose(initial: Character, medial: Character, final: Character?) -> Character? {
        guard let l = initials.firstIndex(of: initial), let v = medials.firstIndex(of: medial) else { return nil }
        var t = 0
        if let final {
            guard let index = finalOrder.firstIndex(of: final) else { return nil }
            t = index + 1
        }
        return Unicode.Scalar(UInt32(0xAC00 + (l * 21 + v) * 28 + t)).map(Character.init)
    }
}
