import Foundation
import Logging
import TetherCore
import TetherSimulator

/// The common base of Core Bluetooth managers, as Apple's `CBManager`.
open class CBManager: NSObject, @unchecked Sendable {
    let managerLock = NSRecursiveLock()
    var currentState: CBManagerState = .unknown

    /// The manager's current state. Commands other than reading state are only accepted in
    /// `.poweredOn` (others are ignored and logged as "API MISUSE", like Apple's).
    open var state: CBManagerState { managerLock.withLock { currentState } }

    /// The app's Bluetooth authorization: that of the ``CBLookalikeBackend`` bound to the
    /// calling task, else `.allowedAlways`.
    open class var authorization: CBManagerAuthorization {
        CBLookalikeBackend.current?.authorization ?? .allowedAlways
    }
}

/// The central role, as Apple's `CBCentralManager`, backed by a simulator `VirtualRadio`.
///
/// Every delegate callback — the manager's and its peripherals' — runs on the queue given at
/// init (the main queue when nil), one at a time and in the order the radio produced the
/// events. Commands may be called from any thread; they reach the radio in call order.
open class CBCentralManager: CBManager, @unchecked Sendable {
    /// The delegate; held weakly, as on Apple platforms.
    open weak var delegate: (any CBCentralManagerDelegate)?

    let queue: DispatchQueue
    let backend: CBLookalikeBackend?
    let restoreIdentifier: String?
    private let launch: SimulatedDriver?
    private let commands: AsyncStream<Command>.Continuation
    private var radioState: CentralState = .unknown
    private var scanning = false
    /// The services the running scan asked for (nil: all).
    private var scanServices: [CBUUID]?
    private var scanDuplicates = false
    /// Peripherals the running scan reported (without duplicates, each once).
    private var reported: Set<PeripheralID> = []
    /// Peripherals whose connection this manager asked for or had restored.
    private var owned: Set<PeripheralID> = []
    /// Counts each peripheral's connect calls, and the count at its last cancel: a connect
    /// after a cancel keeps the peripheral this manager's when the cancel's disconnection comes.
    private var connects: [PeripheralID: Int] = [:]
    private var connectsAtCancel: [PeripheralID: Int] = [:]
    /// Held weakly, as Apple's manager holds them: the app retains what it uses, and a
    /// peripheral released while connecting or connected has its connection cancelled.
    private var known: [UUID: WeakPeripheral] = [:]

    private struct WeakPeripheral { weak var peripheral: CBPeripheral? }

    typealias Command = @Sendable (SimulatedDriver) async -> Void

    /// Creates a manager with no delegate on the main queue.
    public convenience override init() {
        self.init(delegate: nil, queue: nil, options: nil)
    }

    /// Creates a manager that calls `delegate` on `queue` (the main queue when nil).
    public convenience init(delegate: (any CBCentralManagerDelegate)?, queue: DispatchQueue?) {
        self.init(delegate: delegate, queue: queue, options: nil)
    }

