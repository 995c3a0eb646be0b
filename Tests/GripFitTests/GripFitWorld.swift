import Foundation
import Logging
@testable import GripFit
@testable import TetherCore
@testable import TetherSimulator
import TetherTesting
@testable import GripFitEmulator

/// A GripFit emulator on a virtual radio, a manager on a central, and a test clock.
struct GripFitWorld {
    let clock = ManualClock()
    let time: TestTime
    let radio: VirtualRadio
    let central: Central
    let manager: BLEManager
    let emulator: GripFitEmulator
    let id = PeripheralID(UUID(uuidString: "6E400001-0000-4000-8000-0000000000AA")!)
    static let epoch = Date(timeIntervalSince1970: 1_800_000_000)


    init(centralState: CentralState = .poweredOn, framing: GripFitEmulator.NotificationFraming = .linePerNotification,
         withDevice: Bool = true, configuration: BLEManager.Configuration = BLEManager.Configuration(),
         configure: @SimulationActor (VirtualPeripheral) -> Void = { _ in }) async {
        SimulationLogging.bootstrapForTests()
        radio = VirtualRadio(clock: clock, seed: 3, centralState: centralState)
        time = TestTime(clock: clock, radio: radio)
        emulator = GripFitEmulator(profile: .standard, framing: framing)
        let peripheral = emulator.makePeripheral(id: id)
        if withDevice {
            await radio.add(peripheral)
            await configure(peripheral)
        }
        let driver = await SimulatorBackedDriver.make(radio: radio)
        central = Central(driver: driver, clock: clock)
        let timeline = radio.timeline
        manager = BLEManager(central: central, clock: clock, now: { GripFitWorld.epoch.addingTimeInterval(timeline.now.seconds) },
                             configuration: configuration)
    }

    /// Runs `operation` while virtual time moves.
    func run<T: Sendable>(limit: Duration = .seconds(300), _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await time.run(limit: limit, operation)
    }

    /// Advances virtual time until the manager reaches a state matching `predicate`; returns it.
    @discardableResult
    func until(limit: Duration = .seconds(120), _ predicate: @escaping @Sendable (GripFitConnectionState) -> Bool) async throws -> GripFitConnectionState {
        let manager = self.manager
        return try await run(limit: limit) {
            for await state in await manager.connectionStates() where predicate(state) { return state }
            return await manager.connectionState
        }
    }

    /// Lets `duration` of virtual time pass.
    func advance(_ duration: Duration) async throws {
        await time.advance(duration)
    }

    /// Scans and connects; returns once connected.
    func connect() async throws {
        await manager.startScanning()
        let manager = self.manager
        let device = try await run { () -> GripFitDevice? in
            for await devices in await manager.discoveredDeviceUpdates() where !devices.isEmpty { return devices[0] }
            return nil
        }
        guard let device else { throw GripFitError.scanTimeout }
        // connect(to:) returns once connected or failed, which takes virtual time.
        try await run { await manager.connect(to: device) }
    }

    /// Collects the readings that arrive during `duration` of virtual time.
    func readings(for duration: Duration) async throws -> [GripReading] {
        let stream = await manager.readings()
        let collector = Task { () -> [GripReading] in
            var all: [GripReading] = []
            for await reading in stream { all.append(reading) }
            return all
        }
        try await advance(duration)
        collector.cancel()
        return await collector.value
    }

    /// Sends a command through `action` and waits for the first status matching `predicate`.
    func status(after action: @escaping @Sendable () async -> Void, where predicate: @escaping @Sendable (GripFitStatus) -> Bool) async throws -> GripFitStatus? {
        let stream = await manager.statuses()
        return try await run(limit: .seconds(10)) {
            await action()
            for await status in stream where predicate(status) { return status }
            return nil
        }
    }

    func emulator<T: Sendable>(_ body: @escaping @SimulationActor (GripFitEmulator) -> T) async -> T {
        let emulator = self.emulator
        return await { @SimulationActor in body(emulator) }()
    }
}

extension GripFitConnectionState {
    var isError: Bool {
        if case .error = self { return true }
        return false
    }
}
