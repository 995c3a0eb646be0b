import Foundation
@testable import FlockFinder
@testable import TetherCore
@testable import TetherSimulator
import TetherTesting
@testable import FlockFinderEmulator

/// One notification as the central received it, stamped with virtual time.
struct EmulatorNotification: Sendable {
    let at: Duration
    let value: Data

    /// The payload as a JSON object, nil when it is not one (truncated, garbage).
    var object: [String: Any]? {
        (try? JSONSerialization.jsonObject(with: value)) as? [String: Any]
    }

    /// The payload as text (nil when not UTF-8).
    var text: String? { String(data: value, encoding: .utf8) }
}

/// Every notification received, per characteristic, across the test.
actor EmulatorNotificationLog {
    private(set) var detections: [EmulatorNotification] = []
    private(set) var stream: [EmulatorNotification] = []

    func appendDetection(_ entry: EmulatorNotification) { detections.append(entry) }
    func appendStream(_ entry: EmulatorNotification) { stream.append(entry) }
}

/// A FlockFinder emulator on a virtual radio, a central with a connection to it, and a test clock.
struct EmulatorFlockWorld {
    static let everything = [FlockFinderBLEConstants.detection, FlockFinderBLEConstants.stream]

    let clock = ManualClock()
    let time: TestTime
    let radio: VirtualRadio
    let central: Central
    let emulator: FlockFinderEmulator
    let connection: ConnectionStateMachine
    let log = EmulatorNotificationLog()
    let id = PeripheralID(UUID(uuidString: "F10CF1D0-0000-4000-8000-0000000000F5")!)

    /// Builds the world; the connection subscribes to `subscribe` on connecting.
    init(
        seed: UInt64 = 7,
        scanInterval: Duration = .milliseconds(500),
        cooldown: Duration = .seconds(10),
        subscribe: [CharacteristicPath] = EmulatorFlockWorld.everything,
        centralMaximumMTU: Int = 517
    ) async {
        SimulationLogging.bootstrapForTests()
        radio = VirtualRadio(clock: clock, seed: 11)
        time = TestTime(clock: clock, radio: radio)
        emulator = FlockFinderEmulator(seed: seed, scanInterval: scanInterval, detectionCooldown: cooldown)
        let radio = self.radio, peripheral = emulator.makePeripheral(id: id)
        await { @SimulationActor in
            radio.centralMaximumMTU = centralMaximumMTU
            radio.add(peripheral)
        }()
        central = Central(driver: await SimulatorBackedDriver.make(radio: radio), clock: clock)
        await central.start()
        // The look-alike reports the radio's state through a dispatch queue; let it arrive.
        await time.settle()
        connection = await central.connection(to: id, configuration: ConnectionConfiguration(
            services: [FlockFinderBLEConstants.serviceUUID],
            requiredCharacteristics: [FlockFinderBLEConstants.detection, FlockFinderBLEConstants.command, FlockFinderBLEConstants.stream],
            notifyCharacteristics: subscribe))
    }

    /// Virtual time since the radio started.
    var now: Duration { radio.timeline.now }

    /// Runs `operation` while virtual time moves.
    func run<T: Sendable>(limit: Duration = .seconds(120), _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await time.run(limit: limit, operation)
    }

    /// Lets `duration` of virtual time pass.
    func advance(_ duration: Duration) async throws {
        await time.advance(duration)
    }

    /// Advances virtual time until `condition` holds.
    func until(limit: Duration = .seconds(60), _ condition: @escaping @Sendable () async -> Bool) async throws {
        try await time.until(limit: limit, condition)
    }

    /// Connects and logs every detection and stream notification from then on.
    func connect() async throws {
        let detections = await connection.notifications(for: FlockFinderBLEConstants.detection)
        let stream = await connection.notifications(for: FlockFinderBLEConstants.stream)
        let log = self.log, timeline = radio.timeline
        Task {
            for await value in detections { await log.appendDetection(EmulatorNotification(at: timeline.now, value: value)) }
        }
        Task {
            for await value in stream { await log.appendStream(EmulatorNotification(at: timeline.now, value: value)) }
        }
        let connection = self.connection
        try await run { try await connection.connect() }
    }

    /// Writes a command (with response, as the app does).
    func send(_ command: FlockCommand) async throws {
        try await write(command.data)
    }

    /// Writes raw bytes to the Command characteristic.
    func write(_ value: Data) async throws {
        let connection = self.connection
        try await run { try await connection.write(value, to: FlockFinderBLEConstants.command, type: .withResponse) }
    }

    /// Adds emitters to the detector's world (their paths start now).
    func add(_ emitters: FlockEmitter...) async {
        await emulator { emulator in for emitter in emitters { emulator.add(emitter) } }
    }

    /// Waits until at least `count` detection notifications have arrived; returns them all.
    @discardableResult
    func detections(atLeast count: Int, limit: Duration = .seconds(60)) async throws -> [EmulatorNotification] {
        let log = self.log
        try await until(limit: limit) { await log.detections.count >= count }
        return await log.detections
    }

    /// Waits for the first stream notification from index `from` on whose JSON matches.
    func streamEvent(from index: Int = 0, limit: Duration = .seconds(30), where predicate: @escaping @Sendable ([String: Any]) -> Bool) async throws -> EmulatorNotification {
        let log = self.log
        return try await time.first(limit: limit, what: "stream event") {
            await log.stream.dropFirst(index).first { $0.object.map(predicate) ?? false }
        }
    }

    /// Runs `body` on the emulator.
    func emulator<T: Sendable>(_ body: @escaping @SimulationActor (FlockFinderEmulator) -> T) async -> T {
        let emulator = self.emulator
        return await { @SimulationActor in body(emulator) }()
    }
}

extension [EmulatorNotification] {
    /// The JSON objects of the entries, skipping payloads that are not JSON.
    var objects: [[String: Any]] { compactMap(\.object) }

    /// The stream entries whose `evt` is `evt`.
    func events(_ evt: String) -> [[String: Any]] { objects.filter { $0["evt"] as? String == evt } }
}
