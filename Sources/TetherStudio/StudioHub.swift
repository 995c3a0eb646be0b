#if os(macOS) || os(Linux)
import Foundation
import Logging
import TetherCore
import TetherWorld

/// The studio's state and its browser pages: what the radio sees, the connections the pages
/// asked for, and a bounded outbox per page.
///
/// Every page sees the same radio: a scan or a connection one page starts shows on all of
/// them. A page that reads too slowly to keep its outbox under ``outboxCapacity`` messages is
/// disconnected (WebSocket close 1008) rather than let the server's memory grow. Everything the
/// hub keeps is bounded: at most ``maximumPeripherals`` peripherals (each with at most
/// ``StudioPeripheral/historyLength`` signal strengths), connections only to those, and at most
/// ``maximumClients`` pages.
public actor StudioHub {
    /// The central every screen works through.
    public let central: Central
    /// The driver's name, for the page (`simulator`, `bluez`, `corebluetooth`).
    public let driverName: String
    /// Messages a page may have waiting before it is disconnected as too slow (at least what a
    /// page is sent when it opens: every peripheral and connection).
    public let outboxCapacity: Int
    /// Pages served at once; one more is refused.
    public let maximumClients: Int
    /// Peripherals remembered at once (the least recently seen without a connection goes first).
    public static let maximumPeripherals = 256
    /// How often one peripheral's discoveries reach the pages (a scan with duplicates reports
    /// an advertiser many times a second).
    public static let peripheralUpdateInterval: Duration = .milliseconds(500)

    /// Time since the hub was made, on its clock.
    private let elapsed: @Sendable () -> Duration
    private let logger: Logger
    /// Pages being served (until their socket's task ends), and the outboxes of those not dropped.
    private var clients: Set<Int> = []
    private var outboxes: [Int: PageOutbox] = [:]
    private var tooSlow: Set<Int> = []
    private var nextClient = 0
    private var bluetooth: CentralState = .unknown
    private var peripherals: [PeripheralID: StudioPeripheral] = [:]
    private var lastSeen: [PeripheralID: Duration] = [:]
    private var lastSent: [PeripheralID: Duration] = [:]
    private var scanTask: Task<Void, Never>?
    /// Tells the running scan's task apart from one stopped before it.
    private var scanSerial = 0
    /// The connections the pages asked for: each one's phase, its watcher, and whether the
    /// user wants it up (a disconnect that reached the connection before its connect undoes it).
    private var phases: [PeripheralID: BLEPhase] = [:]
    private var watchers: [PeripheralID: Task<Void, Never>] = [:]
    private var wanted: [PeripheralID: Bool] = [:]
    private var connecting: Set<PeripheralID> = []
    private var stateTask: Task<Void, Never>?
    /// The device screens (none until attached) and each one's last published state.
    private var screens: StudioScreens?
    private var screenStates: [String: String] = [:]
    private var screenNames: [String] = []

    /// Creates a hub over `central`. `clock` paces peripheral updates (tests pass their own).
    public init<C: Clock<Duration>>(central: Central, driverName: String, outboxCapacity: Int = 1024, maximumClients: Int = 16,
                                    clock: C = ContinuousClock(), logger: Logger = Logger(label: "tether.studio")) {
        self.central = central
        self.driverName = driverName
        self.outboxCapacity = max(1, outboxCapacity)
        self.maximumClients = max(1, maximumClients)
        let origin = clock.now
        self.elapsed = { origin.duration(to: clock.now) }
        self.logger = logger
    }

    deinit {
        stateTask?.cancel()
        scanTask?.cancel()
        for watcher in watchers.values { watcher.cancel() }
    }

    /// Follows the radio's state; call once before serving.
    public func start() {
        guard stateTask == nil else { return }
        let central = self.central
        stateTask = Task { [weak self] in
            for await state in await central.stateUpdates() {
                guard let self else { return }
                await self.bluetoothChanged(state)
            }
        }
    }

    /// Stops the scan and the watchers, and ends every page's outbox (connections stay as
    /// they are).
    public func stop() {
        stateTask?.cancel()
        stateTask = nil
        scanTask?.cancel()
        scanTask = nil
        for watcher in watchers.values { watcher.cancel() }
        watchers.removeAll()
        for id in Array(outboxes.keys) { outboxes[id]?.close() }
        outboxes.removeAll()
        screens = nil
    }

    // MARK: Pages

    /// A new page: its outbox, primed with everything it needs to draw; nil when the hub
    /// serves ``maximumClients`` pages already.
    func join() -> Int? {
        guard clients.count < maximumClients else { return nil }
        nextClient += 1
        let id = nextClient
        clients.insert(id)
        outboxes[id] = PageOutbox(capacity: outboxCapacity)
        send(.hello(driver: driverName, bluetooth: bluetooth, screens: screenNames), to: id)
        send(.scanning(scanTask != nil), to: id)
        for peripheral in peripherals.values.sorted(by: { ($0.name ?? "~", $0.id.description) < ($1.name ?? "~", $1.id.description) }) {
            send(.peripheral(peripheral), to: id)
        }
        for (peripheral, phase) in phases.sorted(by: { $0.key.description < $1.key.description }) { send(.phase(peripheral, phase), to: id) }
        for device in screenStates.keys.sorted() { enqueueScreen(device, screenStates[device]!, for: id) }
        return id
    }

    /// A page's socket ended.
    func leave(_ id: Int) {
        clients.remove(id)
        outboxes[id]?.close()
        outboxes[id] = nil
        tooSlow.remove(id)
    }

    /// Whether a page was dropped for reading too slowly.
    func wasTooSlow(_ id: Int) -> Bool { tooSlow.contains(id) }

    /// How many peripherals the studio remembers (at most ``maximumPeripherals``).
    var peripheralCount: Int { peripherals.count }

    /// How many pages are served.
    public var clientCount: Int { clients.count }

    /// Tells page `id` its request was refused.
    func refuse(_ reason: String, to id: Int) { send(.refused(reason), to: id) }

    private func send(_ event: StudioEvent, to id: Int) { enqueue(event.json, for: id) }

    // MARK: Device screens

    /// Routes the pages' actions to `screens` (``StudioScreens/start()`` attaches them).
    func attach(_ screens: StudioScreens, devices: [String]) {
        self.screens = screens
        screenNames = devices
    }

    /// A screen's new state (a whole `screen` message): kept for pages that open later, and
    /// sent to every page now.
    func publishScreen(_ device: String, _ text: String) {
        screenStates[device] = text
        for id in Array(outboxes.keys) { enqueueScreen(device, text, for: id) }
    }

    /// The file `name` a device screen exports.
    func export(device: String, name: String) async throws(StudioProtocolError) -> StudioExport {
        guard let screens else { throw StudioProtocolError("this studio has no device screens") }
        return try await screens.export(device: device, name: name)
    }

    /// Tells page `client` that its action failed.
    func actionFailed(_ action: StudioAction, _ message: String, to client: Int) {
        send(.actionFailed(device: action.device, action: action.name, message: message), to: client)
    }

    private func broadcast(_ event: StudioEvent) {
        let text = event.json
        for id in Array(outboxes.keys) { enqueue(text, for: id) }
    }

    private func enqueue(_ text: String, for id: Int) {
        guard outboxes[id] != nil else { return }
        if !outboxes[id]!.add(text) { dropSlow(id) }
    }

    private func enqueueScreen(_ device: String, _ text: String, for id: Int) {
        guard outboxes[id] != nil else { return }
        if !outboxes[id]!.addScreen(device, text) { dropSlow(id) }
    }

    /// Full: the page is not keeping up. Dropped (what it holds released) rather than
    /// buffered without end; its socket is closed with 1008.
    private func dropSlow(_ id: Int) {
        logger.warning("A studio page read too slowly; disconnecting it", metadata: ["client": "\(id)"])
        tooSlow.insert(id)
        outboxes[id]?.close()
        outboxes[id] = nil
    }

    /// The next message for page `id`, waiting for one; nil once the page is dropped or gone
    /// (or the waiting task is cancelled).
    func next(for id: Int) async -> String? {
        if let text = outboxes[id]?.take() { return text }
        guard outboxes[id] != nil else { return nil }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
                // Runs on the hub: a cancellation that came first is seen here.
                guard !Task.isCancelled, outboxes[id] != nil, outboxes[id]?.waiter == nil else {
                    continuation.resume(returning: nil)
                    return
                }
                outboxes[id]?.waiter = continuation
            }
        } onCancel: {
            Task { await self.stopWaiting(id) }
        }
    }

    /// How many messages wait for page `id` (tests).
    func waitingCount(for id: Int) -> Int { outboxes[id]?.count ?? 0 }

    private func stopWaiting(_ id: Int) {
        guard let waiter = outboxes[id]?.waiter else { return }
        outboxes[id]?.waiter = nil
        waiter.resume(returning: nil)
    }

    // MARK: Requests

    /// Carries out one request from page `client`.
    func handle(_ text: String, from client: Int) async {
        let request: StudioRequest
        do {
            request = try StudioRequest.decode(text)
        } catch {
            send(.refused(error.message), to: client)
            return
        }
        switch request {
        case .scan(let on):
            on ? startScan() : stopScan()
        case .connect(let id):
            guard peripherals[id] != nil else {
                send(.refused("no peripheral \(id) has been seen: scan first"), to: client)
                return
            }
            connect(id)
        case .disconnect(let id):
            guard phases[id] != nil else {
                send(.refused("no connection to \(id)"), to: client)
                return
            }
            disconnect(id)
        case .action(let action):
            guard let screens else {
                send(.actionFailed(device: action.device, action: action.name, message: "this studio has no device screens"), to: client)
                return
            }
            if let refusal = await screens.submit(action, from: client) {
                send(.actionFailed(device: action.device, action: action.name, message: refusal), to: client)
            }
        }
    }

    private func bluetoothChanged(_ state: CentralState) {
        // The stream starts with the state the pages may have been greeted with already.
        guard state != bluetooth else { return }
        bluetooth = state
        broadcast(.bluetooth(state))
        if state != .poweredOn, scanTask != nil {
            scanTask?.cancel()
            scanTask = nil
            broadcast(.scanning(false))
        }
    }

    // MARK: Scanning

    private func startScan() {
        guard scanTask == nil else { return }
        let central = self.central
        scanSerial += 1
        let serial = scanSerial
        scanTask = Task { [weak self] in
            do {
                let stream = try await central.scan(filter: .any, allowDuplicates: true)
                for await found in stream {
                    guard let self else { return }
                    await self.discovered(found)
                }
            } catch {
                await self?.scanFailed(error, serial)
            }
            await self?.scanEnded(serial)
        }
        broadcast(.scanning(true))
    }

    private func stopScan() {
        guard let task = scanTask else { return }
        task.cancel()
        scanTask = nil
        broadcast(.scanning(false))
    }

    private func scanFailed(_ error: any Error, _ serial: Int) {
        guard serial == scanSerial, scanTask != nil else { return }
        broadcast(.error(nil, userFacingText(error)))
    }

    /// The scan's stream ended (the radio stopped, or it failed); not one stopped on request.
    private func scanEnded(_ serial: Int) {
        guard serial == scanSerial, scanTask != nil else { return }
        scanTask = nil
        broadcast(.scanning(false))
    }

    private func discovered(_ found: DiscoveredPeripheral) {
        let now = elapsed()
        var peripheral = peripherals[found.id] ?? StudioPeripheral(
            id: found.id, name: nil, device: nil, rssi: nil, rssiHistory: [], services: [], connectable: true)
        let before = peripheral
        // A name seen once stays: an advertisement without it (a scan response missing) is
        // not a rename.
        peripheral.name = found.displayName ?? before.name
        peripheral.device = DeviceCatalog.entry(matching: found)?.id ?? before.device
        peripheral.rssi = found.rssi
        peripheral.rssiHistory.append(found.rssi)
        if peripheral.rssiHistory.count > StudioPeripheral.historyLength {
            peripheral.rssiHistory.removeFirst(peripheral.rssiHistory.count - StudioPeripheral.historyLength)
        }
        if !found.advertisement.serviceUUIDs.isEmpty { peripheral.services = found.advertisement.serviceUUIDs.map(\.uuidString) }
        peripheral.connectable = found.advertisement.isConnectable
        peripherals[found.id] = peripheral
        lastSeen[found.id] = now
        forgetOldestIfFull()
        // Each peripheral at most twice a second, a rename included (an advertiser changing
        // its name at every advertisement cannot flood the pages).
        if lastSent[found.id].map({ now - $0 >= Self.peripheralUpdateInterval }) ?? true || before.rssiHistory.isEmpty {
            lastSent[found.id] = now
            broadcast(.peripheral(peripheral))
        }
    }

    private func forgetOldestIfFull() {
        guard peripherals.count > Self.maximumPeripherals else { return }
        // Never one with a connection under way or up.
        let forgettable = lastSeen.filter { phases[$0.key].map { $0 == .idle } ?? true }
        guard let oldest = forgettable.min(by: { $0.value < $1.value })?.key else { return }
        peripherals[oldest] = nil
        lastSeen[oldest] = nil
        lastSent[oldest] = nil
        if phases.removeValue(forKey: oldest) != nil {
            watchers.removeValue(forKey: oldest)?.cancel()
            wanted[oldest] = nil
        }
        broadcast(.forgotten(oldest))
    }

    // MARK: Connections

    private func connect(_ id: PeripheralID) {
        wanted[id] = true
        watch(id)
        // One connect at a time per peripheral (a page pressing Connect twice joins it).
        guard connecting.insert(id).inserted else { return }
        let central = self.central
        Task { [weak self] in
            let connection = await central.connection(to: id)
            var failure: (any Error)?
            do { try await connection.connect() } catch { failure = error }
            await self?.connectEnded(id, failure, connection)
        }
    }

    private func connectEnded(_ id: PeripheralID, _ failure: (any Error)?, _ connection: ConnectionStateMachine) {
        connecting.remove(id)
        if let failure {
            // The user's own disconnect ends a connect with `cancelled`: not an error to show.
            if failure as? BLEError != .cancelled { broadcast(.error(id, userFacingText(failure))) }
            return
        }
        // A disconnect that reached the connection before this connect did: undo it.
        if wanted[id] == false { Task { await connection.disconnect() } }
    }

    private func disconnect(_ id: PeripheralID) {
        wanted[id] = false
        let central = self.central
        Task { await central.existingConnection(to: id)?.disconnect() }
    }

    /// Follows a connection's phase (one watcher per peripheral, made before any await so two
    /// pages connecting at once cannot make two).
    private func watch(_ id: PeripheralID) {
        guard watchers[id] == nil else { return }
        if phases[id] == nil { phases[id] = .idle }
        let central = self.central
        watchers[id] = Task { [weak self] in
            let connection = await central.connection(to: id)
            let events = await connection.events()
            // The phase now, then every change, in one task: the page's dot never goes back.
            await self?.phaseChanged(id, await connection.phase)
            for await event in events {
                guard case .phaseChanged(let phase) = event else { continue }
                guard let self else { return }
                await self.phaseChanged(id, phase)
            }
        }
    }

    private func phaseChanged(_ id: PeripheralID, _ phase: BLEPhase) {
        // Only the connections still remembered (a forgotten peripheral's watcher is ending).
        guard let old = phases[id], old != phase else { return }
        phases[id] = phase
        broadcast(.phase(id, phase))
    }
}
#endif
