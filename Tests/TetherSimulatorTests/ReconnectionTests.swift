import Foundation
import Testing
@testable import TetherCore
@testable import TetherSimulator

/// Records handler calls from `@Sendable` closures.
actor Calls {
    private(set) var names: [String] = []
    func add(_ name: String) { names.append(name) }
    nonisolated func record(_ name: String) { Task { await add(name) } }
}

@Suite("Link loss, reconnection, Bluetooth power and state restoration", .timeLimit(.minutes(3)))
struct ReconnectionTests {
    static func configuration(_ policy: ReconnectPolicy) -> ConnectionConfiguration {
        var configuration = Harness.echoConfiguration
        configuration.reconnectPolicy = policy
        return configuration
    }

    @Test func outOfRangeDropsAfterTheSupervisionTimeoutAndReconnectsWhenBack() async throws {
        let h = await Harness()
        let connection = try await h.connected(Self.configuration(.threeAttempts))
        let log = await EventLog(connection)
        let calls = Calls()
        await connection.setDisconnectionHandler { _, _ in calls.record("disconnected") }
        await connection.setReconnectionHandler { _ in calls.record("reconnected") }
        let stream = await connection.notifications(for: EchoPeripheral.output)
        let start = h.now
        await h.radio.setInRange(h.echoID, false)
        try await h.until { await log.contains { if case .disconnected = $0 { true } else { false } } }
        let dropped = h.now - start
        #expect(dropped >= .seconds(2) && dropped < .milliseconds(2_050))
        #expect(await log.contains { $0 == .disconnected(h.echoID, .disconnected("the link timed out")) })
        await h.radio.setInRange(h.echoID, true)
        try await h.until { await connection.isConnected }
        #expect(await log.contains { $0 == .reconnected(h.echoID) })
        #expect(await log.reconnectSchedule.first?.0 == 1)
        #expect(await log.reconnectSchedule.first?.1 == .seconds(1))
        try await h.until { await calls.names == ["disconnected", "reconnected"] }
        // The stream armed before the drop keeps flowing after the reconnection.
        try await h.run { try await connection.write(Data("again".utf8), to: EchoPeripheral.input, type: .withResponse) }
        let echo = try await h.run { () -> Data? in
            for await value in stream { return value }
            return nil
        }
        #expect(echo == Data("again".utf8))
    }

    @Test func threeAttemptsBackOffOneTwoFourSecondsThenGiveUp() async throws {
        let h = await Harness(osAutoReconnect: false)
        let connection = try await h.connected(Self.configuration(.threeAttempts))
        let log = await EventLog(connection)
        await h.radio.setInRange(h.echoID, false)
        try await h.until(limit: .seconds(300)) { await log.contains { if case .failed = $0 { true } else { false } } }
        let schedule = await log.reconnectSchedule
        #expect(schedule.map(\.0) == [1, 2, 3])
        #expect(schedule.map(\.1) == [.seconds(1), .seconds(2), .seconds(4)])
        #expect(await log.contains { $0 == .failed(.reconnectFailed(attempts: 3)) })
        #expect(await connection.phase == .idle)
    }

    @Test func persistentPolicyDoublesToThirtySeconds() async throws {
        let h = await Harness(osAutoReconnect: false)
        var configuration = Self.configuration(.persistent)
        configuration.connectionTimeout = .seconds(1)
        let connection = try await h.connected(configuration)
        let log = await EventLog(connection)
        await h.radio.setInRange(h.echoID, false)
        // 91 s of backoff, read from the events (time moves timer to timer; 10 ms steps on the look-alike).
        try await h.until(limit: .seconds(600)) { await log.reconnectSchedule.count >= 7 }
        #expect(await log.reconnectSchedule.prefix(7).map(\.1) == [1, 2, 4, 8, 16, 30, 30].map { Duration.seconds($0) })
        await h.radio.setInRange(h.echoID, true)
        try await h.until(limit: .seconds(120)) { await connection.isConnected }
    }

    @Test func noReconnectPolicyEndsInIdleAfterADrop() async throws {
        let h = await Harness(osAutoReconnect: false)
        let connection = try await h.connected(Self.configuration(.never))
        await h.radio.peripheralDisconnect(h.echoID)
        try await h.until { await connection.phase == .idle }
        #expect(await connection.lastError == .disconnected("the peripheral disconnected"))
    }

    @Test func peripheralInitiatedDisconnectIsFollowedByReconnection() async throws {
        let h = await Harness(osAutoReconnect: false)
        let connection = try await h.connected(Self.configuration(.threeAttempts))
        let log = await EventLog(connection)
        await h.radio.peripheralDisconnect(h.echoID)
        try await h.until { await log.contains { $0 == .reconnected(h.echoID) } }
        #expect(await connection.isConnected)
    }

