import Foundation
import Testing
import TetherTesting
@testable import FlockFinder
@testable import TetherCore
@testable import TetherSimulator
@testable import FlockFinderEmulator
@testable import FlockFinderStorage

/// A detector emulator, a client with a store, and a test clock.
struct ClientWorld {
    let clock = ManualClock()
    let time: TestTime
    let radio: VirtualRadio
    let emulator: FlockFinderEmulator
    let store: DetectionStore
    let client: FlockFinderClient
    let id = PeripheralID(UUID(uuidString: "F10CF1D0-0000-4000-8000-00000000C11E")!)
    static let epoch = Date(timeIntervalSince1970: 1_790_000_000)

    init(centralState: CentralState = .poweredOn, extra: [VirtualPeripheral] = [], withDetector: Bool = true) async throws {
        SimulationLogging.bootstrapForTests()
        radio = VirtualRadio(clock: clock, seed: 21, centralState: centralState)
        time = TestTime(clock: clock, radio: radio)
        emulator = FlockFinderEmulator(seed: 3)
        if withDetector { await radio.add(emulator.makePeripheral(id: id)) }
        for peripheral in extra { await radio.add(peripheral) }
        store = try DetectionStore.inMemory(locationProvider: FixedLocationProvider(Location(latitude: 37.77, longitude: -122.42, horizontalAccuracy: 8)))
        let central = Central(driver: await SimulatorBackedDriver.make(radio: radio), clock: clock)
        let timeline = radio.timeline
        client = FlockFinderClient(central: central, store: store, clock: clock,
                                   now: { ClientWorld.epoch.addingTimeInterval(timeline.now.seconds) }, rssiInterval: .seconds(1))
    }

    func run<T: Sendable>(limit: Duration = .seconds(120), _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await time.run(limit: limit, operation)
    }

    func advance(_ duration: Duration) async throws {
        await time.advance(duration)
    }

    /// Scans, auto-connects and returns the states seen until `final`.
    @discardableResult
    func connect(until final: ConnectionState = .connected) async throws -> [ConnectionState] {
        let client = self.client
        let states = await client.connectionStates()
        await client.startScanning(timeout: .seconds(5))
        return try await run {
            var seen: [ConnectionState] = []
            for await state in states {
                seen.append(state)
                if state == final { break }
            }
            return seen
        }
    }

    func emulator<T: Sendable>(_ body: @escaping @SimulationActor (FlockFinderEmulator) -> T) async -> T {
        let emulator = self.emulator
        return await { @SimulationActor in body(emulator) }()
    }
}

@Suite("FlockFinder client against the emulator", .timeLimit(.minutes(3)))
struct ClientTests {
    @Test func scanningConnectsThroughTheSpecStates() async throws {
        let world = try await ClientWorld()
        let states = try await world.connect()
        #expect(states.map(\.rawValue) == ["Disconnected", "Scanning...", "Connecting...", "Discovering Services...", "Connected"])
    }

    @Test func onlyDevicesAdvertisingTheServiceAreAutoConnected() async throws {
        let lookalike = VirtualPeripheral(
            name: "ESP32-CAM", advertisement: AdvertisementData(localName: "ESP32-CAM"), services: [], distance: 0.3)
        let world = try await ClientWorld(extra: [lookalike])
        let client = world.client
        // A full scan lists both: the service advertiser and the one matched by name only.
        await client.startScanning(timeout: .seconds(2), autoConnect: false)
        try await world.advance(.milliseconds(2100))
        let devices = await client.discoveredDevices
        try await world.connect()
        #expect(devices.contains { $0.name == "ESP32-CAM" && !$0.advertisesService })
        #expect(devices.contains { $0.id == world.id && $0.advertisesService })
        #expect(await world.radio.isConnected(world.id))
        #expect(await !world.radio.isConnected(lookalike.id))
    }

    @Test func aDeviceWithoutTheServiceSaysToUpdateTheFirmware() async throws {
        let lookalike = VirtualPeripheral(
            name: "Feather S3", advertisement: AdvertisementData(localName: "Feather S3"), services: [], distance: 0.3)
        let world = try await ClientWorld(extra: [lookalike], withDetector: false)
        let client = world.client
        try await world.run { await client.connect(to: lookalike.id) }
        #expect(await client.connectionState == .disconnected)
        let error = try #require(await client.lastError)
        #expect(error == .serviceNotFound)
        #expect(error.errorDescription?.contains("firmware") == true)
    }

