#if os(macOS) || os(Linux)
import Foundation
import Kiro
import Testing
import TetherCore
import TetherSimulator
@testable import TetherStudio

@Suite("Tether Studio: the Kiro screen")
struct KiroScreenTests {
    @MainActor
    @Test func thePanelsTheDayAndFocusFollowTheDevice() async throws {
        let world = await DeviceScreenWorld()
        let screen = KiroScreen(central: world.central, day: try KiroSampleDay.dayPack(), focusStore: InMemoryFocusSessionStore(),
                                emulator: world.emulators.kiro)
        await screen.start()
        #expect(screen.state().pages.map(\.name) == ["startOfDay", "overview", "taskIn", "settlement"])
        try await screen.perform("connect")
        // The panel may show the day before the app hears its write acknowledged (and logs it).
        let synced = try await until(screen, 30, "connected, the day on the panel and its write logged") { state in
            state.dot == "green" && state.pages.first { $0.name == "overview" }?.lines.contains { $0.contains("Review PRs") } == true
                && state.log.contains { $0.text == "→ dayPack" }
        }
        #expect(synced.shownPage == "startOfDay")
        // The device turns a page by itself, telling the app nothing (pages 1, 2 and 4 are local
        // navigation): the panel follows.
        let kiro = world.emulators.kiro
        await { @SimulationActor in kiro.show(.settlement) }()
        _ = try await until(screen, 15, "the device's own page turn shown") { $0.shownPage == "settlement" }

        try await screen.perform("simulate", ["button": .string("select"), "index": .number(1)])
        try await screen.perform("simulate", ["button": .string("enter")])
        try await screen.perform("simulate", ["button": .string("complete")])
        let focused = try await until(screen, 15, "a focus session closed") { !$0.focusSessions.isEmpty }
        #expect(focused.focusSessions.first?.title == "Write release notes")
        #expect(focused.focusSessions.first?.outcome == "completed")
        #expect(focused.log.contains { $0.text.contains("Write release notes") })

        // The day the app holds follows the device: the task it completed is done in it.
        let followed = try await until(screen, 15, "the completion in the day") { state in
            (try? JSONDecoder().decode(DayPack.self, from: Data(state.day.utf8)))?.topTasks[1].isCompleted == true
        }
        // An edited day (the one shown, so the completion stays) is pushed and the panel shows it.
        var day = try JSONDecoder().decode(DayPack.self, from: Data(followed.day.utf8))
        day.topTasks[0].title = "Ship <the> studio"
        let encoder = JSONEncoder()
        try await screen.perform("push", ["day": .string(String(decoding: try encoder.encode(day), as: UTF8.self))])
        _ = try await until(screen, 15, "the new title on the panel") { state in
            state.pages.first { $0.name == "overview" }?.lines.contains { $0.contains("Ship <the> studio") } == true
        }
        #expect(screen.state().day.contains("Ship <the> studio"))
        #expect(try JSONDecoder().decode(DayPack.self, from: Data(screen.state().day.utf8)).topTasks[1].isCompleted)
        await #expect(throws: StudioProtocolError("not a day: \"deviceMode\" is missing")) {
            try await screen.perform("push", ["day": .string(#"{"date":"2026-01-30"}"#)])
        }
        #expect(screen.state().dayError == "not a day: \"deviceMode\" is missing")
        let svg = String(decoding: try await screen.export("page-overview.svg").body, as: UTF8.self)
        #expect(svg.hasPrefix("<svg") && svg.contains("Ship &lt;the&gt; studio"))
        await #expect(throws: StudioProtocolError("Kiro exports page-<startOfDay|overview|taskIn|settlement>.svg")) { try await screen.export("x.svg") }
        await #expect(throws: StudioProtocolError.self) { try await screen.perform("simulate", ["button": .string("explode")]) }

        try await screen.perform("disconnect")
        _ = try await until(screen, 10, "disconnected") { $0.dot == "red" }
        await screen.stop()
    }

    @MainActor
    @Test func aDisconnectRightAfterConnectLeavesTheScreenIdleAndReady() async throws {
        let world = await DeviceScreenWorld()
        let screen = KiroScreen(central: world.central, day: try KiroSampleDay.dayPack(), emulator: world.emulators.kiro)
        await screen.start()
        try await screen.perform("connect")
        try await screen.perform("disconnect")
        let idle = try await until(screen, 15, "no connection under way") { !$0.connecting }
        #expect(idle.dot == "red")
        // Connect works again.
        try await screen.perform("connect")
        _ = try await until(screen, 30, "connected") { $0.dot == "green" }
        await screen.stop()
    }

    @MainActor
    @Test func syncClearLogAndShowPage() async throws {
        let world = await DeviceScreenWorld()
        let kiro = world.emulators.kiro
        let screen = KiroScreen(central: world.central, day: try KiroSampleDay.dayPack(), emulator: kiro)
        await screen.start()
        try await screen.perform("connect")
        _ = try await until(screen, 30, "connected and the day's write logged") { state in
            state.dot == "green" && state.log.contains { $0.text == "→ dayPack" }
        }
        try await screen.perform("clearLog")
        #expect(screen.state().log.isEmpty)

        // Sync writes the time and the day again (with response: the device has them on return).
        func dayPacks() async -> Int { await { @SimulationActor in kiro.commandsReceived.filter { $0 == .dayPack }.count }() }
        let before = await dayPacks()
        try await screen.perform("sync")
        #expect(await dayPacks() == before + 1)
        let synced = try await until(screen, 15, "the writes logged") { state in
            state.log.contains { $0.text == "→ time" } && state.log.contains { $0.text == "→ dayPack" }
        }
        #expect(synced.syncError == nil)

        // The simulator's page is turned from the studio; the panel shows it at once.
        try await screen.perform("showPage", ["page": .string("taskIn")])
        #expect(screen.state().shownPage == "taskIn")
        #expect(await { @SimulationActor in kiro.page }() == .taskIn)
        await screen.stop()
    }

    @MainActor
    @Test func aRealDevicesPagesAreDrawnFromTheDayPushed() async throws {
        let world = await DeviceScreenWorld()
        let screen = KiroScreen(central: world.central, day: try KiroSampleDay.dayPack())
        await screen.start()
        let state = screen.state()
        #expect(!state.simulated && state.shownPage == nil)
        #expect(state.pages.first { $0.name == "overview" }?.lines.contains { $0.contains("Review PRs") } == true)
        await #expect(throws: StudioProtocolError("connect to the Kiro first")) { try await screen.perform("sync") }
        await #expect(throws: StudioProtocolError("a real Kiro is used by hand")) {
            try await screen.perform("simulate", ["button": .string("wheel")])
        }
        await screen.stop()
    }
}
#endif
