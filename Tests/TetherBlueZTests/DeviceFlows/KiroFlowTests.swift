#if os(Linux)
import Foundation
import Kiro
import TetherBlueZ
import TetherBlueZPeripheral
import TetherCore
import TetherSimulator
import Testing
import KiroEmulator

/// The Kiro emulator hosted by `BlueZPeripheralHost` on one bluezoo adapter, and a
/// `KiroSession` over a connection of a `Central` over `BlueZDriver` on another, in real time.
struct KiroFlow {
    let pair: BlueZPair
    let central: Central
    let emulator: KiroEmulator
    let found: DiscoveredPeripheral
    let connection: ConnectionStateMachine
    let dataSource: InMemoryKiroDataSource
    let store: InMemoryFocusSessionStore
    let session: KiroSession
    /// Every session event from before `start()` on.
    let events: FlowStreamLog<KiroSessionEvent>

    static let firstTask = "abcdefgh-1234-5678-90ab-cdefghijklmn"
    /// The emulator's clock before the app syncs it: 2001-09-09, far from today.
    static let unsyncedDeviceTime: UInt32 = 1_000_000_000

    /// Finds this pair's Kiro (with KiroConnector's scan filter: other tests' Kiros are on the
    /// bus too), connects (KiroConnector's configuration and retries) and makes a session.
    static func make() async throws -> KiroFlow {
        SimulationLogging.bootstrapForTests()
        let emulator = KiroEmulator(unixTime: unsyncedDeviceTime)
        let id = PeripheralID(UUID())
        let pair = try await BlueZPair.make(recordingEvents: false) { radio in
            radio.add(emulator.makePeripheral(id: id))
            return id
        }
        do {
            let central = await pair.makeCentral()
            let clock = ContinuousClock()
            let found = try await flowStep("finding the Kiro", on: pair) {
                try await discoverOwnPeripheral(of: pair, on: central, filter: ScanFilter(services: [KiroBLEConstants.serviceUUID]))
            }
            let connection = try await flowStep("connecting the Kiro", on: pair) {
                try await within(20, "KiroConnector.connect") { try await KiroConnector.connect(to: found.id, on: central) }
            }
            let dataSource = InMemoryKiroDataSource(day: try KiroSampleDay.dayPack())
            let store = InMemoryFocusSessionStore()
            let session = KiroSession(transport: connection, dataSource: dataSource, clock: clock,
                                      timeZone: TimeZone(identifier: "UTC")!, focusStore: store)
            return KiroFlow(pair: pair, central: central, emulator: emulator, found: found, connection: connection,
                            dataSource: dataSource, store: store, session: session, events: FlowStreamLog(await session.events()))
        } catch {
            await pair.close()
            throw error
        }
    }

    /// Runs `body` with a flow whose session has started (time synced, day sent).
    static func run(_ body: (KiroFlow) async throws -> Void) async throws {
        try await withFlow({ try await make() }, close: { await $0.close() }) { flow in
            let session = flow.session
            try await flowStep("starting the session", on: flow.pair) { try await within(20, "session.start()") { try await session.start() } }
            try await body(flow)
        }
    }

    func close() async {
        events.cancel()
        await session.stop()
        await pair.close()
    }

    /// Has the emulator's scripted user do `action`, then waits for a session event (after
    /// the action) matching `predicate`; returns the events from the action on.
    @discardableResult
    func act(_ what: String, _ action: @escaping @SimulationActor @Sendable (KiroEmulator) -> Void,
             until predicate: @escaping @Sendable (KiroSessionEvent) -> Bool) async throws -> [KiroSessionEvent] {
        let start = events.count
        await emulator(action)
        let seen = try await events.wait(what) { $0.dropFirst(start).contains(where: predicate) }
        let after = Array(seen.dropFirst(start))
        return Array(after.prefix(through: after.firstIndex(where: predicate)!))
    }

    func emulator<T: Sendable>(_ body: @escaping @SimulationActor @Sendable (KiroEmulator) -> T) async -> T {
        let emulator = self.emulator
        return await onSimulationActor { body(emulator) }
    }
}

// Serialized, as the GripFit suite, to keep this suite's share of the shared rig small.
@Suite("Kiro over BlueZ (real time)", .serialized, .timeLimit(.minutes(2)))
struct KiroFlowTests {
    @Test func startSyncsTheTimeThenPushesTheDay() async throws {
        try await KiroFlow.run { flow in
            #expect(flow.found.id == flow.pair.remoteID)
            #expect(flow.found.displayName == KiroBLEConstants.deviceName)
            // start() returns once both writes were answered: the emulator has applied them.
            #expect(await flow.emulator { $0.commandsReceived } == [.time, .dayPack])
            #expect(await flow.emulator { $0.rejectedPackets } == 0)
            let sample = try KiroSampleDay.dayPack()
            #expect(await flow.emulator { $0.dayPack } == sample)
            #expect(await flow.emulator { $0.mode } == .interactive)
            // The device clock now follows the phone's, not its 2001 power-on value.
            let deviceTime = Double(await flow.emulator { $0.unixTime })
            #expect(abs(deviceTime - Date().timeIntervalSince1970) < 60, "device clock \(deviceTime)")
            let page = await flow.emulator { $0.renderText(.overview) }
            #expect(page.contains("Review PRs") && page.contains("[x] Plan sprint"), "\(page)")
            let events = try await flow.events.wait("the session's events of start()") { $0.count >= 2 }
            #expect(events == [.sent(.time), .sent(.dayPack)])
        }
    }

