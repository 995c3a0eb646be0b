import Foundation
import PropertyBased
import Testing

@testable import Tybe

/// Generators for the planner property tests.
enum ProtocolGen {
    /// Scalars weighted towards the interesting blocks: ASCII with controls, combining marks,
    /// conjoining and compatibility jamo, syllables, CJK, emoji, joiners and regional
    /// indicators, plus anything outside the surrogate range.
    static let scalar = Gen<Unicode.Scalar>.oneOf(
        Gen.unicodeScalar(in: "\u{0}"..."\u{7F}"),
        Gen.unicodeScalar(in: "\u{80}"..."\u{36F}"),
        Gen.unicodeScalar(in: "\u{1100}"..."\u{11FF}"),
        Gen.unicodeScalar(in: "\u{3130}"..."\u{318F}"),
        Gen.unicodeScalar(in: "\u{AC00}"..."\u{D7A3}"),
        Gen.unicodeScalar(in: "\u{4E00}"..."\u{4FFF}"),
        Gen.unicodeScalar(in: "\u{1F300}"..."\u{1F6FF}"),
        Gen.unicodeScalar(in: "\u{200B}"..."\u{200F}"),
        Gen.unicodeScalar(in: "\u{FE00}"..."\u{FE0F}"),
        Gen.unicodeScalar(in: "\u{1F1E6}"..."\u{1F1FF}"),
        Gen.unicodeScalar(in: "\u{0}"..."\u{D7FF}"),
        Gen.unicodeScalar(in: "\u{E000}"..."\u{10FFFF}")
    )

    /// Arbitrary strings of up to 60 scalars.
    static let text = scalar.array(of: 0...60).map { scalars in
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        return String(view)
    }

    /// Strings of precomposed Hangul syllables.
    static let syllables = Gen.unicodeScalar(in: "\u{AC00}"..."\u{D7A3}").array(of: 0...40)

    /// Printable ASCII plus newline and tab.
    static let asciiText = Gen<Character?>.element(of: AsciiKeymap.typeableCharacters).map { $0! }
        .string(of: 0...80)
}

@Suite struct ProtocolPropertyTests {
    @Test func theGreekQuestionMarkIsTypedAsTheSemicolonItCanonicallyIs() {
        #expect(Self.isPlannable("\u{37E}"))
        #expect(TybePlanner.keystrokes(for: "\u{37E}") == TybePlanner.keystrokes(for: ";"))
    }

    @Test func arbitraryTextIsTypedOrReported() async {
        await propertyCheck(count: 500, input: ProtocolGen.text, Gen.int(in: 0...300), Gen.uint8(in: 0...255)) {
            text, maxFrameBytes, seq in
            let characters = Array(text)
            let plan = TybePlanner.plan(text)

            // The untypeable list is ordered, in range, and names the right characters.
            let offsets = plan.untypeable.map(\.offset)
            #expect(offsets == offsets.sorted() && Set(offsets).count == offsets.count)
            for entry in plan.untypeable {
                #expect(characters.indices.contains(entry.offset))
                #expect(entry.offset < characters.count && String(characters[entry.offset]) == entry.character)
                #expect(TybePlanner.keystrokes(for: characters[entry.offset]) == nil)
            }

            // Every other character contributes its keystrokes, in order.
            let reported = Set(offsets)
            var expected: [KeyStroke] = []
            for (offset, character) in characters.enumerated() where !reported.contains(offset) {
                let strokes = TybePlanner.keystrokes(for: character)
                #expect(strokes?.isEmpty == false, "\(character.unicodeScalars.map(\.value))")
                #expect(Self.isPlannable(character))
                expected += strokes ?? []
            }
            #expect(plan.keystrokes == expected)
            #expect(plan.keystrokes.allSatisfy { $0.key.isValid })
            #expect(plan.opcodes == TybeOpcode.encode(plan.keystrokes))

            // Whatever the link size, the frames carry exactly these keystrokes.
            let frames = TybeFrameBuilder.chunk(opcodes: plan.opcodes, startingSeq: seq, maxFrameBytes: maxFrameBytes)
            var decoded: [KeyStroke] = []
            for (index, frame) in frames.enumerated() {
                #expect(frame.bytes.count <= max(5, min(255, maxFrameBytes)))
                #expect(frame.seq == seq &+ UInt8(truncatingIfNeeded: index))
                guard let parsed = try? TybeFrame(decoding: frame.bytes) else {
                    Issue.record("frame did not parse")
                    continue
                }
                let (opcodes, error) = TybeOpcode.decode(parsed.opcodes)
                #expect(error == nil)
                for case .key(let stroke) in opcodes { decoded.append(stroke) }
            }
            #expect(decoded == plan.keystrokes)
        }
    }

    /// What the contract says can be typed: ASCII (incl. CR LF), Hangul syllables and jamo.
    /// Judged on the canonical (NFC) form, as Swift compares characters: U+037E GREEK QUESTION
    /// MARK is canonically ";" and is typed as one (a seed found it).
    static func isPlannable(_ character: Character) -> Bool {
        String(character).precomposedStringWithCanonicalMapping.unicodeScalars.allSatisfy {
            $0.isASCII || (0x1100...0x11FF).contains($0.value) || (0x3131...0x3163).contains($0.value)
                || (0xAC00...0xD7A3).contains($0.value)
        }
    }

    @Test func hangulSyllablesRoundTripThroughDecompose() async {
        await propertyCheck(count: 300, input: ProtocolGen.syllables) { scalars in
            let text = String(String.UnicodeScalarView(scalars))
            var expectedJamo: [Character] = []
            for scalar in scalars {
                guard let parts = TybePlanner.decompose(scalar),
                    let l = TybePlanner.initials.firstIndex(of: parts.initial),
                    let v = TybePlanner.medials.firstIndex(of: parts.medial)
                else {
                    Issue.record("\(scalar) did not decompose")
                    continue
                }
                let t = parts.final.map { TybePlanner.finals.firstIndex(of: $0)! + 1 } ?? 0
                #expect(0xAC00 + (l * 21 + v) * 28 + t == Int(scalar.value))
                for jamo in [parts.initial, parts.medial] + (parts.final.map { [$0] } ?? []) {
                    if let (a, b) = KoreanKeymap.compounds[jamo] { expectedJamo += [a, b] } else { expectedJamo.append(jamo) }
                }
            }
            // A Dubeolsik host reading the keystrokes sees the same jamo run.
            let plan = TybePlanner.plan(text)
            #expect(plan.untypeable.isEmpty)
            #expect(plan.keystrokes.map { KoreanKeymap.jamo(for: $0) } == expectedJamo)
            // And the NFD spelling plans identically.
            #expect(TybePlanner.plan(text.decomposedStringWithCanonicalMapping).keystrokes == plan.keystrokes)
        }
    }

    @Test func asciiTextRoundTripsThroughAnEnglishHost() async {
        await propertyCheck(count: 300, input: ProtocolGen.asciiText) { text in
            let plan = TybePlanner.plan(text)
            #expect(plan.untypeable.isEmpty)
            let typed = String(plan.keystrokes.compactMap { AsciiKeymap.character(for: $0) })
            #expect(typed == text)
        }
    }
}