    @Test(arguments: [(CentralState.poweredOff, ConnectionState.bluetoothOff), (.unauthorized, .unauthorized)])
    func bluetoothStatesUseTheSpecStrings(state: CentralState, expected: ConnectionState) async throws {
        let world = try await ClientWorld(centralState: state)
        await world.client.startScanning()
        #expect(await world.client.connectionState == expected)
        #expect(["Bluetooth Off", "Bluetooth Unauthorized"].contains(expected.rawValue))
    }

    @Test func detectionsAreParsedStoredWithReceiptTimeAndLocation() async throws {
        let world = try await ClientWorld()
        await world.emulator { $0.add(.flockCamera(path: FlockEmitter.fixed(10))) }
        try await world.connect()
        let detections = await world.client.detections()
        let received = try await world.run { () -> ReceivedDetection? in
            for await detection in detections { return detection }
            return nil
        }
        let detection = try #require(received)
        #expect(detection.detection.type == .flockSafety)
        #expect(detection.detection.confidence == 0.9)
        #expect(detection.detection.deviceUptimeMs != nil)
        let stored = try #require(detection.stored)
        #expect(stored.receivedAt > ClientWorld.epoch)
        #expect(stored.location?.latitude == 37.77)
        #expect(await world.store.recent.first?.id == stored.id)
    }

    @Test func lowConfidenceDetectionsAreShownButNotStored() async throws {
        let world = try await ClientWorld()
        await world.store.setMinimumConfidence(0.88)
        await world.emulator {
            $0.add(.raven(path: FlockEmitter.fixed(10)))        // BLE: 0.85
            $0.add(.flockCamera(path: FlockEmitter.fixed(10)))  // WiFi: 0.9
        }
        try await world.connect()
        let detections = await world.client.detections()
        let both = try await world.run { () -> [ReceivedDetection] in
            var seen: [ReceivedDetection] = []
            for await detection in detections {
                seen.append(detection)
                if seen.count == 2 { break }
            }
            return seen
        }
        #expect(both.filter { $0.stored != nil }.map(\.detection.type) == [.flockSafety])
        #expect(try await world.store.countsByType() == [.flockSafety: 1])
    }

    @Test func nothingSentWhileConnectedIsLostAcrossAReconnection() async throws {
        let world = try await ClientWorld()
        try await world.connect()
        let detections = await world.client.detections()
        let counter = Task { () -> Int in
            var count = 0
            for await _ in detections { count += 1 }
            return count
        }
        // A burst, and the link drops right after the last notification is queued.
        await world.emulator { $0.burst(40) }
        try await world.advance(.milliseconds(400))
        await world.radio.peripheralDisconnect(world.id)
        let client = world.client
        try await world.run { for await state in await client.connectionStates() where state == .connecting { return } }
        try await world.run { for await state in await client.connectionStates() where state == .connected { return } }
        await world.emulator { $0.burst(5) }
        try await world.advance(.milliseconds(400))
        try await world.run { await client.disconnect() }
        counter.cancel()
        let sent = await world.emulator { $0.detectionsSent.count }
        #expect(sent == 45)
        #expect(await counter.value == 45)
        #expect(try await world.store.detections().count == 45)
    }

    @Test func malformedNotificationsAreSkippedAndCounted() async throws {
        let world = try await ClientWorld()
        try await world.connect()
        await world.emulator { $0.add(.flockCamera(path: FlockEmitter.fixed(10))) }
        try await world.advance(.seconds(1))
        await world.emulator { $0.sendTruncatedDetection(); $0.sendGarbage() }
        try await world.advance(.milliseconds(300))
        #expect(await world.client.parseErrors == 2)
        #expect(await world.client.connectionState == .connected)
    }

