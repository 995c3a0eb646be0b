import Foundation
import PropertyBased
import Testing
@testable import TetherSimulator
@testable import Tybe
@testable import TybeEmulator

/// The planner's keystrokes, typed into the emulator's hosts, give back the original text.
@Suite struct EmulatorRoundTripPropertyTests {
    @Test func arbitraryHangulRoundTripsThroughTheKoreanInputMethod() async {
        await propertyCheck(count: 300, input: ProtocolGen.syllables) { scalars in
            let text = String(String.UnicodeScalarView(scalars))
            let plan = TybePlanner.plan(text)
            var ime = KoreanInputMethod()
            for stroke in plan.keystrokes {
                guard let jamo = KoreanKeymap.jamo(for: stroke) else {
                    Issue.record("\(stroke.label) is not a jamo key")
                    return
                }
                ime.input(jamo)
            }
            ime.commit()
            #expect(ime.committed == text)
        }
    }

    @Test func printableASCIIRoundTripsThroughTheEnglishHost() async {
        await propertyCheck(count: 200, input: ProtocolGen.asciiText) { text in
            let plan = TybePlanner.plan(text)
            let typed = await { @SimulationActor () -> String in
                let host = TybeHost(inputSource: .english)
                for stroke in plan.keystrokes { host.press(stroke) }
                return host.text
            }()
            #expect(typed == text)
        }
    }
}