    @Test func aTaskEnteredAndCompletedOnTheDeviceReachesTheSession() async throws {
        try await KiroFlow.run { flow in
            let opened = try await flow.act("the task page sent", { $0.selectTask(at: 0); $0.enterTask() }, until: { $0 == .sent(.taskInPage) })
            let received = opened.compactMap { if case .received(let event) = $0 { event } else { nil } }
            #expect(received.map(\.type) == [.selectedTaskChanged, .enterTaskIn])
            #expect(received.allSatisfy { $0.id == KiroFlow.firstTask })
            #expect(await flow.dataSource.selectedTaskId == KiroFlow.firstTask)
            #expect(await flow.session.selectedTaskId == KiroFlow.firstTask)
            #expect(await flow.emulator { $0.page } == .taskIn)
            #expect(await flow.emulator { $0.taskInPage?.taskId } == KiroFlow.firstTask)
            #expect(await flow.emulator { $0.taskInPage?.taskTitle } == "Review PRs")

            let closed = try await flow.act("the focus session closed", { $0.completeTask() }, until: {
                if case .focusSessionClosed = $0 { true } else { false }
            })
            let completion = closed.compactMap { if case .received(let event) = $0 { event } else { nil } }
            #expect(completion.map(\.type) == [.completeTask])
            #expect(completion.first?.id == KiroFlow.firstTask)
            guard case .focusSessionClosed(let focus)? = closed.last else { Issue.record("no focus session"); return }
            #expect(focus.taskId == KiroFlow.firstTask)
            #expect(focus.outcome == .completed)
            // Stamped by the device clock, which the time sync set to the phone's.
            #expect(abs(focus.start.timeIntervalSinceNow) < 60, "focus start \(focus.start)")
            #expect(focus.end.map { $0 >= focus.start } == true)
            #expect(await flow.store.allSessions() == [focus])
            let day = await flow.dataSource.day
            #expect(day.topTasks[0].isCompleted)
            #expect(day.settlement.tasksCompleted == 2 && day.settlement.pointsEarned == 20)

            // The app's updated day goes back to the device.
            let session = flow.session
            try await within(10, "session.sync()") { try await session.sync() }
            #expect(await flow.emulator { $0.dayPack } == day)
            let page = await flow.emulator { $0.renderText(.overview) }
            #expect(page.contains("[x] Review PRs"), "\(page)")
        }
    }

    @Test func refreshWakeAndLowBatteryAreAnswered() async throws {
        try await KiroFlow.run { flow in
            try await flow.act("the DayPack after a refresh request", { $0.requestRefresh() }, until: { $0 == .sent(.dayPack) })
            // Sent is not yet received: the packets cross the real link and the host's virtual one
            // (bounded poll: the emulator signals nothing).
            try await within(BlueZRigs.patience, "the emulator receiving the second DayPack") {
                while await flow.emulator({ $0.commandsReceived.count }) < 3 { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(await flow.emulator { $0.commandsReceived } == [.time, .dayPack, .dayPack])

            try await flow.act("sleep", { $0.sleep() }, until: {
                if case .received(let event) = $0 { event.type == .deviceSleep } else { false }
            })
            let woken = try await flow.act("the DayPack after a wake", { $0.wake() }, until: { $0 == .sent(.dayPack) })
            #expect(woken.contains(.sent(.time)))
            // Sleep needs nothing; wake → Time + DayPack.
            try await within(BlueZRigs.patience, "the emulator receiving the DayPack after the wake") {
                while await flow.emulator({ $0.commandsReceived.count }) < 5 { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(await flow.emulator { $0.commandsReceived } == [.time, .dayPack, .dayPack, .time, .dayPack])

            let warned = try await flow.act("the low-battery alert", { $0.lowBattery(12) }, until: {
                if case .lowBattery = $0 { true } else { false }
            })
            #expect(warned.last == .lowBattery(level: 12))
            #expect(await flow.emulator { $0.rejectedPackets } == 0)
        }
    }

    @Test func packetsLongerThanOneWriteAreSplitAndReassembled() async throws {
        try await KiroFlow.run { flow in
            // Every field at its limit (40, 84 and 50 characters of 3-byte UTF-8): longer than
            // one write, so the connection splits it and the device reassembles it.
            let long = TaskInPage(
                taskId: KiroFlow.firstTask, taskTitle: String(repeating: "긴", count: KiroLimits.taskInPageTitleCharacters),
                taskDescription: String(repeating: "설명", count: 42), estimatedDuration: "90min",
                encouragement: String(repeating: "힘", count: KiroLimits.taskEncouragementCharacters), focusChallengeActive: true)
            let packet = try KiroCommand.taskInPage(long).packet()
            let maxWrite = try await flow.connection.maximumWriteValueLength(for: .withResponse)
            #expect(packet.count > maxWrite, "\(packet.count) bytes fit one write of \(maxWrite)")
            let session = flow.session
            try await within(10, "session.send(taskInPage)") { try await session.send(.taskInPage(long)) }
            #expect(await flow.emulator { $0.taskInPage } == long)
            #expect(await flow.emulator { $0.page } == .taskIn)
            #expect(await flow.emulator { $0.rejectedPackets } == 0)
        }
    }
}
#endif
