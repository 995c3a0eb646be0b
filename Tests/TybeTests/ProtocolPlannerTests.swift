import Foundation
import Testing

@testable import Tybe

/// Renders keystrokes as the letters typed on a US keyboard, capitals for Shift.
func protocolKeyLetters(_ strokes: [KeyStroke]) -> String {
    String(strokes.compactMap { AsciiKeymap.character(for: $0) })
}

@Suite struct ProtocolPlannerTests {
    @Test func annyeonghaseyoTypesTheDubeolsikKeys() {
        let plan = TybePlanner.plan("안녕하세요")
        #expect(plan.keystrokes.map(\.key) == [.d, .k, .s, .s, .u, .d, .g, .k, .t, .p, .d, .y])
        #expect(plan.keystrokes.allSatisfy { $0.modifiers.isEmpty })
        #expect(plan.untypeable.isEmpty)
        #expect(plan.isComplete)
        #expect(plan.opcodes.count == 36)
    }

    @Test(arguments: [
        ("한", "gks"), ("글", "rmf"), ("닭", "ekfr"), ("값", "rkqt"), ("왜", "dho"), ("의", "dml"),
        ("없", "djqt"), ("했", "goT"), ("뚫", "Enfg"), ("안녕하세요", "dkssudgktpdy"),
    ])
    func referenceSelfChecks(text: String, keys: String) {
        #expect(protocolKeyLetters(TybePlanner.plan(text).keystrokes) == keys)
    }

    @Test func asciiLettersDigitsAndShift() {
        #expect(AsciiKeymap.keystroke(for: "a") == KeyStroke(.a))
        #expect(AsciiKeymap.keystroke(for: "Z") == KeyStroke(.z, .leftShift))
        #expect(AsciiKeymap.keystroke(for: "1") == KeyStroke(.digit1))
        #expect(AsciiKeymap.keystroke(for: "0") == KeyStroke(.digit0))
        #expect(AsciiKeymap.keystroke(for: "!") == KeyStroke(.digit1, .leftShift))
        #expect(AsciiKeymap.keystroke(for: ")") == KeyStroke(.digit0, .leftShift))
        #expect(AsciiKeymap.keystroke(for: "\"") == KeyStroke(.apostrophe, .leftShift))
        #expect(AsciiKeymap.keystroke(for: "|") == KeyStroke(.backslash, .leftShift))
        #expect(AsciiKeymap.keystroke(for: "~") == KeyStroke(.grave, .leftShift))
        #expect(AsciiKeymap.keystroke(for: " ") == KeyStroke(.space))
        #expect(AsciiKeymap.keystroke(for: "\n") == KeyStroke(.enter))
        #expect(AsciiKeymap.keystroke(for: "\r\n") == KeyStroke(.enter))
        #expect(AsciiKeymap.keystroke(for: "\t") == KeyStroke(.tab))
        #expect(AsciiKeymap.keystroke(for: "\u{7F}") == nil)
        #expect(AsciiKeymap.keystroke(for: "\u{1B}") == nil)
        #expect(AsciiKeymap.keystroke(for: "é") == nil)
        #expect(AsciiKeymap.keystroke(for: "가") == nil)
    }

    @Test func everyPrintableAsciiCharacterIsTypeable() {
        #expect(AsciiKeymap.typeableCharacters.count == 97)
        for character in AsciiKeymap.typeableCharacters {
            #expect(AsciiKeymap.keystroke(for: character) != nil, "\(character)")
        }
    }

    @Test func asciiRoundTripsThroughTheEnglishHost() {
        for character in AsciiKeymap.typeableCharacters {
            let stroke = AsciiKeymap.keystroke(for: character)!
            #expect(AsciiKeymap.character(for: stroke) == character, "\(character)")
            // Either Shift types the same character.
            var right = stroke
            if stroke.modifiers == .leftShift { right.modifiers = .rightShift }
            #expect(AsciiKeymap.character(for: right) == character)
        }
    }

