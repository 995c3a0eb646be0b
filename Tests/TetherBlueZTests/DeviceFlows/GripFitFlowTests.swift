#if os(Linux)
import Foundation
import GripFit
import TetherBlueZ
import TetherBlueZPeripheral
import TetherCore
import TetherSimulator
import Testing
import GripFitEmulator

/// The GripFit emulator hosted by `BlueZPeripheralHost` on one bluezoo adapter, and the
/// GripFit manager on a `Central` over `BlueZDriver` on another, in real time.
struct GripFitFlow {
    let pair: BlueZPair
    let central: Central
    let manager: BLEManager
    let emulator: GripFitEmulator
    /// Every status line the manager published, from before the connection on.
    let statuses: FlowStreamLog<GripFitStatus>

    static let firmware = "2.7.1"

    static func make(profile: ForceProfile = .standard, calibration: any GripCalibration = RawCalibration()) async throws -> GripFitFlow {
        SimulationLogging.bootstrapForTests()
        let emulator = GripFitEmulator(firmwareVersion: firmware, profile: profile)
        let id = PeripheralID(UUID())
        let pair = try await BlueZPair.make(recordingEvents: false) { radio in
            radio.add(emulator.makePeripheral(id: id))
            return id
        }
        let central = await pair.makeCentral()
        let manager = BLEManager(central: central, clock: ContinuousClock(), calibration: calibration)
        return GripFitFlow(pair: pair, central: central, manager: manager, emulator: emulator,
                           statuses: FlowStreamLog(await manager.statuses()))
    }

    static func run(profile: ForceProfile = .standard, calibration: any GripCalibration = RawCalibration(),
                    _ body: (GripFitFlow) async throws -> Void) async throws {
        try await withFlow({ try await make(profile: profile, calibration: calibration) }, close: { await $0.close() }, body)
    }

    func close() async {
        statuses.cancel()
        await manager.disconnect()
        await pair.close()
    }

    /// Scans, picks this pair's GripFit from the manager's device list (other tests' GripFits
    /// are on the bus too), connects and waits for the firmware's `S:READY` (sent after
    /// `D:GRIPFIT,<version>` once notifications are on); returns the device picked.
    @discardableResult
    func connect() async throws -> GripFitDevice {
        try await flowStep("connecting the GripFit", on: pair) { try await scanAndConnect() }
    }

    private func scanAndConnect() async throws -> GripFitDevice {
        let devices = FlowStreamLog(await manager.discoveredDeviceUpdates())
        defer { devices.cancel() }
        await manager.startScanning()
        let id = pair.remoteID
        let lists = try await devices.wait("this GripFit in the scan results", within: 10) { $0.contains { $0.contains { $0.id == id } } }
        let device = lists.last!.first { $0.id == id }!
        let manager = self.manager
        try await within(15, "manager.connect(to:)") { await manager.connect(to: device) }
        let state = await manager.connectionState
        guard state == .connected else { throw BlueZTestError("the manager is \(state) after connect(to:)") }
        try await statuses.next("S:READY") { $0 == .ready }
        return device
    }

    /// The next `count` readings the manager publishes (from now on).
    func readings(_ count: Int, within seconds: Double = 10, _ what: String = "readings") async throws -> [GripReading] {
        let log = FlowStreamLog(await manager.readings())
        defer { log.cancel() }
        return Array(try await log.wait("\(count) \(what)", within: seconds) { $0.count >= count }.prefix(count))
    }

    /// Runs `action` and returns the first status from then on that matches `predicate`.
    func status(after action: () async -> Void, where predicate: @escaping @Sendable (GripFitStatus) -> Bool) async throws -> GripFitStatus {
        let start = statuses.count
        await action()
        return try await statuses.next("a status", after: start, where: predicate)
    }

    func emulator<T: Sendable>(_ body: @escaping @SimulationActor @Sendable (GripFitEmulator) -> T) async -> T {
        let emulator = self.emulator
        return await onSimulationActor { body(emulator) }
    }
}

// Serialized: every pair adds two adapters and a scanning central to the shared rig, which all
// the BlueZ suites load at once; one GripFit pair at a time keeps this suite's share small.
@Suite("GripFit over BlueZ (real time)", .serialized, .timeLimit(.minutes(2)))
struct GripFitFlowTests {
    @Test func scanConnectAndDeviceInfo() async throws {
        try await GripFitFlow.run { flow in
            let device = try await flow.connect()
            #expect(device.id == flow.pair.remoteID)
            #expect(device.name == GripFitBLEConstants.deviceNamePrefix)
            #expect(await flow.manager.connectionState == .connected)
            #expect(await flow.manager.deviceInfo == GripFitDeviceInfo(firmwareVersion: GripFitFlow.firmware))
            #expect(await flow.manager.sensorReadiness == .ready)
            // The manager's subscription reached the firmware through bluetoothd and the host.
            #expect(await flow.pair.radio.isConnected(flow.pair.peripheralID))
        }
    }