    /// Creates a manager. Recognized options: ``CBCentralManagerOptionRestoreIdentifierKey``
    /// (opts into `willRestoreState`) and ``CBCentralManagerOptionShowPowerAlertKey`` (ignored).
    public init(delegate: (any CBCentralManagerDelegate)?, queue: DispatchQueue?, options: [String: Any]? = nil) {
        self.queue = queue ?? .main
        let backend = CBLookalikeBackend.current
        var restoreIdentifier = options?[CBCentralManagerOptionRestoreIdentifierKey] as? String
        if restoreIdentifier != nil, let backend,
           !((backend.appInfo["UIBackgroundModes"] as? [String]) ?? []).contains("bluetooth-central") {
            // Apple raises this (the app crashes); here it is recorded and restoration is off.
            backend.raise("State restoration of CBCentralManager is only allowed for applications that have specified the \"bluetooth-central\" background mode")
            restoreIdentifier = nil
        }
        self.restoreIdentifier = restoreIdentifier
        self.backend = backend
        let launch = backend?.currentLaunch()
        self.launch = launch
        let (stream, continuation) = AsyncStream.makeStream(of: Command.self)
        self.commands = continuation
        super.init()
        self.delegate = delegate
        guard let backend, let launch else {
            // No radio: behave like a machine without Bluetooth LE.
            Logger(label: "CoreBluetooth").warning("CBCentralManager created without a CBLookalikeBackend; reporting unsupported")
            self.queue.async { [self] in
                managerLock.withLock { currentState = .unsupported }
                self.delegate?.centralManagerDidUpdateState(self)
            }
            continuation.finish()
            return
        }
        backend.register(self)
        let inFlight = backend.inFlight
        // The command pipe: one task runs radio commands strictly in call order.
        Task { [weak launch] in
            for await command in stream {
                if let launch { await command(launch) }
                inFlight.end()
            }
        }
        // Events come through the backend, which routes each launch's events to its managers.
        backend.join(self, launchedWith: launch)
    }

    /// Delivers a routed event on the queue (the backend counted it in flight).
    func receive(_ event: BLEDriverEvent, links: [PeripheralID: LinkInfo]) {
        let inFlight = backend?.inFlight
        queue.async {
            self.deliver(event, links: links)
            inFlight?.end()
        }
    }

    /// Whether this manager asked for `id`'s connection (or had it restored): its events are
    /// this manager's.
    func owns(_ id: PeripheralID) -> Bool { managerLock.withLock { owned.contains(id) } }

    /// Forgets a peripheral whose connection ended (not one the system is reconnecting), unless
    /// this manager asked for it again after cancelling it.
    func disown(_ id: PeripheralID) {
        managerLock.withLock {
            let reconnected = connectsAtCancel[id].map { connects[id, default: 0] > $0 } ?? false
            connectsAtCancel[id] = nil
            if !reconnected { owned.remove(id) }
        }
    }

    /// Takes peripherals handed back at relaunch.
    func adopt(_ ids: [PeripheralID]) { managerLock.withLock { owned.formUnion(ids) } }

    /// What this manager scans for, if it scans.
    var scanRequest: (services: [BluetoothUUID]?, allowDuplicates: Bool)? {
        managerLock.withLock { scanning ? (scanServices?.map(\.value), scanDuplicates) : nil }
    }

    deinit {
        commands.finish()
    }

    // MARK: Commands

    /// Whether a scan is running.
    open var isScanning: Bool { managerLock.withLock { scanning } }

    /// Scans for peripherals advertising any of `serviceUUIDs` (all when nil). Recognized
    /// option: ``CBCentralManagerScanOptionAllowDuplicatesKey``.
    open func scanForPeripherals(withServices serviceUUIDs: [CBUUID]?, options: [String: Any]? = nil) {
        guard requirePoweredOn() else { return }
        let duplicates = Self.flag(options?[CBCentralManagerScanOptionAllowDuplicatesKey])
        managerLock.withLock {
            scanning = true
            scanServices = serviceUUIDs
            scanDuplicates = duplicates
            reported.removeAll()
        }
        submitScan()
    }

    /// Stops scanning.
    open func stopScan() {
        guard requirePoweredOn() else { return }
        managerLock.withLock { scanning = false }
        submitScan()
    }

    /// Hands the radio what every manager of the launch scans for, as it stands when the
    /// command runs.
    private func submitScan() {
        guard let backend else { return }
        submit { driver in
            if let scan = backend.combinedScan(of: driver) {
                await driver.scan(services: scan.services, allowDuplicates: scan.allowDuplicates)
            } else {
                await driver.stopScan()
            }
        }
    }

