import Foundation
import Testing
@testable import TetherCore
@testable import TetherSimulator

/// A client declaring a live link dead (`linkLost(reason:)`), and first connections retried by
/// the core (`firstConnectionRetry`): both follow a policy, so no client runs a loop of its own.
@Suite("Declared link loss and first-connection retries", .timeLimit(.minutes(2)))
struct LinkLostTests {
    static func configuration(_ policy: ReconnectPolicy, firstConnectionRetry: ReconnectPolicy = .never) -> ConnectionConfiguration {
        var configuration = Harness.echoConfiguration
        configuration.reconnectPolicy = policy
        configuration.firstConnectionRetry = firstConnectionRetry
        configuration.connectionTimeout = .seconds(1)
        return configuration
    }

    @Test func aLinkDeclaredLostIsDroppedAndReconnectsByThePolicy() async throws {
        let h = await Harness(osAutoReconnect: false)
        let connection = try await h.connected(Self.configuration(.threeAttempts))
        let log = await EventLog(connection)
        let stream = await connection.notifications(for: EchoPeripheral.output)
        let reason = BLEError.disconnected("no answer to PING")
        try await h.run { await connection.linkLost(reason: reason) }
        #expect(await log.contains { $0 == .disconnected(h.echoID, reason) })
        #expect(await connection.lastError == reason)
        // The radio saw the link go: the driver was told to cancel it.
        try await h.until { await !h.radio.isConnected(h.echoID) }
        try await h.until { await connection.isConnected }
        #expect(await log.contains { $0 == .reconnected(h.echoID) })
        #expect(await log.reconnectSchedule.first?.0 == 1)
        #expect(await log.reconnectSchedule.first?.1 == .seconds(1))
        // The subscription came back with the link: the stream armed before still flows.
        try await h.run { try await connection.write(Data("back".utf8), to: EchoPeripheral.input, type: .withResponse) }
        let echo = try await h.run { () -> Data? in
            for await value in stream { return value }
            return nil
        }
        #expect(echo == Data("back".utf8))
    }

    @Test func withoutAPolicyALinkDeclaredLostStaysDown() async throws {
        let h = await Harness(osAutoReconnect: false)
        let connection = try await h.connected(Self.configuration(.never))
        try await h.run { await connection.linkLost(reason: .disconnected("silent")) }
        try await h.until { await connection.phase == .idle }
        await h.advance(.seconds(10))
        #expect(await connection.phase == .idle)
        #expect(await !h.radio.isConnected(h.echoID))
    }

    @Test func onlyAConnectedLinkCanBeDeclaredLost() async throws {
        let h = await Harness()
        let connection = await h.connection(Self.configuration(.threeAttempts))
        let log = await EventLog(connection)
        await connection.linkLost(reason: .disconnected("nothing to lose"))
        #expect(await connection.phase == .idle)
        #expect(await log.contains { if case .disconnected = $0 { true } else { false } } == false)
    }

    @Test func aPendingWriteFailsWithTheReason() async throws {
        let h = await Harness(osAutoReconnect: false)
        let connection = try await h.connected(Self.configuration(.never))
        await h.radio.inject(FaultRule(.write, action: .noResponse, count: 1))
        let pending = Task { try await connection.write(Data([1]), to: EchoPeripheral.input, type: .withResponse) }
        try await h.until { await h.radio.faults.first?.remaining == 0 }
        try await h.run { await connection.linkLost(reason: .disconnected("silent")) }
        let result = await pending.result
        #expect(throws: BLEError.disconnected("silent")) { try result.get() }
    }

    @Test func disconnectingDuringADeclaredLossStaysDisconnected() async throws {
        let h = await Harness(osAutoReconnect: false)
        let connection = try await h.connected(Self.configuration(.threeAttempts))
        await connection.linkLost(reason: .disconnected("silent"))
        try await h.run { await connection.disconnect() }
        #expect(await connection.phase == .idle)
        await h.advance(.seconds(10))
        #expect(await connection.phase == .idle)
        #expect(await !h.radio.isConnected(h.echoID))
        #expect(await connection.declaredLost == nil)
    }

    @Test func bluetoothGoingOffDuringADeclaredLossForgetsIt() async throws {
        let h = await Harness(osAutoReconnect: false)
        let connection = try await h.connected(Self.configuration(.threeAttempts))
        await connection.linkLost(reason: .disconnected("silent"))
        await h.radio.setCentralState(.poweredOff)
        try await h.until { await connection.phase == .idle }
        #expect(await connection.declaredLost == nil)
        await h.radio.setCentralState(.poweredOn)
        // It comes back as after any link lost to Bluetooth, and a later disconnect is plain.
        try await h.until { await connection.isConnected }
        try await h.run { await connection.disconnect() }
        #expect(await connection.phase == .idle)
        #expect(await connection.discoveredCharacteristics.isEmpty)
    }

