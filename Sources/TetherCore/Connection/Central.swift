import Foundation
import Logging

/// The app's side of Bluetooth LE: owns a driver, tracks the radio's state, scans, and hands
/// out one ``ConnectionStateMachine`` per peripheral.
///
/// The central is the driver's only event consumer. It routes each event, in order, to the
/// scan sessions or to the connection it concerns.
public actor Central {
    /// The driver underneath.
    public nonisolated let driver: any BLEDriver
    let clock: any Clock<Duration>
    let logger: Logger

    /// The radio's current state.
    public private(set) var state: CentralState = .unknown
    /// Peripherals the OS handed back at relaunch (state restoration).
    public private(set) var restoredPeripherals: [PeripheralID] = []

    private var connections: [PeripheralID: ConnectionStateMachine] = [:]
    private var stateBroadcaster = Broadcaster<CentralState>(bufferSize: 64)
    private var scanSessions: [Int: ScanSession] = [:]
    private var nextScanToken = 0
    private var seen: [PeripheralID: DiscoveredPeripheral] = [:]
    private var restorationHandler: (@Sendable ([PeripheralID]) -> Void)?
    private var stateWaiters: [CheckedContinuation<Void, Never>] = []
    private var eventLoop: Task<Void, Never>?

    private struct ScanSession {
        let filter: ScanFilter
        let continuation: AsyncStream<DiscoveredPeripheral>.Continuation
        let allowDuplicates: Bool
        /// What was last reported of each peripheral (name and advertisement, not RSSI).
        var reported: [PeripheralID: ReportedAdvertisement] = [:]
        var timer: Task<Void, Never>?
    }

    /// Creates a central over `driver`, taking all time from `clock`.
    public init(driver: any BLEDriver, clock: any Clock<Duration> = ContinuousClock(), logger: Logger = Logger(label: "tether.central")) {
        self.driver = driver
        self.clock = clock
        self.logger = logger
    }

    /// Starts consuming driver events. Called implicitly by every other entry point; call it
    /// yourself to learn the radio's state before doing anything.
    public func start() {
        guard eventLoop == nil else { return }
        let events = driver.events
        eventLoop = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                await self.handle(event)
            }
        }
    }

    /// A stream of radio state changes, starting with the current state.
    public func stateUpdates() -> AsyncStream<CentralState> {
        start()
        return stateBroadcaster.subscribe(initial: state) { [weak self] token in
            Task { await self?.removeStateSubscriber(token) }
        }
    }

    private func removeStateSubscriber(_ token: Int) { stateBroadcaster.remove(token) }

    /// Called with the restored peripherals when the OS relaunches the app.
    public func setRestorationHandler(_ handler: @escaping @Sendable ([PeripheralID]) -> Void) {
        restorationHandler = handler
        if !restoredPeripherals.isEmpty { handler(restoredPeripherals) }
    }

    /// Waits until the radio's state is settled (not `unknown`/`resetting`) or `timeout` passes,
    /// then returns it.
    public func settledState(timeout: Duration = .seconds(5)) async -> CentralState {
        start()
        guard state.isTransient else { return state }
        let clock = self.clock
        let timer = Task { [weak self] in
            try? await clock.sleep(for: timeout)
            await self?.releaseStateWaiters()
        }
        await withCheckedContinuation { stateWaiters.append($0) }
        timer.cancel()
        return state
    }

    private func releaseStateWaiters() {
        let waiters = stateWaiters
        stateWaiters.removeAll()
        for waiter in waiters { waiter.resume() }
    }

    /// Throws ``BLEError/bluetoothUnavailable(_:)`` unless the radio is (or becomes) powered on.
    public func requirePoweredOn(timeout: Duration = .seconds(5)) async throws {
        let state = await settledState(timeout: timeout)
        guard state == .poweredOn else { throw BLEError.bluetoothUnavailable(state) }
    }

    // MARK: Scanning

    /// Scans and streams matching peripherals until `timeout` (nil: until the stream is
    /// dropped). Each peripheral is reported once unless `allowDuplicates` — or again when
    /// its name or advertisement data changes (a scan response, fields arriving separately).
    public func scan(filter: ScanFilter = .any, timeout: Duration? = nil, allowDuplicates: Bool = false) async throws -> AsyncStream<DiscoveredPeripheral> {
        try await requirePoweredOn()
        let token = nextScanToken
        nextScanToken += 1
        let (stream, continuation) = AsyncStream.makeStream(of: DiscoveredPeripheral.self, bufferingPolicy: .bufferingNewest(256))
        continuation.onTermination = { [weak self] _ in
            Task { await self?.endScan(token) }
        }
        var session = ScanSession(filter: filter, continuation: continuation, allowDuplicates: allowDuplicates)
        if let timeout {
            let clock = self.clock
            session.timer = Task { [weak self] in
                do { try await clock.sleep(for: timeout) } catch { return }
                await self?.endScan(token)
            }
        }
        scanSessions[token] = session
        await updateDriverScan()
        return stream
    }

    /// Scans until the first peripheral that matches `filter`; throws ``BLEError/scanTimeout``.
    public func discover(filter: ScanFilter, timeout: Duration = .seconds(10)) async throws -> DiscoveredPeripheral {
        let stream = try await scan(filter: filter, timeout: timeout)
        for await peripheral in stream { return peripheral }
        throw BLEError.scanTimeout
    }

    /// The latest discovery record for a peripheral seen by any scan.
    public func lastSeen(_ id: PeripheralID) -> DiscoveredPeripheral? { seen[id] }

    private func endScan(_ token: Int) async {
        guard let session = scanSessions.removeValue(forKey: token) else { return }
        session.timer?.cancel()
        session.continuation.finish()
        await updateDriverScan()
    }

    private func updateDriverScan() async {
        if scanSessions.isEmpty {
            await driver.stopScan()
            return
        }
        let sessions = scanSessions.values
        let services: [BluetoothUUID]? = sessions.contains { $0.filter.driverServices == nil }
            ? nil
            : Array(Set(sessions.flatMap { $0.filter.driverServices ?? [] })).sorted()
        await driver.scan(services: services, allowDuplicates: sessions.contains { $0.allowDuplicates })
    }

    // MARK: Connections

    /// The connection to `peripheral`, created on first use with `configuration`. There is one
    /// connection per peripheral: a later call returns the same machine, and a different
    /// `configuration` is not ignored but adopted (at once when the connection is idle,
    /// otherwise from its next `connect()`: ``ConnectionStateMachine/adopt(_:)``). To reach an
    /// existing connection without configuring it, use ``existingConnection(to:)``. A
    /// peripheral handed back by state restoration starts restoring at once.
    public func connection(to peripheral: PeripheralID, configuration: ConnectionConfiguration = ConnectionConfiguration()) async -> ConnectionStateMachine {
        start()
        if let existing = connections[peripheral] {
            await existing.adopt(configuration)
            return existing
        }
        let machine = ConnectionStateMachine(
            peripheral: peripheral, configuration: configuration, driver: driver, clock: clock,
            centralState: state, logger: Logger(label: "tether.connection"))
        connections[peripheral] = machine
        if restoredPeripherals.contains(peripheral) {
            Task { await machine.restore() }
        }
        return machine
    }

    /// The connection to `peripheral`, if one was made.
    public func existingConnection(to peripheral: PeripheralID) -> ConnectionStateMachine? {
        connections[peripheral]
    }

    /// Forgets a connection (disconnecting it first).
    public func removeConnection(to peripheral: PeripheralID) async {
        guard let machine = connections.removeValue(forKey: peripheral) else { return }
        await machine.disconnect()
    }

    // MARK: Events

    private func handle(_ event: BLEDriverEvent) async {
        switch event {
        case .stateChanged(let newState):
            guard newState != state else { return }
            logger.info("Bluetooth is \(newState)")
            state = newState
            stateBroadcaster.yield(newState, logger: logger)
            if !newState.isTransient { releaseStateWaiters() }
            if newState != .poweredOn {
                // Scans end with the radio; their consumers see the stream finish.
                for token in Array(scanSessions.keys) { await endScan(token) }
            }
            for machine in connections.values { await machine.handle(event) }
        case .discovered(let peripheral):
            seen[peripheral.id] = peripheral
            for (token, var session) in scanSessions where session.filter.matches(peripheral) {
                if !session.allowDuplicates {
                    // Once per peripheral — and again when it says more (a scan response adds
                    // the name; BlueZ may deliver an advertisement's fields one by one).
                    let seen = ReportedAdvertisement(name: peripheral.name, advertisement: peripheral.advertisement)
                    guard session.reported[peripheral.id] != seen else { continue }
                    session.reported[peripheral.id] = seen
                    scanSessions[token] = session
                }
                session.continuation.yield(peripheral)
            }
        case .willRestoreState(let peripherals):
            logger.info("Restoring \(peripherals.count) peripheral(s)")
            restoredPeripherals = peripherals
            restorationHandler?(peripherals)
            for id in peripherals { if let machine = connections[id] { await machine.restore() } }
        case .connected(let id), .failedToConnect(let id, _), .disconnected(let id, _, _),
             .servicesDiscovered(let id, _, _), .characteristicsDiscovered(let id, _, _, _),
             .notificationStateUpdated(let id, _, _, _), .valueUpdated(let id, _, _, _),
             .writeCompleted(let id, _, _), .readyToWriteWithoutResponse(let id), .rssiRead(let id, _, _),
             .servicesInvalidated(let id, _):
            if let machine = connections[id] {
                await machine.handle(event)
            } else if case .connected = event {
                logger.debug("Closing a link nobody asked for", metadata: ["peripheral": "\(id)"])
                await driver.cancelConnection(id)
            }
        }
    }
}

/// The parts of a discovery that make it new to a scan without duplicates.
struct ReportedAdvertisement: Equatable {
    let name: String?
    let advertisement: AdvertisementData
}