    @Test func readingsStreamCalibrated() async throws {
        // Nobody squeezes: the load cell reads its 84 000-count baseline ± 150 counts of noise.
        let calibration = LinearCalibration(slope: 0.001, zeroOffset: 84_000)
        try await GripFitFlow.run(profile: .idle, calibration: calibration) { flow in
            // Subscribed before connecting: every reading of this link is logged.
            let log = FlowStreamLog(await flow.manager.readings())
            defer { log.cancel() }
            try await flow.connect()
            let readings = Array(try await log.wait("10 readings") { $0.count >= 10 }.prefix(10))
            #expect(readings.allSatisfy { (83_500...84_500).contains($0.raw) }, "raw: \(readings.map(\.raw))")
            #expect(readings.allSatisfy { $0.force == calibration.force(fromRaw: $0.raw) })
            #expect(readings.allSatisfy { abs($0.force) < 0.5 }, "force: \(readings.map(\.force))")
            // Not one value repeated ten times: they are live samples.
            #expect(Set(readings.map(\.raw)).count > 1)
            #expect(zip(readings, readings.dropFirst()).allSatisfy { $0.receivedAt <= $1.receivedAt })

            // The HX711 fault stops the stream and is reported in line after the last reading:
            // once S:NOT_READY is in, every reading the firmware sent has arrived, none lost.
            let statusesBefore = flow.statuses.count
            await flow.emulator { $0.setSensorFault(true) }
            try await flow.statuses.next("S:NOT_READY", after: statusesBefore) { $0 == .notReady }
            #expect(await flow.manager.sensorReadiness == .notReady)
            let sent = await flow.emulator { $0.readingsSent }
            // (The log's own consumer may lag the status log's by a few readings: let it catch up.)
            let received = try await log.wait("all \(sent) readings sent", within: 5) { $0.count >= sent }
            #expect(received.count == sent)
        }
    }

    @Test func tareZeroesTheReadingsAtTheCurrentLoad() async throws {
        try await GripFitFlow.run(profile: .idle) { flow in
            try await flow.connect()
            let before = try await flow.readings(5, "readings before the tare")
            #expect(before.allSatisfy { $0.raw > 80_000 }, "\(before.map(\.raw))")
            let manager = flow.manager
            #expect(try await flow.status(after: { await manager.sendTare() }, where: { $0 == .tared || $0 == .notReady }) == .tared)
            let after = try await flow.readings(5, "readings after the tare")
            #expect(after.allSatisfy { abs($0.raw) < 1_000 }, "\(after.map(\.raw))")
            // (The manager's stale-link watchdog may add a CMD:PING if readings stall.)
            #expect(await flow.emulator { $0.commandsReceived.filter { $0 != "CMD:PING" } } == ["CMD:TARE"])
            #expect(await flow.emulator { $0.tareOffset } > 80_000)
        }
    }

    @Test func aSqueezeIsRecordedWithItsPeak() async throws {
        try await GripFitFlow.run(profile: .idle) { flow in
            try await flow.connect()
            let manager = flow.manager
            #expect(try await flow.status(after: { await manager.sendTare() }, where: { $0 == .tared }) == .tared)
            let log = FlowStreamLog(await manager.readings())
            defer { log.cancel() }
            await flow.emulator { $0.squeeze(in: .milliseconds(200), peak: 300_000, ramp: .milliseconds(300), hold: .milliseconds(600), release: .milliseconds(300)) }
            // Until the squeeze has come and gone: a reading near the peak, then one back near zero.
            let readings = try await log.wait("the squeeze to rise and fall", within: 10) { readings in
                guard let top = readings.firstIndex(where: { $0.raw > 290_000 }) else { return false }
                return readings[top...].contains { $0.raw < 5_000 }
            }
            var session = GripSession(startedAt: readings[0].receivedAt)
            for reading in readings { session.record(reading) }
            let summary = session.summary()
            #expect((299_000...301_000).contains(summary.maxForce), "peak \(summary.maxForce)")
            #expect(summary.averageForce > 0 && summary.averageForce < summary.maxForce)
            #expect(summary.sampleCount == readings.count)
            // The rise is gradual (ramped), not one jump from rest to the peak.
            #expect(readings.contains { (20_000...280_000).contains($0.raw) })
        }
    }