    /// Connects to a peripheral; like Apple's, the request never times out by itself.
    /// Recognized option: ``CBConnectPeripheralOptionEnableAutoReconnect``; the notify-on-…
    /// options are accepted and have no effect.
    open func connect(_ peripheral: CBPeripheral, options: [String: Any]? = nil) {
        guard requirePoweredOn() else { return }
        guard !peripheral.isInvalidated else {
            misuse("<CBPeripheral \(peripheral.identifier.uuidString)> is invalid: it was handed out before Bluetooth reset")
            return
        }
        let connectOptions = ConnectOptions(
            enableAutoReconnect: Self.flag(options?[CBConnectPeripheralOptionEnableAutoReconnect]),
            notifyOnDisconnection: Self.flag(options?[CBConnectPeripheralOptionNotifyOnDisconnectionKey]),
            notifyOnNotification: Self.flag(options?[CBConnectPeripheralOptionNotifyOnNotificationKey]))
        peripheral.connectRequested()
        let id = peripheral.peripheralID
        managerLock.withLock {
            owned.insert(id)
            connects[id, default: 0] += 1
        }
        submit { await $0.connect(id, options: connectOptions) }
    }

    /// Cancels a pending or established connection; `didDisconnectPeripheral` follows.
    open func cancelPeripheralConnection(_ peripheral: CBPeripheral) {
        guard requirePoweredOn() else { return }
        guard !peripheral.isInvalidated else {
            misuse("<CBPeripheral \(peripheral.identifier.uuidString)> is invalid: it was handed out before Bluetooth reset")
            return
        }
        peripheral.cancelRequested()
        let id = peripheral.peripheralID
        managerLock.withLock { connectsAtCancel[id] = connects[id, default: 0] }
        submit { await $0.cancelConnection(id) }
    }

    /// The peripheral objects for these identifiers.
    open func retrievePeripherals(withIdentifiers identifiers: [UUID]) -> [CBPeripheral] {
        identifiers.map { peripheral(for: PeripheralID($0), name: nil) }
    }

    /// The peripherals connected through this manager that have one of `serviceUUIDs` among
    /// their discovered services.
    open func retrieveConnectedPeripherals(withServices serviceUUIDs: [CBUUID]) -> [CBPeripheral] {
        let all = managerLock.withLock { known.values.compactMap(\.peripheral) }
        return all.filter { peripheral in
            peripheral.state == .connected
                && (peripheral.services ?? []).contains { service in serviceUUIDs.contains(service.uuid) }
        }
    }

    // MARK: Internals

    func submit(_ command: @escaping Command) {
        guard let inFlight = backend?.inFlight else { return }
        inFlight.begin()
        if case .terminated = commands.yield(command) { inFlight.end() }
    }

    func misuse(_ message: String) {
        if let backend { backend.recordMisuse(message) } else { Logger(label: "CoreBluetooth").warning("API MISUSE: \(message)") }
    }

    private func requirePoweredOn() -> Bool {
        guard state == .poweredOn else {
            misuse("<CBCentralManager> can only accept this command while in the powered on state")
            return false
        }
        return true
    }

    static func flag(_ value: Any?) -> Bool {
        (value as? NSNumber)?.boolValue ?? (value as? Bool) ?? false
    }

    func peripheral(for id: PeripheralID, name: String?) -> CBPeripheral {
        managerLock.withLock {
            if let existing = known[id.uuid]?.peripheral {
                if let name { existing.updateName(name) }
                return existing
            }
            let created = CBPeripheral(id: id, name: name, manager: self)
            known = known.filter { $0.value.peripheral != nil }
            known[id.uuid] = WeakPeripheral(peripheral: created)
            return created
        }
    }

    /// A peripheral object was released while its connection was asked for or up: Apple cancels
    /// such connections (the disconnection then reaches a new object for the identifier).
    func peripheralReleased(_ id: PeripheralID, whileLinked linked: Bool) {
        guard linked else { return }
        misuse("<CBPeripheral \(id.uuid.uuidString)> was released while connecting or connected; its connection is cancelled")
        submit { await $0.cancelConnection(id) }
    }

