import Foundation
import Testing
@testable import TetherCore
@testable import TetherSimulator

@Suite("Connection phases and timeouts", .timeLimit(.minutes(3)))
struct ConnectionPhaseTests {
    @Test func connectWalksEveryPhaseInOrder() async throws {
        let h = await Harness()
        let connection = await h.connection()
        let log = await EventLog(connection)
        try await h.run { try await connection.connect() }
        try await h.until { await log.phases.last == "connected" }
        #expect(await log.phases == ["connecting", "discoveringServices", "discoveringCharacteristics",
                                     "subscribingToNotifications", "discoveryComplete", "connected"])
        #expect(await connection.phase == .connected(h.echoID))
        #expect(await log.contains { $0 == .connected(h.echoID) })
        #expect(await connection.discoveredCharacteristics.map(\.path).contains(EchoPeripheral.output))
        #expect(await h.radio.isConnected(h.echoID))
    }

    @Test func connectionTimesOutAfterTenSecondsByDefault() async throws {
        let h = await Harness()
        await h.radio.setIgnoresConnections(h.echoID, true)
        let connection = await h.connection()
        let start = h.now
        let error = try await h.error { try await connection.connect() }
        #expect(error == .connectionTimeout)
        let elapsed = h.now - start
        #expect(elapsed >= .seconds(10) && elapsed < .milliseconds(10_050))
        #expect(await connection.phase == .idle)
    }

    @Test func connectionTimeoutIsConfigurable() async throws {
        let h = await Harness()
        await h.radio.setIgnoresConnections(h.echoID, true)
        var configuration = Harness.echoConfiguration
        configuration.connectionTimeout = .seconds(3)
        let connection = await h.connection(configuration)
        let start = h.now
        #expect(try await h.error { try await connection.connect() } == .connectionTimeout)
        #expect(h.now - start < .milliseconds(3_050))
    }

    @Test func discoveryTimesOutAfterFortySecondsAndDropsTheLink() async throws {
        let h = await Harness()
        await h.radio.inject(FaultRule(.subscribe, action: .noResponse))
        let connection = await h.connection()
        let start = h.now
        #expect(try await h.error { try await connection.connect() } == .connectionTimeout)
        let elapsed = h.now - start
        #expect(elapsed >= .seconds(40) && elapsed < .seconds(41))
        #expect(await connection.phase == .idle)
        try await h.until { await !h.radio.isConnected(h.echoID) }
    }

    @Test func missingServiceFailsWithServiceNotFound() async throws {
        let h = await Harness()
        await h.peripheral { $0.removeService(EchoPeripheral.service) }
        let connection = await h.connection()
        #expect(try await h.error { try await connection.connect() } == .serviceNotFound(EchoPeripheral.service))
        #expect(await connection.phase == .idle)
        try await h.until { await !h.radio.isConnected(h.echoID) }
    }

    @Test func missingCharacteristicFailsWithCharacteristicNotFound() async throws {
        let h = await Harness()
        await h.peripheral { $0.removeCharacteristic(EchoPeripheral.info) }
        let connection = await h.connection()
        #expect(try await h.error { try await connection.connect() } == .characteristicNotFound(EchoPeripheral.info.characteristic))
        try await h.until { await !h.radio.isConnected(h.echoID) }
    }

    @Test(arguments: [(UInt8(5), PairingFailureReason.insufficientAuthentication),
                      (8, .insufficientAuthorization), (14, .pairingInformationRemoved), (15, .insufficientEncryption)])
    func pairingErrorsOnSubscribeBecomePairingFailed(code: UInt8, reason: PairingFailureReason) async throws {
        let h = await Harness()
        await h.radio.inject(FaultRule(.subscribe, on: EchoPeripheral.output, action: .error(ATTError(code))))
        let connection = await h.connection()
        #expect(try await h.error { try await connection.connect() } == .pairingFailed(reason))
        #expect(await connection.phase == .idle)
    }

    @Test func otherSubscribeErrorsAreNotPairingFailures() async throws {
        let h = await Harness()
        await h.radio.inject(FaultRule(.subscribe, action: .error(.writeNotPermitted)))
        let connection = await h.connection()
        let error = try await h.error { try await connection.connect() }
        guard case .subscriptionFailed = error else {
            Issue.record("expected subscriptionFailed, got \(String(describing: error))")
            return
        }
    }

    @Test(arguments: [CentralState.poweredOff, .unauthorized, .unsupported])
    func connectFailsAtOnceWhenBluetoothIsUnusable(state: CentralState) async throws {
        let h = await Harness(centralState: state)
        let connection = await h.connection()
        let start = h.now
        #expect(try await h.error { try await connection.connect() } == .bluetoothUnavailable(state))
        #expect(h.now - start < .milliseconds(20))
    }

    @Test func connectWaitsForBluetoothWhileItsStateIsUnknown() async throws {
        let h = await Harness(centralState: .unknown)
        let connection = await h.connection()
        let task = Task { try await connection.connect() }
        try await h.until { await connection.phase == .waitingForBluetooth }
        await h.advance(.seconds(2))
        await h.radio.setCentralState(.poweredOn)
        try await h.run { try await task.value }
        #expect(await connection.isConnected)
    }

    @Test func waitingForBluetoothTimesOut() async throws {
        let h = await Harness(centralState: .unknown)
        let connection = await h.connection()
        #expect(try await h.error { try await connection.connect() } == .connectionTimeout)
    }

    @Test func disconnectDuringConnectCancelsTheAttempt() async throws {
        let h = await Harness()
        await h.radio.setIgnoresConnections(h.echoID, true)
        let connection = await h.connection()
        let attempt = Task { () -> BLEError? in
            do { try await connection.connect(); return nil } catch let error as BLEError { return error } catch { return nil }
        }
        try await h.until { await connection.phase == .connecting(h.echoID) }
        await h.advance(.seconds(1))
        try await h.run { await connection.disconnect() }
        #expect(try await h.run { await attempt.value } == .cancelled)
        #expect(await connection.phase == .idle)
    }

    @Test func anOldAttemptsTimerCannotTearDownANewConnection() async throws {
        let h = await Harness()
        await h.radio.setIgnoresConnections(h.echoID, true)
        let connection = await h.connection()
        let first = Task { try? await connection.connect() }
        try await h.until { await connection.phase == .connecting(h.echoID) }
        await h.advance(.seconds(6))
        try await h.run { await connection.disconnect() }
        _ = await first.value
        await h.radio.setIgnoresConnections(h.echoID, false)
        try await h.run { try await connection.connect() }
        // The first attempt's 10 s deadline passes while the new link is up.
        await h.advance(.seconds(8))
        #expect(await connection.isConnected)
        #expect(await h.radio.isConnected(h.echoID))
    }

    @Test func disconnectEndsNotificationStreamsAndGoesIdle() async throws {
        let h = await Harness()
        let connection = try await h.connected()
        let stream = await connection.notifications(for: EchoPeripheral.output)
        let ended = Task { () -> Bool in
            for await _ in stream {}
            return true
        }
        try await h.run { await connection.disconnect() }
        #expect(try await h.run { await ended.value })
        #expect(await connection.phase == .idle)
        try await h.until { await !h.radio.isConnected(h.echoID) }
        #expect(try await h.error { try await connection.write(Data([1]), to: EchoPeripheral.input, type: .withResponse) } == .notConnected)
    }
}

@Suite("Connect after disconnect", .timeLimit(.minutes(3)))
struct ConnectAfterDisconnectTests {
    @Test func connectDuringADisconnectionWaitsForItThenConnects() async throws {
        let h = await Harness()
        let connection = try await h.connected()
        let disconnecting = Task { await connection.disconnect() }
        try await h.until { await connection.phase == .disconnecting(h.echoID) }
        try await h.run { try await connection.connect() }
        _ = await disconnecting.value
        #expect(await connection.isConnected)
    }
}
