import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
@testable import Kiro
@testable import KiroEmulator

@Suite("Kiro page rendering")
struct KiroPageRendererTests {
    static let status = KiroPageRenderer.Status(unixTime: 1_769_765_400, batteryLevel: 42, mode: .focus)

    @Test(arguments: KiroEmulator.Page.allCases)
    func textPagesAreFramedAtAFixedWidth(page: KiroEmulator.Page) throws {
        let day = try KiroSampleDay.dayPack()
        let task = TaskInPage(taskId: "t1", taskTitle: "Review PRs", taskDescription: "Look at the open pull requests and leave comments where needed.",
                              estimatedDuration: "30min", encouragement: "You can do it", focusChallengeActive: true)
        let text = KiroPageRenderer(width: 32).text(page, day: day, task: task, selected: 1, status: Self.status)
        let lines = text.split(separator: "\n")
        #expect(lines.count >= 5)
        // Every row is the frame's width (emoji aside, the sample's rows are plain text).
        let widths = Set(lines.filter { !$0.contains("☀") && !$0.contains("🌱") && !$0.contains("🔥") }.map(\.count))
        #expect(widths == [36])
        #expect(text.contains("42%") && text.contains("FOCUS"))
        #expect(text.contains("Fri 30 Jan  09:30"))
    }

    @Test func overviewMarksSelectionAndCompletion() throws {
        let text = KiroPageRenderer().text(.overview, day: try KiroSampleDay.dayPack(), task: nil, selected: 1, status: Self.status)
        #expect(text.contains("›[ ] Write release notes"))
        #expect(text.contains(" [x] Plan sprint"))
    }

    @Test func withoutADayThePanelWaits() {
        let text = KiroPageRenderer().text(.overview, day: nil, task: nil, selected: 0, status: Self.status)
        #expect(text.contains("Waiting for today's data"))
    }

    @Test func svgIsWellFormedAndEscapesText() throws {
        var day = try KiroSampleDay.dayPack()
        day.companionPhrase = "Tea & <cake> \"now\""
        let svg = KiroPageRenderer().svg(.overview, day: day, task: nil, selected: 0, status: Self.status)
        #expect(svg.hasPrefix("<svg") && svg.hasSuffix("</svg>"))
        #expect(svg.contains("Tea &amp; &lt;cake&gt; &quot;now&quot;"))
        let parser = XMLParser(data: Data(svg.utf8))
        #expect(parser.parse())
    }

    @Test func longWordsAreBrokenToTheWidth() {
        let lines = KiroPageRenderer(width: 24).wrap(String(repeating: "x", count: 60) + " end")
        #expect(lines == [String(repeating: "x", count: 24), String(repeating: "x", count: 24), String(repeating: "x", count: 12) + " end"])
    }
}
