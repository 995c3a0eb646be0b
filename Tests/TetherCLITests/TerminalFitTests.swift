import Testing

@testable import tether

/// The Tybe status line is cut to the terminal's width (wide Hangul counted twice), so
/// redrawing it in place never wraps and fills the screen.
@Suite struct TerminalFitTests {
    @Test func aShortLineIsKept() {
        #expect(fitToColumns("ready  sent 3", columns: 40) == "ready  sent 3")
    }

    @Test func aLongLineIsCutWithAnEllipsisWithinTheWidth() {
        let line = String(repeating: "status ", count: 40)
        let fitted = fitToColumns(line, columns: 79)
        #expect(fitted.hasSuffix("…"))
        #expect(fitted.reduce(0) { $0 + terminalColumns($1) } == 79)
    }

    @Test func hangulCountsTwoColumns() {
        #expect(terminalColumns("한") == 2)
        #expect(terminalColumns("a") == 1)
        #expect(terminalColumns("\u{301}") == 0)
        let fitted = fitToColumns("host: 안녕하세요 세계", columns: 12)
        #expect(fitted == "host: 안녕…")
        #expect(fitted.reduce(0) { $0 + terminalColumns($1) } <= 12)
    }

    @Test func noRoomGivesNothing() {
        #expect(fitToColumns("abc", columns: 0) == "")
        #expect(fitToColumns("abc", columns: 1) == "…")
    }
}