    @Test func osAutoReconnectGoesThroughAutoReconnectingAndRediscovers() async throws {
        let h = await Harness(osAutoReconnect: true)
        let policy = ReconnectPolicy(schedule: .never, useOSAutoReconnect: true)
        let connection = try await h.connected(Self.configuration(policy))
        let log = await EventLog(connection)
        let calls = Calls()
        await connection.setAutoReconnectingHandler { _ in calls.record("autoReconnecting") }
        await connection.setReconnectionHandler { _ in calls.record("reconnected") }
        await h.radio.peripheralDisconnect(h.echoID)
        try await h.until { await log.contains { $0 == .reconnected(h.echoID) } }
        #expect(await log.phases == ["autoReconnecting", "discoveringServices", "discoveringCharacteristics",
                                     "subscribingToNotifications", "discoveryComplete", "connected"])
        #expect(await log.reconnectSchedule.isEmpty)
        try await h.until { await calls.names == ["autoReconnecting", "reconnected"] }
    }

    @Test func bluetoothOffGoesIdleAndOnReconnects() async throws {
        let h = await Harness()
        let connection = try await h.connected(Self.configuration(.threeAttempts))
        let log = await EventLog(connection)
        let calls = Calls()
        await connection.setBluetoothStateChangeHandler { calls.record("state:\($0)") }
        await connection.setBluetoothPoweredOnHandler { calls.record("poweredOn") }
        await h.radio.inject(FaultRule(.write, action: .noResponse, count: 1))
        let pending = Task { try await connection.write(Data([9]), to: EchoPeripheral.input, type: .withResponse) }
        // The write is unanswered at the radio (its fault taken) before Bluetooth goes off; a
        // few yields were not always enough through the look-alike's dispatch queues.
        try await h.until { await h.radio.faults.first?.remaining == 0 }
        await h.radio.setCentralState(.poweredOff)
        try await h.until { await connection.phase == .idle }
        let result = try await h.run { await pending.result }
        #expect(throws: BLEError.bluetoothUnavailable(.poweredOff)) { try result.get() }
        #expect(await log.contains { $0 == .disconnected(h.echoID, .bluetoothUnavailable(.poweredOff)) })
        await h.advance(.seconds(5))
        #expect(await connection.phase == .idle)
        await h.radio.setCentralState(.poweredOn)
        try await h.until { await connection.isConnected }
        try await h.until { await calls.names == ["state:poweredOff", "state:poweredOn", "poweredOn"] }
    }

    @Test func unauthorizedWhileConnectedDoesNotComeBackByItself() async throws {
        let h = await Harness()
        let connection = try await h.connected()
        await h.radio.setCentralState(.unauthorized)
        try await h.until { await connection.phase == .idle }
        await h.radio.setCentralState(.poweredOn)
        await h.advance(.seconds(3))
        #expect(await connection.phase == .idle)
    }

    @Test func stateRestorationReusesTheLinkTheOSKept() async throws {
        let h = await Harness()
        _ = try await h.connected()
        let serial = await h.radio.link(for: h.echoID)?.serial
        // The OS relaunches the app: a new driver and central, the link still up.
        let driver = await h.relaunchApp()
        let central = Central(driver: driver, clock: h.clock)
        let restored = Calls()
        await central.setRestorationHandler { ids in restored.record(ids.map(\.description).joined()) }
        await central.start()
        try await h.until { await central.restoredPeripherals == [h.echoID] }
        let connection = await central.connection(to: h.echoID, configuration: Harness.echoConfiguration)
        try await h.until { await connection.isConnected }
        #expect(await h.radio.link(for: h.echoID)?.serial == serial)
        try await h.until { await restored.names == [h.echoID.description] }
        let stream = await connection.notifications(for: EchoPeripheral.output)
        try await h.run { try await connection.write(Data("restored".utf8), to: EchoPeripheral.input, type: .withResponse) }
        let echo = try await h.run { () -> Data? in
            for await value in stream { return value }
            return nil
        }
        #expect(echo == Data("restored".utf8))
    }

    @Test func restoringStateWaitsForPowerOn() async throws {
        let h = await Harness(centralState: .unknown)
        let connection = await h.connection()
        await connection.restore()
        #expect(await connection.phase == .restoringState(h.echoID))
        await h.advance(.seconds(1))
        #expect(await connection.phase == .restoringState(h.echoID))
        await h.radio.setCentralState(.poweredOn)
        try await h.until { await connection.isConnected }
    }
}
