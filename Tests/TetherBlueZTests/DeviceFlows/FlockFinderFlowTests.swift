#if os(Linux)
import FlockFinder
import Foundation
import TetherBlueZ
import TetherBlueZPeripheral
import TetherCore
import TetherSimulator
import TetherTesting
import Testing
import FlockFinderEmulator
import FlockFinderStorage

/// The FlockFinder emulator hosted by `BlueZPeripheralHost` on one bluezoo adapter, and the
/// FlockFinder client (with an in-memory detection store) on a `Central` over `BlueZDriver` on
/// another, in real time.
struct FlockFinderFlow {
    let pair: BlueZPair
    let central: Central
    let emulator: FlockFinderEmulator
    let store: DetectionStore
    let client: FlockFinderClient

    static let location = Location(latitude: 37.77, longitude: -122.42, horizontalAccuracy: 8)

    /// `rig`: the shared rig by default; a rig of the test's own where the client must take the
    /// first detector it finds (auto-connect), which on the shared rig may be another test's.
    static func make(rig: (any BlueZTestRig)? = nil) async throws -> FlockFinderFlow {
        SimulationLogging.bootstrapForTests()
        // Scans every 200 ms (the firmware's 500 ms would do too, only slower).
        let emulator = FlockFinderEmulator(seed: 3, scanInterval: .milliseconds(200))
        let id = PeripheralID(UUID())
        let pair = try await BlueZPair.make(rig: rig, recordingEvents: false) { radio in
            radio.add(emulator.makePeripheral(id: id))
            return id
        }
        let central = await pair.makeCentral()
        let store: DetectionStore
        do {
            store = try DetectionStore.inMemory(locationProvider: FixedLocationProvider(location))
        } catch {
            await pair.close()
            throw error
        }
        let client = FlockFinderClient(central: central, store: store, clock: ContinuousClock(), rssiInterval: .seconds(1))
        return FlockFinderFlow(pair: pair, central: central, emulator: emulator, store: store, client: client)
    }

    static func run(_ body: (FlockFinderFlow) async throws -> Void) async throws {
        try await withFlow({ try await make() }, close: { await $0.close() }, body)
    }

    /// Runs `body` with a flow on a rig of its own (``BlueZRigs/makePrivate()``, stopped afterwards).
    static func runAlone(_ body: (FlockFinderFlow) async throws -> Void) async throws {
        let rig = try await BlueZRigs.makePrivate()
        defer { rig.stop() }
        try await withFlow({ try await make(rig: rig) }, close: { await $0.close() }, body)
    }

    func close() async {
        await client.disconnect()
        await pair.close()
    }

    /// Scans, picks this pair's detector from the client's device list (other tests'
    /// detectors are on the shared bus too) and connects; returns the states seen until
    /// connected.
    @discardableResult
    func connect() async throws -> [ConnectionState] {
        try await flowStep("connecting the detector", on: pair) { try await pickAndConnect() }
    }

    private func pickAndConnect() async throws -> [ConnectionState] {
        let states = FlowStreamLog(await client.connectionStates())
        defer { states.cancel() }
        let devices = FlowStreamLog(await client.deviceUpdates())
        defer { devices.cancel() }
        await client.startScanning(timeout: Patience.duration(.seconds(10)), autoConnect: false)
        let id = pair.remoteID
        try await devices.wait("this detector in the scan results") { $0.contains { $0.contains { $0.id == id } } }
        let client = self.client
        try await within(20, "client.connect(to:)") { await client.connect(to: id) }
        return try await states.wait("the client connected", within: 20) { $0.contains(.connected) }
    }

    /// Scans and lets the client connect to the first detector advertising the service (on a
    /// rig of the test's own, that is this pair's); returns the states seen until connected.
    @discardableResult
    func autoConnect() async throws -> [ConnectionState] {
        try await flowStep("auto-connecting", on: pair) {
            let states = FlowStreamLog(await client.connectionStates())
            defer { states.cancel() }
            await client.startScanning(timeout: Patience.duration(.seconds(10)))
            return try await states.wait("the client connected", within: 20) { $0.contains(.connected) }
        }
    }

    func emulator<T: Sendable>(_ body: @escaping @SimulationActor @Sendable (FlockFinderEmulator) -> T) async -> T {
        let emulator = self.emulator
        return await onSimulationActor { body(emulator) }
    }
}

// Serialized, as the GripFit suite, to keep this suite's share of the shared rig small.
@Suite("FlockFinder over BlueZ (real time)", .serialized, .timeLimit(.minutes(2)))
struct FlockFinderFlowTests {
    @Test func scanningAutoConnectsThroughTheSpecStates() async throws {
        try await FlockFinderFlow.runAlone { flow in
            let states = try await flow.autoConnect()
            #expect(states.map(\.rawValue) == ["Disconnected", "Scanning...", "Connecting...", "Discovering Services...", "Connected"])
            let devices = await flow.client.discoveredDevices
            #expect(devices.map(\.id) == [flow.pair.remoteID])
            #expect(devices.first?.advertisesService == true)
            #expect(devices.first?.name == FlockFinderBLEConstants.advertisedName)
            #expect(await flow.client.lastError == nil)
            #expect(await flow.pair.radio.isConnected(flow.pair.peripheralID))
        }
    }

    @Test func pickingTheDetectorFromTheListConnectsThroughTheSpecStates() async throws {
        try await FlockFinderFlow.run { flow in
            let states = try await flow.connect()
            #expect(states.map(\.rawValue) == ["Disconnected", "Scanning...", "Connecting...", "Discovering Services...", "Connected"])
            #expect(await flow.client.lastError == nil)
        }
    }

