import Foundation
import Testing
import TetherTesting
@testable import Kiro
@testable import TetherCore
@testable import TetherSimulator
@testable import KiroEmulator

/// A Kiro emulator, a connection to it and a session on a test clock.
struct KiroWorld {
    let clock = ManualClock()
    let time: TestTime
    let radio: VirtualRadio
    let central: Central
    let emulator: KiroEmulator
    let id = PeripheralID(UUID(uuidString: "0000FFE0-0000-4000-8000-0000000000AA")!)
    let dataSource: InMemoryKiroDataSource
    let store = InMemoryFocusSessionStore()
    let session: KiroSession
    let connection: ConnectionStateMachine
    static let epoch = Date(timeIntervalSince1970: 1_769_763_600)

    init(form: KiroEventForm = .innerLength, day: DayPack? = nil) async throws {
        SimulationLogging.bootstrapForTests()
        radio = VirtualRadio(clock: clock, seed: 5)
        time = TestTime(clock: clock, radio: radio)
        emulator = KiroEmulator(eventForm: form)
        await radio.add(emulator.makePeripheral(id: id))
        central = Central(driver: await SimulatorBackedDriver.make(radio: radio), clock: clock)
        connection = await central.connection(to: id, configuration: KiroConnector.configuration)
        dataSource = InMemoryKiroDataSource(day: try day ?? KiroSampleDay.dayPack())
        let timeline = radio.timeline
        session = KiroSession(
            transport: connection, dataSource: dataSource, clock: clock,
            now: { KiroWorld.epoch.addingTimeInterval(timeline.now.seconds) }, timeZone: TimeZone(identifier: "UTC")!,
            focusStore: store)
    }

    func run<T: Sendable>(limit: Duration = .seconds(120), _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await time.run(limit: limit, operation)
    }

    func start() async throws {
        let session = self.session
        try await run { try await session.start() }
    }

    /// Lets time pass.
    func advance(_ duration: Duration) async throws {
        await time.advance(duration)
    }

    /// Performs a user action and waits until the session has emitted an event matching `until`.
    @discardableResult
    func act(_ action: @escaping @SimulationActor (KiroEmulator) -> Void, until predicate: @escaping @Sendable (KiroSessionEvent) -> Bool) async throws -> [KiroSessionEvent] {
        let events = await session.events()
        let emulator = self.emulator
        await { @SimulationActor in action(emulator) }()
        return try await run {
            var seen: [KiroSessionEvent] = []
            for await event in events {
                seen.append(event)
                if predicate(event) { break }
            }
            return seen
        }
    }

    func emulator<T: Sendable>(_ body: @escaping @SimulationActor (KiroEmulator) -> T) async -> T {
        let emulator = self.emulator
        return await { @SimulationActor in body(emulator) }()
    }
}

@Suite("Kiro session against the emulator", .timeLimit(.minutes(3)))
struct KiroSessionTests {
    static let firstTask = "abcdefgh-1234-5678-90ab-cdefghijklmn"

    @Test func startSyncsTheTimeThenSendsTheDay() async throws {
        let world = try await KiroWorld()
        try await world.start()
        try await world.advance(.milliseconds(200))
        #expect(await world.emulator { $0.commandsReceived } == [.time, .dayPack])
        #expect(await world.emulator { $0.dayPack } == (try KiroSampleDay.dayPack()))
        #expect(await world.emulator { $0.rejectedPackets } == 0)
        let deviceTime = await world.emulator { $0.unixTime }
        #expect(abs(Int(deviceTime) - Int(KiroWorld.epoch.timeIntervalSince1970 + world.radio.timeline.now.seconds)) <= 1)
        let page = await world.emulator { $0.renderText(.overview) }
        #expect(page.contains("Review PRs") && page.contains("[x] Plan sprint"))
    }

    /// §8.3's retries are for writes that failed, not for one the app's own disconnect ended.
    @Test func aWriteEndedByTheAppsDisconnectIsNotRetried() async throws {
        let world = try await KiroWorld()
        try await world.start()
        try await world.advance(.milliseconds(200))
        // The device never answers the next write: it is still waiting when the app disconnects.
        await world.radio.inject(FaultRule(.write, action: .noResponse, count: 1))
        let session = world.session, connection = world.connection, clock = world.clock
        let (failure, elapsed) = try await world.run { () -> (String, Duration) in
            let started = clock.now
            let sending = Task { try await session.send(.dayPack(try KiroSampleDay.dayPack())) }
            try await clock.sleep(for: .milliseconds(100))
            await connection.disconnect()
            do {
                try await sending.value
                return ("sent", started.duration(to: clock.now))
            } catch {
                return ("\(error)", started.duration(to: clock.now))
            }
        }
        #expect(failure != "sent")
        // Without the rule it would have tried twice more, 500 ms and 1 s later.
        #expect(elapsed < .milliseconds(500), "\(failure)")
    }