    func authorizationChanged() {
        guard let inFlight = backend?.inFlight else { return }
        inFlight.begin()
        queue.async {
            self.updateState()
            inFlight.end()
        }
    }

    private var effectiveState: CBManagerState {
        switch backend?.authorization ?? .allowedAlways {
        case .denied, .restricted: return .unauthorized
        case .notDetermined: return .unknown
        case .allowedAlways:
            return managerLock.withLock {
                switch radioState {
                case .unknown: .unknown
                case .resetting: .resetting
                case .unsupported: .unsupported
                case .unauthorized: .unauthorized
                case .poweredOff: .poweredOff
                case .poweredOn: .poweredOn
                }
            }
        }
    }

    /// Recomputes the state; on a change, drops scans and links (no disconnection callbacks,
    /// as Apple) and tells the delegate.
    private func updateState() {
        let next = effectiveState
        let peripherals: [CBPeripheral]? = managerLock.withLock {
            guard next != currentState else { return nil }
            let previous = currentState
            currentState = next
            if next != .poweredOn {
                scanning = false
                // Every link and connection request is gone with the radio.
                owned.removeAll()
                connectsAtCancel.removeAll()
            }
            let all = known.values.compactMap(\.peripheral)
            // Below powered-off (a reset, unauthorized, unsupported, or a return to unknown after
            // the stack was up) every peripheral object is invalid: new ones are handed out.
            if Self.invalidates(next), !(next == .unknown && previous == .unknown) { known.removeAll() }
            return all
        }
        guard let peripherals else { return }
        if next != .poweredOn { for peripheral in peripherals { peripheral.linkDown(reconnecting: false) } }
        if Self.invalidates(next) { for peripheral in peripherals { peripheral.invalidate() } }
        delegate?.centralManagerDidUpdateState(self)
    }

    /// Whether a state invalidates peripheral objects ("below powered-off", in Apple's words).
    static func invalidates(_ state: CBManagerState) -> Bool {
        state == .resetting || state == .unknown || state == .unauthorized || state == .unsupported
    }

    struct LinkInfo: Sendable {
        var connected: Bool
        var mtu: Int
        var writeBuffer: Int
    }

    /// What a connection event needs from the radio that CoreBluetooth reads synchronously
    /// (MTU, write buffer), fetched before the event is delivered so delivery order holds.
    static func linkInfo(for event: BLEDriverEvent, radio: VirtualRadio?) async -> [PeripheralID: LinkInfo] {
        guard let radio else { return [:] }
        let ids: [PeripheralID]
        switch event {
        case .connected(let id): ids = [id]
        case .willRestoreState(let restored): ids = restored
        default: return [:]
        }
        return await { @SimulationActor in
            var result: [PeripheralID: LinkInfo] = [:]
            for id in ids {
                let parameters = radio.virtualPeripheral(id)?.linkParameters ?? LinkParameters()
                result[id] = LinkInfo(connected: radio.isConnected(id), mtu: radio.mtu(of: id) ?? 23,
                                      writeBuffer: max(1, parameters.writeWithoutResponseBuffer))
            }
            return result
        }()
    }

