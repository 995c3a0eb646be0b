import Foundation
import Testing
@testable import GripFit
@testable import TetherCore
@testable import TetherSimulator

@Suite("GripFit manager against the emulator", .timeLimit(.minutes(3)))
struct ManagerEndToEndTests {
    @Test func connectsReceivesDeviceInfoAndStreamsAtTenHertz() async throws {
        let world = await GripFitWorld()
        try await world.connect()
        #expect(await world.manager.connectionState == .connected)
        let readings = try await world.readings(for: .seconds(2))
        #expect((19...21).contains(readings.count))
        #expect(await world.manager.deviceInfo == GripFitDeviceInfo(firmwareVersion: "1.0"))
        #expect(await world.manager.sensorReadiness == .ready)
        #expect(readings.allSatisfy { $0.force == Double($0.raw) })
        // Timestamps come from the injected clock: 100 ms apart.
        let gaps = zip(readings, readings.dropFirst()).map { $1.receivedAt.timeIntervalSince($0.receivedAt) }
        #expect(gaps.allSatisfy { abs($0 - 0.1) < 0.02 })
    }

    @Test func discoveredDevicesListTheGripFit() async throws {
        let world = await GripFitWorld()
        await world.manager.startScanning()
        try await world.until { $0 != .scanning }
        let devices = await world.manager.discoveredDevices
        #expect(devices.map(\.id) == [world.id])
        #expect(devices.first?.name == "_GRIPFIT")
        // A scan that found something ends quietly at its timeout.
        #expect(await world.manager.connectionState == .disconnected)
    }

    @Test(arguments: [(CentralState.poweredOff, GripFitError.bluetoothOff), (.unauthorized, .bluetoothUnauthorized), (.unsupported, .bluetoothUnsupported)])
    func bluetoothProblemsSurfaceInTheState(state: CentralState, expected: GripFitError) async throws {
        let world = await GripFitWorld(centralState: state)
        await world.manager.startScanning()
        #expect(await world.manager.connectionState == .error(expected))
        #expect(expected.errorDescription?.isEmpty == false)
    }

    @Test func scanTimesOutAfterTenSecondsWithoutADevice() async throws {
        let world = await GripFitWorld(withDevice: false)
        let start = world.radio.timeline.now
        await world.manager.startScanning()
        #expect(try await world.until { $0 != .scanning } == .error(.scanTimeout))
        let elapsed = world.radio.timeline.now - start
        #expect(elapsed >= .seconds(10) && elapsed < .milliseconds(10_100))
    }

    @Test func connectTimesOutAfterFiveSeconds() async throws {
        let world = await GripFitWorld { $0.ignoresConnections = true }
        let start = world.radio.timeline.now
        try await world.connect()
        #expect(await world.manager.connectionState == .error(.connectionTimeout))
        #expect(world.radio.timeline.now - start < .seconds(6))
    }

    @Test(arguments: [0, 1, 2])
    func missingNUSPartsAreNotRecognized(variant: Int) async throws {
        let world = await GripFitWorld { peripheral in
            switch variant {
            case 0: peripheral.removeService(GripFitBLEConstants.nusServiceUUID)
            case 1: peripheral.removeCharacteristic(GripFitBLEConstants.writeCharacteristic)
            default: peripheral.removeCharacteristic(GripFitBLEConstants.notifyCharacteristic)
            }
        }
        try await world.connect()
        #expect(await world.manager.connectionState == .error(.deviceNotRecognized))
        try await world.advance(.milliseconds(50))
        #expect(await !world.radio.isConnected(world.id))
    }

    @Test func tareZeroesTheReadingsAtTheCurrentLoad() async throws {
        let world = await GripFitWorld()
        await world.emulator { $0.setProfile(.idle) }
        try await world.connect()
        let before = try await world.readings(for: .milliseconds(500))
        #expect(before.allSatisfy { $0.raw > 80_000 })
        let manager = world.manager
        #expect(try await world.status(after: { await manager.sendTare() }, where: { $0 == .tared }) == .tared)
        let after = try await world.readings(for: .milliseconds(500))
        #expect(!after.isEmpty && after.allSatisfy { abs($0.raw) < 1_000 })
        #expect(await world.emulator { $0.commandsReceived } == ["CMD:TARE"])
    }

    @Test func rateChangeIsConfirmedAndApplied() async throws {
        let world = await GripFitWorld()
        try await world.connect()
        let manager = world.manager
        #expect(try await world.status(after: { await manager.setSampleRate(ms: 50) }, where: { if case .rate = $0 { true } else { false } }) == .rate(ms: 50))
        let readings = try await world.readings(for: .seconds(1))
        #expect((19...21).contains(readings.count))
        // Out of range is clamped like the shipped app does.
        #expect(try await world.status(after: { await manager.setSampleRate(ms: 5) }, where: { if case .rate = $0 { true } else { false } }) == .rate(ms: 20))
        #expect(await world.emulator { $0.commandsReceived } == ["CMD:RATE:50", "CMD:RATE:20"])
    }

    @Test func pingIsAnsweredWithPong() async throws {
        let world = await GripFitWorld()
        try await world.connect()
        let manager = world.manager
        #expect(try await world.status(after: { await manager.sendPing() }, where: { $0 == .pong }) == .pong)
    }

