import Foundation

/// What the planner makes of a text: the keystrokes, their opcode bytes, and what it could
/// not type.
public struct TybePlan: Sendable, Hashable {
    /// The keystrokes, in typing order.
    public var keystrokes: [KeyStroke]
    /// The keystrokes as KEY opcodes (3 bytes each), ready for ``TybeFrameBuilder/chunk(opcodes:startingSeq:maxFrameBytes:)``.
    public var opcodes: Data
    /// Characters that produced no keystrokes, in text order.
    public var untypeable: [UntypeableCharacter]

    /// Creates a plan.
    public init(keystrokes: [KeyStroke], opcodes: Data, untypeable: [UntypeableCharacter]) {
        self.keystrokes = keystrokes
        self.opcodes = opcodes
        self.untypeable = untypeable
    }

    /// Whether every character was typed.
    public var isComplete: Bool { untypeable.isEmpty }
}

/// A character the planner could not type.
public struct UntypeableCharacter: Sendable, Hashable, Codable {
    /// The character (one extended grapheme cluster).
    public var character: String
    /// Its index among the text's `Character`s (not scalars or UTF-16 units).
    public var offset: Int

    /// Creates a report.
    public init(character: String, offset: Int) {
        self.character = character
        self.offset = offset
    }
}

/// Turns text into keystrokes for a US-QWERTY host (ASCII) or a Dubeolsik host (Hangul).
///
/// The planner never sends input-source toggles: "안녕하세요" types as `d k s s u d g k t p d y`
/// and only becomes Hangul when the host's Korean input source is on.
public enum TybePlanner {
    // Unicode ch. 3.12 composition constants.
    static let sBase: UInt32 = 0xAC00
    static let lBase: UInt32 = 0x1100
    static let vBase: UInt32 = 0x1161
    static let tBase: UInt32 = 0x11A7
    static let vCount: UInt32 = 21
    static let tCount: UInt32 = 28
    static let nCount: UInt32 = 588
    static let sCount: UInt32 = 11172

    /// The 19 initials, in syllable order, as compatibility jamo.
    static let initials: [Character] = Array("ㄱㄲㄴㄷㄸㄹㅁㅂㅃㅅㅆㅇㅈㅉㅊㅋㅌㅍㅎ")
    /// The 21 medials, in syllable order.
    static let medials: [Character] = Array("ㅏㅐㅑㅒㅓㅔㅕㅖㅗㅘㅙㅚㅛㅜㅝㅞㅟㅠㅡㅢㅣ")
    /// The 27 finals for final index 1…27.
    static let finals: [Character] = Array("ㄱㄲㄳㄴㄵㄶㄷㄹㄺㄻㄼㄽㄾㄿㅀㅁㅂㅄㅅㅆㅇㅈㅊㅋㅌㅍㅎ")

    /// Plans `text`.
    ///
    /// - Printable ASCII, `"\n"`, `"\t"` → ``AsciiKeymap``; `"\r\n"` and `"\r"` → one Enter.
    /// - Hangul syllables (U+AC00…U+D7A3) → initial, medial, final jamo → ``KoreanKeymap``;
    ///   a syllable spelled with conjoining jamo (NFD, as macOS file names are) is composed first.
    /// - Standalone compatibility jamo (U+3131…U+3163) → ``KoreanKeymap``.
    /// - Anything else is listed in ``TybePlan/untypeable``, never dropped silently.
    public static func plan(_ text: String) -> TybePlan {
        var strokes: [KeyStroke] = []
        var untypeable: [UntypeableCharacter] = []
        for (offset, character) in text.enumerated() {
            if let typed = keystrokes(for: character) {
                strokes += typed
            } else {
                untypeable.append(UntypeableCharacter(character: String(character), offset: offset))
            }
        }
        return TybePlan(keystrokes: strokes, opcodes: TybeOpcode.encode(strokes), untypeable: untypeable)
    }

    /// The keystrokes for one character (one KEY for ASCII, a jamo run for Hangul), or nil if
    /// it cannot be typed. Keyboard mode uses this for each inserted character.
    public static func keystrokes(for character: Character) -> [KeyStroke]? {
        if let stroke = AsciiKeymap.keystroke(for: character) { return [stroke] }
        let scalars = Array(character.unicodeScalars)
        if scalars.count == 1, let jamo = KoreanKeymap.keystrokes(forJamo: character) { return jamo }
        guard let syllable = composedSyllable(scalars), let parts = decompose(syllable) else { return nil }
        var strokes: [KeyStroke] = []
        for jamo in [parts.initial, parts.medial] + (parts.final.map { [$0] } ?? []) {
            // Every decomposed jamo is modern, so the keymap always has it.
            guard let typed = KoreanKeymap.keystrokes(forJamo: jamo) else { return nil }
            strokes += typed
        }
        return strokes
    }

    /// Splits a precomposed syllable (U+AC00…U+D7A3) into compatibility jamo with the TR15
    /// arithmetic (index = s − 0xAC00; L = index / 588; V = index % 588 / 28; T = index % 28).
    /// Nil for any other scalar; `final` is nil when T = 0.
    public static func decompose(_ syllable: Unicode.Scalar) -> (initial: Character, medial: Character, final: Character?)? {
        let value = syllable.value
        guard value >= sBase, value < sBase + sCount else { return nil }
        let index = value - sBase
        let l = Int(index / nCount)
        let v = Int(index % nCount / tCount)
        let t = Int(index % tCount)
        return (initials[l], medials[v], t == 0 ? nil : finals[t - 1])
    }

    /// The precomposed syllable a grapheme spells: itself, L+V(+T) conjoining jamo, or an LV
    /// syllable + T. Nil otherwise.
    static func composedSyllable(_ scalars: [Unicode.Scalar]) -> Unicode.Scalar? {
        let v = scalars.map(\.value)
        let isL = { (x: UInt32) in (lBase..<lBase + 19).contains(x) }
        let isV = { (x: UInt32) in (vBase..<vBase + vCount).contains(x) }
        let isT = { (x: UInt32) in (tBase + 1..<tBase + tCount).contains(x) }
        let isS = { (x: UInt32) in (sBase..<sBase + sCount).contains(x) }
        let composed: UInt32
        switch v.count {
        case 1 where isS(v[0]):
            composed = v[0]
        case 2 where isL(v[0]) && isV(v[1]):
            composed = sBase + ((v[0] - lBase) * vCount + (v[1] - vBase)) * tCount
        case 3 where isL(v[0]) && isV(v[1]) && isT(v[2]):
            composed = sBase + ((v[0] - lBase) * vCount + (v[1] - vBase)) * tCount + (v[2] - tBase)
        case 2 where isS(v[0]) && (v[0] - sBase) % tCount == 0 && isT(v[1]):
            composed = v[0] + (v[1] - tBase)
        default:
            return nil
        }
        return Unicode.Scalar(composed)
    }
}