    @Test func englishHostIgnoresShortcutsAndNonCharacterKeys() {
        #expect(AsciiKeymap.character(for: KeyStroke(.c, .leftCtrl)) == nil)
        #expect(AsciiKeymap.character(for: KeyStroke(.c, .rightGUI)) == nil)
        #expect(AsciiKeymap.character(for: KeyStroke(.c, [.leftAlt, .leftShift])) == nil)
        #expect(AsciiKeymap.character(for: KeyStroke(.backspace)) == nil)
        #expect(AsciiKeymap.character(for: KeyStroke(.arrowLeft)) == nil)
        #expect(AsciiKeymap.character(for: KeyStroke(.escape)) == nil)
        #expect(AsciiKeymap.character(for: KeyStroke(HIDKey(rawValue: 0x00))) == nil)
        #expect(AsciiKeymap.character(for: KeyStroke(.a, .rightShift)) == "A")
        #expect(AsciiKeymap.character(for: KeyStroke(.space, .leftShift)) == " ")
    }

    @Test func koreanJamoKeystrokes() {
        #expect(KoreanKeymap.keystrokes(forJamo: "ㅁ") == [KeyStroke(.a)])
        #expect(KoreanKeymap.keystrokes(forJamo: "ㄲ") == [KeyStroke(.r, .leftShift)])
        #expect(KoreanKeymap.keystrokes(forJamo: "ㅖ") == [KeyStroke(.p, .leftShift)])
        #expect(KoreanKeymap.keystrokes(forJamo: "ㅘ") == [KeyStroke(.h), KeyStroke(.k)])
        #expect(KoreanKeymap.keystrokes(forJamo: "ㅄ") == [KeyStroke(.q), KeyStroke(.t)])
        #expect(KoreanKeymap.keystrokes(forJamo: "ㅿ") == nil)  // archaic
        #expect(KoreanKeymap.keystrokes(forJamo: "\u{3164}") == nil)  // Hangul filler
        #expect(KoreanKeymap.keystrokes(forJamo: "a") == nil)
        #expect(KoreanKeymap.keystrokes(forJamo: "가") == nil)
    }

    @Test func everyModernJamoIsTypeableAndRoundTripsThroughTheKoreanHost() {
        #expect(KoreanKeymap.typeableJamo.count == 51)
        let compounds: Set<Character> = Set("ㅘㅙㅚㅝㅞㅟㅢㄳㄵㄶㄺㄻㄼㄽㄾㄿㅀㅄ")
        for jamo in KoreanKeymap.typeableJamo {
            let strokes = KoreanKeymap.keystrokes(forJamo: jamo)!
            let typed = strokes.map { KoreanKeymap.jamo(for: $0)! }
            if compounds.contains(jamo) {
                #expect(typed.count == 2, "\(jamo)")
                #expect(KoreanKeymap.compounds[jamo].map { [$0.0, $0.1] } == typed)
            } else {
                #expect(typed == [jamo], "\(jamo)")
            }
        }
    }

    @Test func koreanHostShiftRules() {
        let doubles: [(HIDKey, Character, Character)] = [
            (.r, "ㄱ", "ㄲ"), (.e, "ㄷ", "ㄸ"), (.q, "ㅂ", "ㅃ"), (.t, "ㅅ", "ㅆ"), (.w, "ㅈ", "ㅉ"),
            (.o, "ㅐ", "ㅒ"), (.p, "ㅔ", "ㅖ"),
        ]
        for (key, plain, shifted) in doubles {
            #expect(KoreanKeymap.jamo(for: KeyStroke(key)) == plain)
            #expect(KoreanKeymap.jamo(for: KeyStroke(key, .leftShift)) == shifted)
            #expect(KoreanKeymap.jamo(for: KeyStroke(key, .rightShift)) == shifted)
        }
        // Shift on any other letter types the plain jamo (libhangul's upper-case rows).
        for key in HIDKey.letters where !doubles.contains(where: { $0.0 == key }) {
            #expect(KoreanKeymap.jamo(for: KeyStroke(key, .leftShift)) == KoreanKeymap.jamo(for: KeyStroke(key)))
        }
        #expect(KoreanKeymap.jamo(for: KeyStroke(.a)) == "ㅁ")
        #expect(KoreanKeymap.jamo(for: KeyStroke(.z)) == "ㅋ")
        #expect(KoreanKeymap.jamo(for: KeyStroke(.a, .leftCtrl)) == nil)
        #expect(KoreanKeymap.jamo(for: KeyStroke(.digit1)) == nil)
        #expect(KoreanKeymap.jamo(for: KeyStroke(.space)) == nil)
    }

