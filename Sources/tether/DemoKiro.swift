import Foundation
import Kiro
import TetherCore
import TetherSimulator
import KiroEmulator

/// Pushes a day to a Kiro and follows its events: `tether kiro push` and the demo's chapter.
struct KiroStory {
    let central: Central
    let radio: VirtualRadio?
    let emulator: KiroEmulator?
    let timeline: DemoTimeline
    let focusStore: any FocusSessionStore

    /// What happened, for the demo's checks.
    struct Outcome {
        var sent: [BLEDataType] = []
        var received: [EventLogType] = []
        var focusSessions: [FocusSession] = []
        var lowBattery: UInt8?
    }

    @discardableResult
    func push(_ day: DayPack, follow seconds: Double, script: Bool) async throws -> Outcome {
        timeline.step("Scanning for a Kiro (service FFE0)")
        let peripheral = try await within(45, "Kiro scan") { try await KiroConnector.find(on: central) }
        timeline.ok("found \(peripheral.displayName ?? "Kiro") (\(DiscoveredPeripheral.describe(rssi: peripheral.rssi)))")
        let connection = try await within(60, "Kiro connection") { try await KiroConnector.connect(to: peripheral.id, on: central) }
        timeline.ok("connected")

        let dataSource = InMemoryKiroDataSource(day: day)
        let session = KiroSession(transport: connection, dataSource: dataSource, focusStore: focusStore)
        await connection.setReconnectionHandler { _ in Task { try? await session.sync() } }
        let timeline = self.timeline
        let events = await session.events()
        let recorder = Task { () -> Outcome in
            var outcome = Outcome()
            for await event in events {
                switch event {
                case .received(let event):
                    outcome.received.append(event.type)
                    timeline.info("device → \(event.type.rawValue)\(event.id.map { " \($0)" } ?? "")\(event.timestamp.map { " @\($0)" } ?? "")")
                case .sent(let type):
                    outcome.sent.append(type)
                    timeline.info("app → \(type)")
                case .lowBattery(let level):
                    outcome.lowBattery = level
                    timeline.info("⚠︎ Kiro battery low: \(level)%")
                case .focusSessionClosed(let focus):
                    outcome.focusSessions.append(focus)
                    timeline.info(String(format: "focus session for %@ closed (%@, %.0f s)", focus.taskId, focus.outcome.rawValue, focus.duration ?? 0))
                case .sendFailed(let type, let why):
                    timeline.fail("could not send \(type): \(why)")
                }
            }
            return outcome
        }

        timeline.step("Syncing the time and sending the day (\(try KiroCommand.dayPack(day).packet().count)-byte DayPack)")
        try await within(30, "Kiro sync") { try await session.start() }
        if let emulator {
            try await waitFor(5, "the device to show the day") { await emulator.dayPack != nil }
            print(await emulator.renderText(.startOfDay))
            print(await emulator.renderText(.overview))
        }

        if script, let emulator {
            timeline.step("A user picks the first task, works on it, completes it")
            await emulator.selectTask(at: 0)
            try await Task.sleep(for: .milliseconds(500))
            await emulator.enterTask()
            try await waitFor(5, "the task page") { await emulator.taskInPage != nil }
            print(await emulator.renderText(.taskIn))
            try await Task.sleep(for: .seconds(2))
            await emulator.completeTask()
            try await Task.sleep(for: .milliseconds(500))
            timeline.step("The device asks for fresh data, then warns of a low battery")
            await emulator.requestRefresh()
            await emulator.lowBattery(15)
            try await Task.sleep(for: .milliseconds(800))
            print(await emulator.renderText(.overview))
        } else {
            timeline.step("Following the device's events for \(Int(seconds)) s")
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        }
        await session.stop()
        return await recorder.value
    }

    private func waitFor(_ seconds: Double, _ what: String, _ condition: @escaping @Sendable () async -> Bool) async throws {
        _ = try await within(seconds, "waiting for \(what)") { () -> Bool in
            while !(await condition()) { try await Task.sleep(for: .milliseconds(20)) }
            return true
        }
    }
}

/// The demo's Kiro chapter: a day pushed, a task entered and completed, a refresh request,
/// with the rendered pages shown.
struct KiroDemoChapter {
    let central: Central
    let radio: VirtualRadio
    let emulator: KiroEmulator
    let timeline: DemoTimeline

    func run() async throws {
        print("\nKiro — E-ink desk companion\n")
        let story = KiroStory(central: central, radio: radio, emulator: emulator, timeline: timeline, focusStore: InMemoryFocusSessionStore())
        let outcome = try await story.push(try KiroSampleDay.dayPack(), follow: 0, script: true)
        guard outcome.sent.prefix(2) == [.time, .dayPack] else { throw CLIError("expected Time then DayPack first, got \(outcome.sent)") }
        guard outcome.sent.contains(.taskInPage) else { throw CLIError("the session did not answer EnterTaskIn with a TaskInPage") }
        guard outcome.focusSessions.contains(where: { $0.outcome == .completed }) else { throw CLIError("no focus session was closed") }
        guard outcome.sent.filter({ $0 == .dayPack }).count >= 2 else { throw CLIError("RequestRefresh was not answered with a DayPack") }
        guard outcome.lowBattery == 15 else { throw CLIError("the low-battery alert did not surface") }
        guard await emulator.dayPack?.topTasks.first?.isCompleted == true else { throw CLIError("the device does not show the task completed") }
        timeline.ok("Kiro in sync: \(outcome.received.count) events answered, \(outcome.sent.count) commands sent")
    }
}