    @Test(arguments: [KiroEventForm.innerLength, .legacy])
    func enteringAndCompletingATaskIsAnsweredAndTimed(form: KiroEventForm) async throws {
        let world = try await KiroWorld(form: form)
        try await world.start()
        try await world.act({ $0.selectTask(at: 0); $0.enterTask() }, until: { $0 == .sent(.taskInPage) })
        #expect(await world.emulator { $0.page } == .taskIn)
        #expect(await world.emulator { $0.taskInPage?.taskId } == Self.firstTask)
        #expect(await world.dataSource.selectedTaskId == Self.firstTask)
        try await world.advance(.seconds(25 * 60))
        let events = try await world.act({ $0.completeTask() }, until: { if case .focusSessionClosed = $0 { true } else { false } })
        guard case .focusSessionClosed(let focus)? = events.last else { Issue.record("no focus session"); return }
        #expect(focus.taskId == Self.firstTask)
        #expect(focus.outcome == .completed)
        #expect(abs((focus.duration ?? 0) - 25 * 60) <= 2)
        #expect(await world.store.allSessions() == [focus])
        let day = await world.dataSource.day
        #expect(day.topTasks[0].isCompleted)
        #expect(day.settlement.tasksCompleted == 2 && day.settlement.pointsEarned == 20)
    }

    @Test func skippingClosesTheSessionAsSkipped() async throws {
        let world = try await KiroWorld()
        try await world.start()
        try await world.act({ $0.selectTask(at: 1); $0.enterTask() }, until: { $0 == .sent(.taskInPage) })
        let events = try await world.act({ $0.skipTask() }, until: { if case .focusSessionClosed = $0 { true } else { false } })
        guard case .focusSessionClosed(let focus)? = events.last else { Issue.record("no focus session"); return }
        #expect(focus.outcome == .skipped)
        #expect(await world.dataSource.skipped.contains(focus.taskId))
    }

    @Test func wheelSelectOnATaskSendsItsPage() async throws {
        let world = try await KiroWorld()
        try await world.start()
        try await world.act({ $0.selectTask(at: 2); $0.pressWheel() }, until: { $0 == .sent(.taskInPage) })
        #expect(await world.emulator { $0.taskInPage?.taskTitle } == "Plan sprint")
    }

    @Test func refreshRequestIsAnsweredWithTheDay() async throws {
        let world = try await KiroWorld()
        try await world.start()
        try await world.act({ $0.requestRefresh() }, until: { $0 == .sent(.dayPack) })
        try await world.advance(.milliseconds(200))
        #expect(await world.emulator { $0.commandsReceived } == [.time, .dayPack, .dayPack])
    }

    @Test func wakeSyncsTimeAndDataAndAStaleDeviceAsksForRefresh() async throws {
        let world = try await KiroWorld()
        try await world.start()
        try await world.act({ $0.sleep() }, until: { $0 == .received(KiroEvent(type: .deviceSleep, id: nil, timestamp: nil, batteryLevel: nil)) })
        try await world.advance(.seconds(2 * 3600))
        try await world.act({ $0.wake() }, until: { event in
            if case .received(let received) = event { return received.type == .requestRefresh }
            return false
        })
        try await world.advance(.seconds(1))
        let commands = await world.emulator { $0.commandsReceived }
        // Sleep needs nothing; wake → Time + DayPack; the stale device's refresh → DayPack.
        #expect(commands == [.time, .dayPack, .time, .dayPack, .dayPack])
    }

    @Test func lowBatteryBecomesAnAlert() async throws {
        let world = try await KiroWorld()
        try await world.start()
        let events = try await world.act({ $0.lowBattery(12) }, until: { if case .lowBattery = $0 { true } else { false } })
        #expect(events.last == .lowBattery(level: 12))
    }

    @Test func packetsLongerThanOneWriteAreSplitAndReassembled() async throws {
        let world = try await KiroWorld()
        try await world.start()
        let long = TaskInPage(
            taskId: Self.firstTask, taskTitle: String(repeating: "긴", count: 40),
            taskDescription: String(repeating: "설명", count: 42), estimatedDuration: "90min",
            encouragement: String(repeating: "힘", count: 50), focusChallengeActive: true)
        let packet = try KiroCommand.taskInPage(long).packet()
        let maxWrite = try await world.connection.maximumWriteValueLength(for: .withResponse)
        #expect(packet.count > maxWrite)
        let session = world.session
        try await world.run { try await session.send(.taskInPage(long)) }
        try await world.advance(.milliseconds(200))
        #expect(await world.emulator { $0.taskInPage } == long)
        #expect(await world.emulator { $0.rejectedPackets } == 0)
    }

    @Test func garbageFromTheDeviceIsDiscardedWithoutHarm() async throws {
        let world = try await KiroWorld()
        try await world.start()
        let radio = world.radio, id = world.id
        await { @SimulationActor in
            _ = radio.context(for: id)?.notify(Data([0x99, 0x05, 0x01]), on: KiroBLEConstants.notifyCharacteristic)
            _ = radio.context(for: id)?.notify(Data([0x11, 0x30, 0x01]), on: KiroBLEConstants.notifyCharacteristic)
        }()
        try await world.advance(.milliseconds(200))
        #expect(await world.session.discardedEvents == 2)
        try await world.act({ $0.requestRefresh() }, until: { $0 == .sent(.dayPack) })
    }
}
