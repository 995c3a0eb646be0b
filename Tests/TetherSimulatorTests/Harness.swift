import Foundation
import Logging
@testable import TetherCore
@testable import TetherSimulator
import TetherTesting

/// A virtual world on a test clock: an echo peripheral, a driver and a central.
///
/// Time only moves when a test moves it, so every timeout below is exercised in virtual time.
/// The driver is the simulator's or, with `TETHER_TEST_DRIVER=corebluetooth`, the
/// CoreBluetooth driver on the look-alike (see `SimulatorBackedDriver`).
struct Harness {
    let clock = ManualClock()
    let time: TestTime
    let radio: VirtualRadio
    let driver: any BLEDriver
    let central: Central
    let echo: EchoPeripheral
    let echoID = PeripheralID(UUID(uuidString: "E0E0E0E0-0000-4000-8000-000000000001")!)

    static let echoConfiguration = ConnectionConfiguration(
        services: [EchoPeripheral.service],
        requiredCharacteristics: [EchoPeripheral.input, EchoPeripheral.info],
        notifyCharacteristics: [EchoPeripheral.output])


    init(centralState: CentralState = .poweredOn, link: LinkParameters = LinkParameters(), osAutoReconnect: Bool = true) async {
        SimulationLogging.bootstrapForTests()
        radio = VirtualRadio(clock: clock, seed: 7, centralState: centralState)
        time = TestTime(clock: clock, radio: radio)
        echo = EchoPeripheral()
        await radio.add(EchoPeripheral.makePeripheral(id: echoID, distance: 1.5, linkParameters: link, behavior: echo))
        driver = await SimulatorBackedDriver.make(radio: radio, supportsAutoReconnect: osAutoReconnect)
        central = Central(driver: driver, clock: clock)
        await central.start()
        // The look-alike reports the radio's state through a dispatch queue; let it arrive.
        await time.settle()
    }

    /// Runs `operation` while virtual time moves (to each timer's deadline, once every task is
    /// idle).
    func run<T: Sendable>(limit: Duration = .seconds(600), _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await time.run(limit: limit, operation)
    }

    /// Lets `duration` of virtual time pass.
    func advance(_ duration: Duration) async {
        await time.advance(duration)
    }

    /// Simulates the OS relaunching the app (links stay up); returns the new launch's driver.
    func relaunchApp() async -> any BLEDriver {
        await SimulatorBackedDriver.relaunch(radio: radio)
    }

    /// Virtual time since the world began.
    var now: Duration { radio.timeline.now }

    func connection(_ configuration: ConnectionConfiguration = Harness.echoConfiguration) async -> ConnectionStateMachine {
        await central.connection(to: echoID, configuration: configuration)
    }

    /// Connects and returns the connection (fails the test by throwing otherwise).
    func connected(_ configuration: ConnectionConfiguration = Harness.echoConfiguration) async throws -> ConnectionStateMachine {
        let connection = await connection(configuration)
        try await run { try await connection.connect() }
        return connection
    }

    /// Runs `operation` and returns the error it threw (nil when it succeeded).
    func error(_ operation: @escaping @Sendable () async throws -> Void) async throws -> BLEError? {
        try await run {
            do { try await operation(); return nil } catch let error as BLEError { return error }
        }
    }

    /// Waits (in virtual time) until `condition` holds.
    func until(limit: Duration = .seconds(120), _ condition: @escaping @Sendable () async -> Bool) async throws {
        try await time.until(limit: limit, condition)
    }

    func peripheral(_ body: @escaping @SimulationActor (VirtualPeripheral) -> Void) async {
        let radio = self.radio, id = echoID
        await { @SimulationActor in body(radio.virtualPeripheral(id)!) }()
    }
}

/// Collects a connection's events in the background.
actor EventLog {
    private(set) var events: [ConnectionEvent] = []
    private var task: Task<Void, Never>?

    init(_ connection: ConnectionStateMachine) async {
        let stream = await connection.events()
        task = nil
        let task = Task { [weak self] in
            for await event in stream { await self?.append(event) }
        }
        self.task = task
    }

    private func append(_ event: ConnectionEvent) { events.append(event) }

    var phases: [String] {
        events.compactMap { if case .phaseChanged(let phase) = $0 { phase.name } else { nil } }
    }

    func contains(_ predicate: @Sendable (ConnectionEvent) -> Bool) -> Bool { events.contains(where: predicate) }

    var reconnectSchedule: [(Int, Duration)] {
        events.compactMap { if case .reconnectScheduled(let attempt, let delay) = $0 { (attempt, delay) } else { nil } }
    }
}