    @Test func decompose() {
        let gak = TybePlanner.decompose("각")
        #expect(gak?.initial == "ㄱ" && gak?.medial == "ㅏ" && gak?.final == "ㄱ")
        let first = TybePlanner.decompose("\u{AC00}")
        #expect(first?.initial == "ㄱ" && first?.medial == "ㅏ" && first?.final == nil)
        let last = TybePlanner.decompose("\u{D7A3}")
        #expect(last?.initial == "ㅎ" && last?.medial == "ㅣ" && last?.final == "ㅎ")
        let dalk = TybePlanner.decompose("닭")
        #expect(dalk?.initial == "ㄷ" && dalk?.medial == "ㅏ" && dalk?.final == "ㄺ")
        #expect(TybePlanner.decompose("\u{ABFF}") == nil)
        #expect(TybePlanner.decompose("\u{D7A4}") == nil)
        #expect(TybePlanner.decompose("a") == nil)
        #expect(TybePlanner.decompose("ㄱ") == nil)
    }

    @Test func lineEndings() {
        let plan = TybePlanner.plan("a\r\nb\rc\n")
        #expect(plan.keystrokes == [KeyStroke(.a), KeyStroke(.enter), KeyStroke(.b), KeyStroke(.enter), KeyStroke(.c), KeyStroke(.enter)])
    }