    @Test func notReadyIsSurfacedAsAHardwareIssue() async throws {
        let world = await GripFitWorld()
        try await world.connect()
        await world.emulator { $0.setSensorFault(true) }
        try await world.advance(.milliseconds(200))
        #expect(await world.manager.sensorReadiness == .notReady)
        let manager = world.manager
        #expect(try await world.status(after: { await manager.sendTare() }, where: { $0 == .notReady || $0 == .tared }) == .notReady)
        // Quiet but alive: the watchdog's PING gets a PONG, so the link stays up.
        try await world.advance(.seconds(6))
        #expect(await world.manager.connectionState == .connected)
        await world.emulator { $0.setSensorFault(false) }
        try await world.advance(.milliseconds(300))
        #expect(await world.manager.sensorReadiness == .ready)
    }

    @Test func aSilentLinkIsPingedThenTreatedAsLostAndRecovered() async throws {
        let world = await GripFitWorld()
        try await world.connect()
        await world.emulator { $0.answersPing = false; $0.setSensorFault(true) }
        let start = world.radio.timeline.now
        try await world.until { $0 == .connecting }
        // No reading for 2 s, then 2 s without PONG.
        let elapsed = world.radio.timeline.now - start
        #expect(elapsed >= .seconds(4) && elapsed < .milliseconds(4_300))
        #expect(await world.emulator { $0.commandsReceived }.contains("CMD:PING"))
        await world.emulator { $0.answersPing = true; $0.setSensorFault(false) }
        try await world.until { $0 == .connected }
        let readings = try await world.readings(for: .seconds(1))
        #expect(!readings.isEmpty)
    }

    @Test func bluetoothGoingOffWhileConnectedShowsAsAnError() async throws {
        let world = await GripFitWorld()
        try await world.connect()
        await world.radio.setCentralState(.poweredOff)
        try await world.until { $0 == .error(.bluetoothOff) }
        try await world.advance(.seconds(2))
        #expect(await world.manager.connectionState == .error(.bluetoothOff), "not shown as reconnecting")
    }

    @Test func withoutReconnectionASilentLinkEndsAsLost() async throws {
        var configuration = BLEManager.Configuration()
        configuration.reconnectPolicy = .never
        let world = await GripFitWorld(configuration: configuration)
        try await world.connect()
        await world.emulator { $0.answersPing = false; $0.setSensorFault(true) }
        try await world.until { $0 == .error(.connectionLost) }
        #expect(await !world.radio.isConnected(world.id))
    }

    @Test func linkLossReconnectsWithBackoffDoublingToThirtySeconds() async throws {
        let world = await GripFitWorld()
        try await world.connect()
        let connection = try #require(await world.central.existingConnection(to: world.id))
        let events = await connection.events()
        let schedule = Task { () -> [Duration] in
            var delays: [Duration] = []
            for await event in events {
                if case .reconnectScheduled(_, let delay) = event { delays.append(delay) }
                if delays.count == 7 { break }
            }
            return delays
        }
        await world.radio.setInRange(world.id, false)
        try await world.until { $0 == .connecting }
        // 91 s of backoff, read from the events (time moves timer to timer; 10 ms steps on the look-alike).
        #expect(try await world.run(limit: .seconds(400)) { await schedule.value } == [1, 2, 4, 8, 16, 30, 30].map { Duration.seconds($0) })
        await world.radio.setInRange(world.id, true)
        try await world.until(limit: .seconds(120)) { $0 == .connected }
        #expect(!(try await world.readings(for: .milliseconds(500))).isEmpty)
    }

    @Test(arguments: [3, 7, 20])
    func fragmentedAndMergedNotificationsParseTheSame(chunk: Int) async throws {
        let world = await GripFitWorld(framing: .chunks(chunk))
        try await world.connect()
        let readings = try await world.readings(for: .seconds(2))
        #expect((18...21).contains(readings.count))
        #expect(await world.manager.deviceInfo?.firmwareVersion == "1.0")
        #expect(readings.allSatisfy { BLEMessageParser.readingRange.contains($0.raw) })
    }

    @Test func aSessionRecordsTheSqueeze() async throws {
        let world = await GripFitWorld()
        await world.emulator { $0.setProfile(.idle) }
        try await world.connect()
        let manager = world.manager
        _ = try await world.status(after: { await manager.sendTare() }, where: { $0 == .tared })
        await world.emulator { $0.squeeze(in: .milliseconds(100), peak: 300_000) }
        var session = GripSession(startedAt: GripFitWorld.epoch)
        for reading in try await world.readings(for: .seconds(3)) { session.record(reading) }
        let summary = session.summary()
        #expect(summary.maxForce > 290_000 && summary.maxForce < 310_000)
        #expect(summary.averageForce > 50_000 && summary.averageForce < summary.maxForce)
        #expect((29...31).contains(summary.sampleCount))
    }

    @Test func disconnectEndsTheLink() async throws {
        let world = await GripFitWorld()
        try await world.connect()
        let manager = world.manager
        try await world.run { await manager.disconnect() }
        #expect(await world.manager.connectionState == .disconnected)
        try await world.advance(.milliseconds(100))
        #expect(await !world.radio.isConnected(world.id))
    }
}