    @Test func streamingAndStatusCommands() async throws {
        let world = try await ClientWorld()
        await world.emulator { $0.add(.ordinaryAccessPoint(path: FlockEmitter.fixed(10))) }
        try await world.connect()
        let client = world.client
        let updates = await client.streamUpdates()
        try await world.run { try await client.setStreaming(true) }
        let events = try await world.run { () -> [StreamEvent] in
            var seen: [StreamEvent] = []
            for await event in updates {
                seen.append(event)
                if seen.contains(where: { $0.evt == "wifi_scan" }) && seen.contains(where: { $0.evt == "channel" }) { break }
            }
            return seen
        }
        #expect(events.contains { $0.evt == "wifi_scan" })
        try await world.run { try await client.setStreaming(false) }
        let statusUpdates = await client.streamUpdates()
        try await world.run { try await client.send(.ping) }
        let pong = try await world.run { () -> StreamEvent? in
            for await event in statusUpdates where event.evt == "status" { return event }
            return nil
        }
        guard case .status(let message, _)? = pong else { Issue.record("no status answer"); return }
        #expect(message == "pong")
        #expect(await world.emulator { $0.commandsReceived }.suffix(3) == ["stream_on", "stream_off", "PING"])
    }

    @Test func rssiOfTheDetectorIsReadPeriodically() async throws {
        let world = try await ClientWorld()
        try await world.connect()
        try await world.advance(.seconds(3))
        let rssi = try #require(await world.client.deviceRSSI)
        #expect((-75)...(-40) ~= rssi)
    }
}

/// The one-call connection: an outcome, not a state to watch.
@Suite(.timeLimit(.minutes(2)))
struct ConnectToFirstDetectorTests {
    @Test func returnsTheDetectorOnceConnected() async throws {
        let world = try await ClientWorld()
        let client = world.client
        let device = try await world.run { try await client.connectToFirstDetector() }
        #expect(device.id == world.id && device.advertisesService)
        #expect(await client.connectionState == .connected)
    }

    @Test func throwsDeviceNotFoundAfterTheScan() async throws {
        let world = try await ClientWorld(withDetector: false)
        let client = world.client
        let start = world.radio.timeline.now
        let outcome = try await world.run { () -> FlockFinderError? in
            do { try await client.connectToFirstDetector(scanTimeout: .seconds(5)); return nil } catch { return error as? FlockFinderError }
        }
        #expect(outcome == .deviceNotFound)
        #expect(world.radio.timeline.now - start >= .seconds(5))
        #expect(await client.connectionState == .disconnected)
    }

    @Test func aSecondCallReturnsTheConnectedDetectorAndACallDuringASearchIsRefused() async throws {
        let world = try await ClientWorld()
        let client = world.client
        let first = Task { () -> String in do { return "\(try await client.connectToFirstDetector().id)" } catch { return "\(error)" } }
        // Once the first is searching, a second is refused rather than starting over.
        try await world.time.until { await client.connectionState == .scanning }
        let outcomes = try await world.run { () -> [String] in
            let second: String
            do { second = "\(try await client.connectToFirstDetector().id)" } catch { second = "refused: \(error)" }
            return [await first.value, second]
        }
        #expect(outcomes[0] == "\(world.id)")
        #expect(outcomes[1].hasPrefix("refused"), "\(outcomes[1])")
        let again = try await world.run { try await client.connectToFirstDetector() }
        #expect(again.id == world.id)
    }

    @Test func stoppingTheSearchEndsTheCall() async throws {
        let world = try await ClientWorld(withDetector: false)
        let client = world.client
        let call = Task { () -> FlockFinderError? in do { try await client.connectToFirstDetector(); return nil } catch { return error as? FlockFinderError } }
        try await world.time.until { await client.connectionState == .scanning }
        let outcome = try await world.run { () -> FlockFinderError? in
            await client.stopScanning()
            return await call.value
        }
        #expect(outcome == .connectionFailed("the search was stopped before a detector was found"))
        #expect(await client.connectionState == .disconnected)
    }

    @Test func throwsWhenBluetoothIsOff() async throws {
        let world = try await ClientWorld(centralState: .poweredOff)
        let client = world.client
        let outcome = try await world.run { () -> FlockFinderError? in
            do { try await client.connectToFirstDetector(); return nil } catch { return error as? FlockFinderError }
        }
        #expect(outcome == .bluetoothUnavailable(.poweredOff))
        #expect(await client.connectionState == .bluetoothOff)
    }
}