    @Test func untypeableCharactersAreReportedWithCharacterOffsets() {
        let plan = TybePlanner.plan("a😀b👨‍👩‍👧你é\u{1B}")
        #expect(plan.untypeable == [
            UntypeableCharacter(character: "😀", offset: 1),
            UntypeableCharacter(character: "👨‍👩‍👧", offset: 3),
            UntypeableCharacter(character: "你", offset: 4),
            UntypeableCharacter(character: "é", offset: 5),
            UntypeableCharacter(character: "\u{1B}", offset: 6),
        ])
        #expect(plan.keystrokes == [KeyStroke(.a), KeyStroke(.b)])
        #expect(!plan.isComplete)
    }

    @Test func conjoiningJamoSyllablesAreComposed() {
        // NFD "한" (L V T), NFD "가" (L V), and LV syllable + T.
        #expect(TybePlanner.plan("\u{1112}\u{1161}\u{11AB}").keystrokes == TybePlanner.plan("한").keystrokes)
        #expect(TybePlanner.plan("\u{1100}\u{1161}").keystrokes == TybePlanner.plan("가").keystrokes)
        #expect(TybePlanner.plan("\u{AC00}\u{11A8}").keystrokes == TybePlanner.plan("각").keystrokes)
        // A lone conjoining jamo or a syllable with an accent is not typeable.
        #expect(TybePlanner.plan("\u{1100}").untypeable.count == 1)
        #expect(TybePlanner.plan("가\u{0301}").untypeable.count == 1)
    }

    @Test func emptyText() {
        let plan = TybePlanner.plan("")
        #expect(plan.keystrokes.isEmpty && plan.opcodes.isEmpty && plan.untypeable.isEmpty)
    }

    @Test(arguments: [
        (KeyStroke(.a, .leftShift), "⇧a"), (KeyStroke(.c, [.leftCtrl]), "⌃c"),
        (KeyStroke(.a), "a"), (KeyStroke(.digit7), "7"), (KeyStroke(.digit0), "0"),
        (KeyStroke(.enter), "↩"), (KeyStroke(.escape), "esc"), (KeyStroke(.backspace), "⌫"),
        (KeyStroke(.tab), "⇥"), (KeyStroke(.space), "␣"), (KeyStroke(.arrowLeft), "←"),
        (KeyStroke(.arrowRight), "→"), (KeyStroke(.arrowUp), "↑"), (KeyStroke(.arrowDown), "↓"),
        (KeyStroke(.capsLock), "⇪"), (KeyStroke(.f1), "F1"), (KeyStroke(.f12), "F12"),
        (KeyStroke(.slash, .leftShift), "⇧/"), (KeyStroke(.minus), "-"), (KeyStroke(.backslash), "\\"),
        (KeyStroke(.apostrophe), "'"), (KeyStroke(.grave), "`"),
        (KeyStroke(.z, [.rightGUI, .rightShift, .leftAlt, .leftCtrl]), "⌃⌥⇧⌘z"),
        (KeyStroke(.enter, .leftGUI), "⌘↩"), (KeyStroke(.a, [.leftShift, .rightShift]), "⇧a"),
        (KeyStroke(HIDKey(rawValue: 0x64)), "0x64"), (KeyStroke(HIDKey(rawValue: 0xE0)), "0xE0"),
    ])
    func labels(stroke: KeyStroke, label: String) {
        #expect(stroke.label == label)
        #expect(stroke.description == label)
    }

    @Test func hidKeyValuesAndValidity() {
        #expect(HIDKey.a.rawValue == 0x04 && HIDKey.z.rawValue == 0x1D)
        #expect(HIDKey.digit1.rawValue == 0x1E && HIDKey.digit0.rawValue == 0x27)
        #expect(HIDKey.enter.rawValue == 0x28 && HIDKey.escape.rawValue == 0x29)
        #expect(HIDKey.backspace.rawValue == 0x2A && HIDKey.tab.rawValue == 0x2B && HIDKey.space.rawValue == 0x2C)
        #expect(HIDKey.capsLock.rawValue == 0x39 && HIDKey.f1.rawValue == 0x3A && HIDKey.f12.rawValue == 0x45)
        #expect(HIDKey.arrowRight.rawValue == 0x4F && HIDKey.arrowLeft.rawValue == 0x50)
        #expect(HIDKey.arrowDown.rawValue == 0x51 && HIDKey.arrowUp.rawValue == 0x52)
        #expect(HIDKey.delete.rawValue == 0x4C && HIDKey.home.rawValue == 0x4A && HIDKey.end.rawValue == 0x4D)
        #expect(HIDKey.pageUp.rawValue == 0x4B && HIDKey.pageDown.rawValue == 0x4E)
        #expect(!HIDKey(rawValue: 0x00).isValid && !HIDKey(rawValue: 0x03).isValid)
        #expect(HIDKey(rawValue: 0x04).isValid && HIDKey(rawValue: 0xE7).isValid)
        #expect(!HIDKey(rawValue: 0xE8).isValid && !HIDKey(rawValue: 0xFF).isValid)
        #expect(HIDModifiers.leftCtrl.rawValue == 0x01 && HIDModifiers.rightGUI.rawValue == 0x80)
        #expect(HIDModifiers.rightShift.hasShift && HIDModifiers.leftShift.hasShift && !HIDModifiers.leftCtrl.hasShift)
    }

    @Test func keyStrokeCodableRoundTrip() throws {
        let stroke = KeyStroke(.q, [.leftShift, .rightAlt])
        let data = try JSONEncoder().encode(stroke)
        #expect(try JSONDecoder().decode(KeyStroke.self, from: data) == stroke)
        let untypeable = UntypeableCharacter(character: "😀", offset: 3)
        #expect(try JSONDecoder().decode(UntypeableCharacter.self, from: JSONEncoder().encode(untypeable)) == untypeable)
    }
}