    /// Runs on the queue: updates the objects, then calls the delegate.
    private func deliver(_ event: BLEDriverEvent, links: [PeripheralID: LinkInfo]) {
        switch event {
        case .stateChanged(let newState):
            managerLock.withLock { radioState = newState }
            updateState()
        case .discovered(let found):
            // The radio scans for every manager of the launch: this one hears what its own
            // scan asked for, once per peripheral unless it allows duplicates.
            let wanted: Bool = managerLock.withLock {
                guard scanning else { return false }
                if let services = scanServices, !found.advertisement.serviceUUIDs.contains(where: { services.contains(CBUUID($0)) }) { return false }
                return scanDuplicates || reported.insert(found.id).inserted
            }
            guard wanted else { return }
            var data = Self.advertisementData(found.advertisement)
            let isBackground = backend?.backgroundAdvertisers.contains(found.id.uuid) == true
            if isBackground {
                // A backgrounded iOS advertiser: no name, and its services only in the overflow
                // area, which only a scan naming one of them reads (others see no services).
                let wanted = managerLock.withLock { scanServices } ?? []
                data[CBAdvertisementDataServiceUUIDsKey] = nil
                data[CBAdvertisementDataLocalNameKey] = nil
                if found.advertisement.serviceUUIDs.contains(where: { wanted.contains(CBUUID($0)) }) {
                    data[CBAdvertisementDataOverflowServiceUUIDsKey] = found.advertisement.serviceUUIDs.map(CBUUID.init)
                }
            }
            // A backgrounded advertiser's name is not on the air either.
            let peripheral = peripheral(for: found.id, name: isBackground ? nil : found.name)
            delegate?.centralManager(self, didDiscover: peripheral, advertisementData: data, rssi: NSNumber(value: backend?.rssiUnavailable.contains(found.id.uuid) == true ? 127 : found.rssi ?? 127))
        case .connected(let id):
            let peripheral = peripheral(for: id, name: nil)
            peripheral.linkUp(links[id] ?? LinkInfo(connected: true, mtu: 23, writeBuffer: 1))
            delegate?.centralManager(self, didConnect: peripheral)
        case .failedToConnect(let id, let error):
            let peripheral = peripheral(for: id, name: nil)
            peripheral.linkDown(reconnecting: false)
            delegate?.centralManager(self, didFailToConnect: peripheral, error: error?.cbNSError)
        case .disconnected(let id, let error, let isReconnecting):
            let peripheral = peripheral(for: id, name: nil)
            peripheral.linkDown(reconnecting: isReconnecting)
            let timestamp = (backend?.referenceTime ?? 0) + (backend?.radio.timeline.now.seconds ?? 0)
            delegate?.centralManager(self, didDisconnectPeripheral: peripheral, timestamp: timestamp, isReconnecting: isReconnecting, error: error?.cbNSError)
        case .willRestoreState(let ids):
            // Only a manager that opted in is restored (Apple relaunches only those).
            guard restoreIdentifier != nil else { return }
            let peripherals = ids.map { id in
                let peripheral = peripheral(for: id, name: nil)
                peripheral.restore(links[id])
                return peripheral
            }
            delegate?.centralManager(self, willRestoreState: [CBCentralManagerRestoredStatePeripheralsKey: peripherals])
        case .servicesDiscovered(let id, _, _), .characteristicsDiscovered(let id, _, _, _),
             .notificationStateUpdated(let id, _, _, _), .valueUpdated(let id, _, _, _),
             .writeCompleted(let id, _, _), .readyToWriteWithoutResponse(let id), .rssiRead(let id, _, _),
             .servicesInvalidated(let id, _):
            peripheral(for: id, name: nil).deliver(event)
        }
    }

    static func advertisementData(_ advertisement: AdvertisementData) -> [String: Any] {
        var data: [String: Any] = [CBAdvertisementDataIsConnectable: NSNumber(value: advertisement.isConnectable)]
        if let name = advertisement.localName { data[CBAdvertisementDataLocalNameKey] = name }
        if !advertisement.serviceUUIDs.isEmpty {
            data[CBAdvertisementDataServiceUUIDsKey] = advertisement.serviceUUIDs.map(CBUUID.init)
        }
        if let manufacturer = advertisement.manufacturerData { data[CBAdvertisementDataManufacturerDataKey] = manufacturer }
        if !advertisement.serviceData.isEmpty {
            var serviceData: [CBUUID: Data] = [:]
            for (uuid, value) in advertisement.serviceData { serviceData[CBUUID(uuid)] = value }
            data[CBAdvertisementDataServiceDataKey] = serviceData
        }
        if let power = advertisement.txPowerLevel { data[CBAdvertisementDataTxPowerLevelKey] = NSNumber(value: power) }
        return data
    }
}