    @Test func detectionsArriveParsedAndAreStoredAboveTheConfidenceThreshold() async throws {
        try await FlockFinderFlow.run { flow in
            // WiFi hits carry 0.9, BLE hits 0.85: only the camera is kept.
            await flow.store.setMinimumConfidence(0.88)
            try await flow.connect()
            let detections = FlowStreamLog(await flow.client.detections())
            defer { detections.cancel() }
            let started = Date()
            await flow.emulator {
                $0.add(.flockCamera(path: FlockEmitter.fixed(10)))
                $0.add(.raven(path: FlockEmitter.fixed(10)))
            }
            let received = try await detections.wait("two detections", within: 10) { $0.count >= 2 }
            let sent = await flow.emulator { $0.detectionsSent }
            // Exactly what the firmware sent, in order (each emitter once: 10 s cooldown).
            #expect(received.map(\.detection) == Array(sent.prefix(received.count)))
            #expect(received.count == 2)

            let camera = try #require(received.first { $0.detection.type == .flockSafety })
            #expect(camera.detection.confidence == 0.9)
            #expect(camera.detection.mac == "70:c9:4e:3a:21:07")
            #expect(camera.detection.ssid == "Flock-3A2107")
            #expect(camera.detection.deviceUptimeMs.map { $0 > 0 } == true)
            #expect((-100 ... -30).contains(camera.detection.rssi))
            let stored = try #require(camera.stored)
            #expect(stored.receivedAt >= started && stored.receivedAt <= Date())
            #expect(stored.location == FlockFinderFlow.location)
            #expect(await flow.store.recent.first?.id == stored.id)

            let raven = try #require(received.first { $0.detection.type != .flockSafety })
            #expect(raven.detection.confidence == 0.85)
            #expect(raven.detection.mac == "12:34:56:ab:cd:ef")
            #expect(raven.stored == nil)
            #expect(try await flow.store.countsByType() == [.flockSafety: 1])
            #expect(await flow.client.parseErrors == 0)
        }
    }

    @Test func malformedNotificationsAreSkippedAndCounted() async throws {
        try await FlockFinderFlow.run { flow in
            try await flow.connect()
            let detections = FlowStreamLog(await flow.client.detections())
            defer { detections.cancel() }
            await flow.emulator {
                $0.sendTruncatedDetection()
                $0.sendGarbage()
                $0.add(.flockCamera(path: FlockEmitter.fixed(10)))
            }
            // The camera's detection follows the two bad notifications on the same characteristic.
            let received = try await detections.next("the camera's detection") { $0.detection.type == .flockSafety }
            #expect(received.detection.mac == "70:c9:4e:3a:21:07")
            #expect(await flow.client.parseErrors == 2)
            #expect(await flow.client.connectionState == .connected)
        }
    }

    @Test func debugStreamRunsFromStreamOnToStreamOffAndPingIsAnswered() async throws {
        try await FlockFinderFlow.run { flow in
            try await flow.connect()
            let client = flow.client
            let updates = FlowStreamLog(await client.streamUpdates())
            defer { updates.cancel() }
            await flow.emulator {
                $0.add(.ordinaryAccessPoint(path: FlockEmitter.fixed(10)))
                $0.add(.ordinaryBLE(path: FlockEmitter.fixed(5)))
            }
            try await within(10, "stream_on") { try await client.setStreaming(true) }
            #expect(await flow.emulator { $0.streaming })
            // Three scans (a channel, a wifi_scan and a ble_scan event each): about 0.6 s.
            try await updates.wait("three scans' events", within: 10) { events in
                events.filter { $0.evt == "channel" }.count >= 3 && events.contains { $0.evt == "wifi_scan" } && events.contains { $0.evt == "ble_scan" }
            }
            try await within(10, "stream_off") { try await client.setStreaming(false) }
            #expect(await flow.emulator { $0.streaming } == false)
            try await within(10, "PING") { try await client.send(.ping) }
            let pong = try await updates.next("the pong") { $0.evt == "status" }
            guard case .status(let message, _) = pong else { Issue.record("not a status: \(pong)"); return }
            #expect(message == "pong")

            // The pong is the last event the firmware sent; the stream keeps order, so by now
            // every event sent has been received and parsed, and none came after stream_off.
            let sent = await flow.emulator { $0.streamEventsSent }
            let received = updates.all
            #expect(received == sent)
            #expect(sent.last == pong)
            let wifi = received.compactMap { if case .wifiScan(let ssid, let mac, _, let channel, let type, _) = $0 { [ssid, mac, "\(channel)", "\(type)"] } else { nil } }
            #expect(wifi.first == ["HomeNetwork-2G", "a4:2b:b0:11:22:33", "6", "beacon"])
            let ble = received.compactMap { if case .bleScan(let name, let mac, _, let advertises, _) = $0 { "\(name) \(mac) \(advertises)" } else { nil } }
            #expect(ble.first == "Pixel Buds f4:f5:d8:01:02:03 true")
            let channels = received.compactMap { if case .channel(let channel, _) = $0 { channel } else { nil } }
            #expect(zip(channels, channels.dropFirst()).allSatisfy { $1 == $0 % 13 + 1 }, "\(channels)")
            #expect(await flow.emulator { $0.commandsReceived } == ["stream_on", "stream_off", "PING"])
            #expect(await flow.client.parseErrors == 0)
            // Nothing suspicious around: no detections.
            #expect(await flow.emulator { $0.detectionsSent }.isEmpty)
        }
    }
}
#endif