    @Test func pingIsAnsweredWithPong() async throws {
        try await GripFitFlow.run { flow in
            try await flow.connect()
            let manager = flow.manager
            #expect(try await flow.status(after: { await manager.sendPing() }, where: { $0 == .pong }) == .pong)
            #expect(await flow.emulator { $0.commandsReceived }.contains("CMD:PING"))
        }
    }

    @Test func sampleRateChangeIsConfirmedAndApplied() async throws {
        try await GripFitFlow.run { flow in
            try await flow.connect()
            let manager = flow.manager
            let isRate: @Sendable (GripFitStatus) -> Bool = { if case .rate = $0 { true } else { false } }
            #expect(try await flow.status(after: { await manager.setSampleRate(ms: 50) }, where: isRate) == .rate(ms: 50))
            #expect(await flow.emulator { $0.rateMs } == 50)
            let fast = try await flow.readings(10, "readings at 50 ms")
            #expect(fast.allSatisfy { BLEMessageParser.readingRange.contains($0.raw) })
            // Out of range is clamped by the manager before it is sent.
            #expect(try await flow.status(after: { await manager.setSampleRate(ms: 5) }, where: isRate) == .rate(ms: 20))
            #expect(await flow.emulator { $0.rateMs } == 20)
            #expect(await flow.emulator { $0.commandsReceived.filter { $0.hasPrefix("CMD:RATE") } } == ["CMD:RATE:50", "CMD:RATE:20"])
            _ = try await flow.readings(10, "readings at 20 ms")
        }
    }

    @Test func whenTheDeviceHangsUpTheManagerReconnectsAndStreamsAgain() async throws {
        try await GripFitFlow.run(profile: .idle) { flow in
            try await flow.connect()
            let manager = flow.manager
            _ = try await flow.readings(3, "readings before the power cycle")
            #expect(try await flow.status(after: { await manager.sendTare() }, where: { $0 == .tared }) == .tared)
            let states = FlowStreamLog(await manager.connectionStates())
            defer { states.cancel() }
            let connection = try #require(await flow.central.existingConnection(to: flow.pair.remoteID))
            let events = FlowStreamLog(await connection.events())
            defer { events.cancel() }
            let statusesBefore = flow.statuses.count

            // The firmware power-cycles: it hangs up (PeripheralContext.disconnect()) and
            // forgets its tare. The host then disconnects the BlueZ central.
            await flow.emulator { $0.powerCycle() }
            let lost = try await events.next("the link drop") { if case .disconnected = $0 { true } else { false } }
            guard case .disconnected(let id, let error) = lost else { return }
            #expect(id == flow.pair.remoteID)
            #expect(error != nil, "an unrequested drop carries an error")
            try await states.next("connecting") { $0 == .connecting }
            // The persistent policy's first attempt is 1 s after the drop.
            try await states.next("connected again", within: 15) { $0 == .connected }
            try await events.next("reconnected") { if case .reconnected = $0 { true } else { false } }

            // The firmware greets the new subscription again.
            try await flow.statuses.next("S:READY after the reconnection", after: statusesBefore) { $0 == .ready }
            #expect(await manager.deviceInfo == GripFitDeviceInfo(firmwareVersion: GripFitFlow.firmware))
            #expect(await manager.sensorReadiness == .ready)
            let after = try await flow.readings(5, "readings after the reconnection")
            // The power cycle lost the tare: back to the untared baseline.
            #expect(after.allSatisfy { $0.raw > 80_000 }, "\(after.map(\.raw))")
            #expect(await flow.emulator { $0.tareOffset } == 0)
            #expect(await manager.connectionState == .connected)
            #expect(!events.all.contains { if case .failed = $0 { true } else { false } })
        }
    }

    @Test func disconnectingHangsUpOnTheDevice() async throws {
        try await GripFitFlow.run { flow in
            let activity = FlowStreamLog(flow.pair.host.activity)
            defer { activity.cancel() }
            try await flow.connect()
            try await activity.next("the central's connection at the host") {
                if case .centralConnected = $0 { true } else { false }
            }
            await flow.manager.disconnect()
            #expect(await flow.manager.connectionState == .disconnected)
            try await activity.next("the central's disconnection at the host") {
                if case .centralDisconnected = $0 { true } else { false }
            }
        }
    }
}
#endif
