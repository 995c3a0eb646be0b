import Testing
import TetherSimulator
@testable import Tybe
@testable import TybeEmulator

/// Feeds compatibility jamo (a string of them) to a fresh input method.
private func compose(_ jamo: String, commit: Bool = false) -> KoreanInputMethod {
    var ime = KoreanInputMethod()
    for j in jamo { ime.input(j) }
    if commit { ime.commit() }
    return ime
}

@Suite("Korean 2-set input method")
struct EmulatorKoreanInputMethodTests {
    @Test func initialAndMedialMakeASyllableAndAFinalJoinsIt() {
        var ime = KoreanInputMethod()
        ime.input("ㅇ")
        #expect(ime.preedit == "ㅇ")
        ime.input("ㅏ")
        #expect(ime.preedit == "아")
        ime.input("ㄴ")
        #expect(ime.preedit == "안")
        #expect(ime.committed == "")
        ime.commit()
        #expect(ime.committed == "안")
        #expect(ime.preedit == "")
    }

    @Test func annyeonghaseyoFromTheKeys() {
        // d k s s u d g k t p d y on a Dubeolsik host.
        let keys: [HIDKey] = [.d, .k, .s, .s, .u, .d, .g, .k, .t, .p, .d, .y]
        var ime = KoreanInputMethod()
        for key in keys { ime.input(try! #require(KoreanKeymap.jamo(for: KeyStroke(key)))) }
        #expect(ime.text == "안녕하세요")
        #expect(ime.committed == "안녕하세")
        #expect(ime.preedit == "요")
    }

    @Test func aFinalFollowedByAVowelMovesToTheNextSyllable() {
        #expect(compose("ㄱㅏㄱ").text == "각")
        #expect(compose("ㄱㅏㄱㅏ").text == "가가")
        #expect(compose("ㄱㅏㄱㅏ").committed == "가")
        #expect(compose("ㅇㅣㅆ").text == "있")
        #expect(compose("ㅇㅣㅆㅓ").text == "이써")
    }

    @Test(arguments: [
        ("ㅗㅏ", "ㅘ"), ("ㅗㅐ", "ㅙ"), ("ㅗㅣ", "ㅚ"), ("ㅜㅓ", "ㅝ"), ("ㅜㅔ", "ㅞ"), ("ㅜㅣ", "ㅟ"), ("ㅡㅣ", "ㅢ"),
    ])
    func compoundVowelsCombine(parts: String, vowel: String) {
        #expect(compose("ㅇ" + parts).text == compose("ㅇ" + vowel).text)
        #expect(compose("ㅇ" + parts).text.unicodeScalars.count == 1)
        // A lone compound vowel commits as the compatibility jamo.
        #expect(compose(parts, commit: true).committed == vowel)
    }

    @Test func vowelsThatDoNotCombineStartANewSyllable() {
        #expect(compose("ㅇㅏㅏ").text == "아ㅏ")
        #expect(compose("ㅇㅘㅏ").text == "와ㅏ")
        #expect(compose("ㅏㅓ", commit: true).committed == "ㅏㅓ")
    }

    @Test(arguments: [
        ("ㄱㅅ", "갃", "각사"), ("ㄴㅈ", "갅", "간자"), ("ㄴㅎ", "갆", "간하"), ("ㄹㄱ", "갉", "갈가"),
        ("ㄹㅁ", "갊", "갈마"), ("ㄹㅂ", "갋", "갈바"), ("ㄹㅅ", "갌", "갈사"), ("ㄹㅌ", "갍", "갈타"),
        ("ㄹㅍ", "갎", "갈파"), ("ㄹㅎ", "갏", "갈하"), ("ㅂㅅ", "값", "갑사"),
    ])
    func compoundFinalsCombineAndSplitBeforeAVowel(parts: String, syllable: String, split: String) {
        #expect(compose("ㄱㅏ" + parts).text == syllable)
        #expect(compose("ㄱㅏ" + parts + "ㅏ").text == split)
    }

    @Test func dalkAndGaps() {
        #expect(compose("ㄷㅏㄹㄱ").text == "닭")
        #expect(compose("ㄷㅏㄹㄱㅏ").text == "달가")
        #expect(compose("ㄱㅏㅂㅅ").text == "값")
        #expect(compose("ㄱㅏㅂㅅㅣ").text == "갑시")
    }

    @Test func wordsWithCompoundJamo() {
        #expect(compose("ㄱㅗㅐㄴㅊㅏㄴㅎㅇㅏㅇㅛ").text == "괜찮아요")
        #expect(compose("ㅇㅣㄹㄱㅇㅓㅇㅛ").text == "읽어요")
        #expect(compose("ㅂㅜㅔㄹㄱ").text == "뷁")
        #expect(compose("ㅂㅜㅔㄹㄱ").committed == "")
    }

    @Test func consonantsThatCannotJoinCommitAsJamo() {
        #expect(compose("ㄱㄴ").text == "ㄱㄴ")
        #expect(compose("ㄱㄴ").committed == "ㄱ")
        // ㄸ ㅃ ㅉ never end a syllable.
        #expect(compose("ㄱㅏㄸ").text == "가ㄸ")
        #expect(compose("ㄱㅏㄸㅏ").text == "가따")
        // A final that does not combine starts the next syllable.
        #expect(compose("ㄱㅏㄴㄷ").text == "간ㄷ")
        #expect(compose("ㄷㅏㄹㄱㅅ").text == "닭ㅅ")
    }

    @Test func backspaceRemovesOneJamoAtATime() {
        var ime = compose("ㄱㅗㅐㄴ")
        #expect(ime.preedit == "괜")
        let steps = ["괘", "고", "ㄱ", ""]
        for expected in steps {
            ime.backspace()
            #expect(ime.preedit == expected)
        }
        var split = compose("ㄷㅏㄹㄱ")
        split.backspace()
        #expect(split.text == "달")
        // With nothing being composed, backspace deletes committed text.
        var committed = compose("ㅎㅏㄴ", commit: true)
        committed.backspace()
        #expect(committed.text == "")
    }

    @Test func nonJamoCommitsThePreedit() {
        var ime = compose("ㅎㅏㄴ")
        ime.input(" ")
        #expect(ime.committed == "한 ")
        #expect(ime.preedit == "")
    }
}

@Suite("Tybe host")
@SimulationActor
struct EmulatorHostTests {
    @Test func englishHostTypesAllPrintableASCII() throws {
        let host = TybeHost()
        let printable = String((0x20...0x7E).map { Character(UnicodeScalar(UInt8($0))) })
        for character in printable { host.press(try #require(AsciiKeymap.keystroke(for: character))) }
        #expect(host.text == printable)
        host.press(KeyStroke(.enter))
        host.press(KeyStroke(.tab))
        #expect(host.text == printable + "\n\t")
        host.press(KeyStroke(.backspace))
        host.press(KeyStroke(.backspace))
        #expect(host.text == printable)
        host.press(KeyStroke(.backspace))
        #expect(host.text == String(printable.dropLast()))
        #expect(host.keystrokes.count == 100)
    }

    @Test func shortcutsAndNonTextKeysTypeNothing() {
        let host = TybeHost()
        host.press(KeyStroke(.c, .leftGUI))
        host.press(KeyStroke(.a, .leftCtrl))
        host.press(KeyStroke(.escape))
        host.press(KeyStroke(.f1))
        host.press(KeyStroke(.arrowLeft))
        host.press(KeyStroke(.backspace))
        #expect(host.text == "")
        #expect(host.keystrokes.count == 6)
        host.press(KeyStroke(.a, .rightShift))
        #expect(host.text == "A")
        host.clear()
        #expect(host.text == "" && host.keystrokes.isEmpty)
    }

    /// A screen follows the host through its signal: each change of the field is one (a missing
    /// one would leave the iteration waiting, ended by the time limit).
    @Test(.timeLimit(.minutes(1)))
    func everyChangeOfTheFieldIsSignalled() async {
        let host = TybeHost()
        var changes = host.changes().makeAsyncIterator()
        host.press(KeyStroke(.a))
        #expect(await changes.next() != nil)
        host.inputSource = .korean
        #expect(await changes.next() != nil)
        host.clear()
        #expect(await changes.next() != nil)
        #expect(host.text.isEmpty)
    }

    @Test func koreanHostComposesAnnyeonghaseyo() {
        let host = TybeHost(inputSource: .korean)
        for key: HIDKey in [.d, .k, .s, .s, .u, .d, .g, .k, .t, .p, .d, .y] { host.press(KeyStroke(key)) }
        #expect(host.text == "안녕하세요")
        #expect(host.preedit == "요")
    }

    @Test func koreanHostCommitsBeforeNonJamoKeysAndTypesThemNormally() {
        let host = TybeHost(inputSource: .korean)
        for stroke in [KeyStroke(.g), KeyStroke(.k), KeyStroke(.s), KeyStroke(.space), KeyStroke(.digit1),
                       KeyStroke(.digit1, .leftShift), KeyStroke(.r, .leftShift), KeyStroke(.k), KeyStroke(.enter)] {
            host.press(stroke)
        }
        #expect(host.text == "한 1!까\n")
        #expect(host.preedit == "")
        // Shift gives the tense consonant; on other letters it types the plain jamo.
        host.press(KeyStroke(.d, .leftShift))
        host.press(KeyStroke(.o, .leftShift))
        #expect(host.preedit == "얘")
    }

    @Test func koreanBackspaceEditsThePreeditThenCommittedText() {
        let host = TybeHost(inputSource: .korean)
        for key: HIDKey in [.g, .k, .s, .r, .m, .f] { host.press(KeyStroke(key)) } // 한글
        #expect(host.text == "한글")
        host.press(KeyStroke(.backspace))
        #expect(host.text == "한그")
        host.press(KeyStroke(.backspace))
        host.press(KeyStroke(.backspace))
        #expect(host.text == "한")
        // A committed syllable goes as a whole.
        host.press(KeyStroke(.backspace))
        #expect(host.text == "")
        host.press(KeyStroke(.backspace))
        #expect(host.text == "")
    }

    @Test func switchingTheInputSourceCommits() {
        let host = TybeHost(inputSource: .korean)
        host.press(KeyStroke(.g))
        host.press(KeyStroke(.k))
        host.inputSource = .english
        host.press(KeyStroke(.k))
        #expect(host.text == "하k")
        host.press(KeyStroke(.lang1))
        #expect(host.inputSource == .korean)
        host.press(KeyStroke(.k))
        #expect(host.text == "하kㅏ")
    }
}