    @Test("Bluetooth resetting (or back to unknown) drops a live link without callbacks; power-on brings it back, subscribed",
          arguments: [CentralState.resetting, .unknown])
    func bluetoothResetDropsAndRestoresTheLink(_ transient: CentralState) async throws {
        let h = await Harness(osAutoReconnect: false)
        let connection = try await h.connected(Self.configuration(.threeAttempts))
        let log = await EventLog(connection)
        let stream = await connection.notifications(for: EchoPeripheral.output)
        await h.radio.setCentralState(transient)
        try await h.until { await connection.phase == .idle }
        #expect(await log.contains { $0 == .disconnected(h.echoID, .bluetoothUnavailable(transient)) })
        #expect(await connection.lastError == .bluetoothUnavailable(transient))
        await h.radio.setCentralState(.poweredOn)
        try await h.until { await connection.isConnected }
        // The subscription came back with the link: the stream armed before still flows.
        try await h.run { try await connection.write(Data("after reset".utf8), to: EchoPeripheral.input, type: .withResponse) }
        let echo = try await h.run { () -> Data? in
            for await value in stream { return value }
            return nil
        }
        #expect(echo == Data("after reset".utf8))
    }

    @Test func aReconnectWaitingForItsTimeWhenBluetoothResetsComesBackAtPowerOn() async throws {
        let h = await Harness(osAutoReconnect: false)
        // One reconnection attempt, 2 s after the loss: it must not be spent while Bluetooth resets.
        let connection = try await h.connected(Self.configuration(ReconnectPolicy(schedule: .delays([.seconds(2)]))))
        await h.radio.peripheralDisconnect(h.echoID)
        try await h.until { await connection.phase == .autoReconnecting(h.echoID) }
        await h.radio.setCentralState(.resetting)
        await h.advance(.seconds(5))
        #expect(await connection.phase == .idle)
        await h.radio.setCentralState(.poweredOn)
        try await h.until { await connection.isConnected }
    }

    @Test func aFirstConnectionMeetingAResetWaitsForBluetoothAndSucceeds() async throws {
        let h = await Harness(osAutoReconnect: false)
        await h.radio.setIgnoresConnections(h.echoID, true)
        let connection = await h.connection(Self.configuration(.never))
        let attempt = Task { try await connection.connect() }
        try await h.until { await connection.phase == .connecting(h.echoID) }
        await h.radio.setCentralState(.resetting)
        try await h.until { await connection.phase == .waitingForBluetooth }
        await h.radio.setIgnoresConnections(h.echoID, false)
        await h.radio.setCentralState(.poweredOn)
        // The caller was never told it failed: its connect() completes.
        try await h.run { try await attempt.value }
        #expect(await connection.isConnected)
    }

    @Test func aRetriedFirstConnectionMeetsBluetoothGoingOff() async throws {
        let h = await Harness(osAutoReconnect: false)
        await h.radio.setIgnoresConnections(h.echoID, true)
        let connection = await h.connection(Self.configuration(.never, firstConnectionRetry: ReconnectPolicy(schedule: .delays([.seconds(1), .seconds(2)]))))
        let log = await EventLog(connection)
        let attempt = Task { try await connection.connect() }
        try await h.until { await log.reconnectSchedule.count == 1 }
        await h.radio.setCentralState(.poweredOff)
        let result = try await h.run { await attempt.result }
        #expect(throws: BLEError.bluetoothUnavailable(.poweredOff)) { try result.get() }
        #expect(await connection.phase == .idle)
    }

    @Test func aRetriedFirstConnectionWaitsForBluetoothThatIsResetting() async throws {
        let h = await Harness(osAutoReconnect: false)
        await h.radio.setIgnoresConnections(h.echoID, true)
        let connection = await h.connection(Self.configuration(.never, firstConnectionRetry: ReconnectPolicy(schedule: .delays([.seconds(1), .seconds(2)]))))
        let log = await EventLog(connection)
        let attempt = Task { try await connection.connect() }
        try await h.until { await log.reconnectSchedule.count == 1 }
        await h.radio.setCentralState(.resetting)
        await h.radio.setIgnoresConnections(h.echoID, false)
        // The retry meets Bluetooth resetting: it waits for it rather than asking the driver.
        try await h.until { await connection.phase == .waitingForBluetooth }
        await h.radio.setCentralState(.poweredOn)
        try await h.run { try await attempt.value }
        #expect(await connection.isConnected)
    }

    @Test func aFirstConnectionIsRetriedByItsPolicyAndSucceedsWhenTheDeviceAnswers() async throws {
        let h = await Harness(osAutoReconnect: false)
        await h.radio.setIgnoresConnections(h.echoID, true)
        let connection = await h.connection(Self.configuration(.never, firstConnectionRetry: ReconnectPolicy(schedule: .delays([.seconds(1), .seconds(2), .seconds(4)]))))
        let log = await EventLog(connection)
        let start = h.now
        let attempt = Task { try await connection.connect() }
        // Two timed-out attempts (1 s each) and their pauses (1 s, 2 s); then the device answers.
        try await h.until { await log.reconnectSchedule.count == 2 }
        await h.radio.setIgnoresConnections(h.echoID, false)
        try await h.run { try await attempt.value }
        #expect(await connection.isConnected)
        #expect(await log.reconnectSchedule.map(\.1) == [.seconds(1), .seconds(2)])
        let took = h.now - start
        #expect(took >= .seconds(4) && took < .seconds(6), "\(took)")
    }

    @Test func aFirstConnectionThatKeepsFailingThrowsAfterTheLastRetry() async throws {
        let h = await Harness(osAutoReconnect: false)
        await h.radio.setIgnoresConnections(h.echoID, true)
        let connection = await h.connection(Self.configuration(.never, firstConnectionRetry: ReconnectPolicy(schedule: .delays([.seconds(1), .seconds(2)]))))
        let log = await EventLog(connection)
        let start = h.now
        let error = try await h.error { try await connection.connect() }
        #expect(error == .connectionTimeout)
        // Three attempts of 1 s with pauses of 1 s and 2 s between them.
        let took = h.now - start
        #expect(took >= .seconds(6) && took < .seconds(7), "\(took)")
        #expect(await log.reconnectSchedule.map(\.0) == [1, 2])
        #expect(await connection.phase == .idle)
    }

    @Test func aMissingServiceIsNotRetried() async throws {
        let h = await Harness(osAutoReconnect: false)
        await h.peripheral { $0.removeService(EchoPeripheral.service) }
        let connection = await h.connection(Self.configuration(.never, firstConnectionRetry: ReconnectPolicy(schedule: .delays([.seconds(1)]))))
        let log = await EventLog(connection)
        let error = try await h.error { try await connection.connect() }
        #expect(error == .serviceNotFound(EchoPeripheral.service))
        #expect(await log.reconnectSchedule.isEmpty)
    }

    @Test func aConnectRightAfterAnAttemptFailedPastLinkUpWaitsForThatLinkToGo() async throws {
        let h = await Harness(osAutoReconnect: false)
        var wrong = Harness.echoConfiguration
        wrong.requiredCharacteristics.append(CharacteristicPath(service: EchoPeripheral.service, characteristic: "54455448-4543-484F-8000-0000000000FF"))
        let connection = await h.connection(wrong)
        let failed = try await h.error { try await connection.connect() }
        guard case .characteristicNotFound = failed else {
            Issue.record("expected characteristicNotFound, got \(String(describing: failed))")
            return
        }
        // At once: the cancelled link's disconnection is still on its way.
        await connection.adopt(Harness.echoConfiguration)
        try await h.run { try await connection.connect() }
        await h.advance(.seconds(5))
        #expect(await connection.isConnected)
        #expect(await h.radio.isConnected(h.echoID))
        try await h.run { try await connection.write(Data("still here".utf8), to: EchoPeripheral.input, type: .withResponse) }
    }

    @Test func aStreamArmedWhileADisconnectFinishesBelongsToTheNextConnection() async throws {
        let h = await Harness(osAutoReconnect: false)
        let connection = try await h.connected()
        let old = await connection.notifications(for: EchoPeripheral.output)
        let closing = Task { await connection.disconnect() }
        try await h.until { await connection.phase.name == "disconnecting" }
        // A client connecting again at once: it arms its stream, then connects behind the
        // disconnection still under way.
        let fresh = await connection.notifications(for: EchoPeripheral.output)
        let opening = Task { try await connection.connect() }
        try await h.run {
            await closing.value
            try await opening.value
        }
        let oldEnded = try await h.run { () -> Bool in
            for await _ in old { return false }
            return true
        }
        #expect(oldEnded)
        try await h.run { try await connection.write(Data("next".utf8), to: EchoPeripheral.input, type: .withResponse) }
        let echo = try await h.run { () -> Data? in
            for await value in fresh { return value }
            return nil
        }
        #expect(echo == Data("next".utf8))
    }
}
