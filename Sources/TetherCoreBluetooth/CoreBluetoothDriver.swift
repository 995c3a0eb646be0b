#if canImport(CoreBluetooth)
import CoreBluetooth
#else
@_spi(Simulation) import CoreBluetoothLookalike
#endif
import Foundation
import Logging
import TetherCore

/// The app's Bluetooth authorization, as CoreBluetooth's `CBManagerAuthorization` reports it.
public enum BluetoothAuthorization: String, Sendable, Hashable {
    /// The user has not been asked yet (the first `CBCentralManager` asks).
    case notDetermined
    /// Bluetooth use is restricted on this device (for example by parental controls).
    case restricted
    /// The user denied Bluetooth to this app; only Settings can change that.
    case denied
    /// The app may use Bluetooth.
    case allowedAlways
}

/// A `BLEDriver` over CoreBluetooth's `CBCentralManager` and `CBPeripheral`.
///
/// The same source compiles against Apple's CoreBluetooth and, on Linux, against
/// `CoreBluetoothLookalike` (the CoreBluetooth API on the simulator's virtual radio).
///
/// Every delegate callback arrives on one serial queue and is turned into a
/// `BLEDriverEvent` and yielded into ``events`` synchronously, in the order CoreBluetooth
/// called it — no task per callback, which is what reorders or loses notifications elsewhere.
/// Commands hop onto the same queue, so CoreBluetooth objects are only touched there.
///
/// `@unchecked Sendable`: all mutable state (`central`, `peripherals`) is read and written only
/// on `queue`.
public final class CoreBluetoothDriver: NSObject, BLEDriver, CBPeripheralDelegate, @unchecked Sendable {
    public let events: AsyncStream<BLEDriverEvent>
    public let name = "corebluetooth"
    /// True when the initializer allowed the OS to reconnect by itself (every supported OS can).
    public let supportsAutoReconnect: Bool

    private let continuation: AsyncStream<BLEDriverEvent>.Continuation
    private let queue: DispatchQueue
    private let queueKey = DispatchSpecificKey<ObjectIdentifier>()
    private let logger: Logger
    private var central: CBCentralManager?
    /// The manager's delegate (it holds it weakly): one that answers `willRestoreState` only
    /// when a restore identifier is set, as CoreBluetooth logs a misuse otherwise.
    private var centralDelegate: NSObject?
    /// Strong references: CoreBluetooth cancels connections to peripherals nobody retains.
    private var peripherals: [UUID: CBPeripheral] = [:]
    /// Peripherals with a connection asked for or up: kept whatever else is seen.
    private var linked: Set<UUID> = []
    /// The other peripherals, least recently seen first: at most ``peripheralCacheLimit`` are
    /// kept, so a long scan (or one allowing duplicates) does not grow without bound.
    private var unlinkedOrder: [UUID] = []
    /// How many peripherals not linked are kept.
    package let peripheralCacheLimit: Int

    /// Creates the driver and its `CBCentralManager`.
    ///
    /// - Parameters:
    ///   - queue: Where CoreBluetooth's callbacks run (a private serial queue targets it, so a
    ///     concurrent queue is fine); nil: a private queue of their own.
    ///   - restoreIdentifier: Opts into state restoration
    ///     (`CBCentralManagerOptionRestoreIdentifierKey`); restored peripherals arrive as
    ///     `BLEDriverEvent/willRestoreState(_:)` before the first state change.
    ///   - showPowerAlert: Lets the system alert the user when Bluetooth is off.
    ///   - autoReconnect: Allows `CBConnectPeripheralOptionEnableAutoReconnect` where the OS has it.
    ///   - logger: Where the driver logs.
    public convenience init(
        queue: DispatchQueue? = nil,
        restoreIdentifier: String? = nil,
        showPowerAlert: Bool = false,
        autoReconnect: Bool = true,
        logger: Logger = Logger(label: "tether.corebluetooth")
    ) {
        self.init(queue: queue, restoreIdentifier: restoreIdentifier, showPowerAlert: showPowerAlert,
                  autoReconnect: autoReconnect, peripheralCacheLimit: 256, logger: logger)
    }

    package init(
        queue: DispatchQueue?,
        restoreIdentifier: String?,
        showPowerAlert: Bool,
        autoReconnect: Bool,
        peripheralCacheLimit: Int,
        logger: Logger
    ) {
        // A caller's queue may be concurrent, which would run callbacks side by side and out of
        // order: a private serial queue targeting it keeps them one at a time, in order, on the
        // caller's threads.
        self.queue = DispatchQueue(label: "tether.corebluetooth", target: queue)
        self.peripheralCacheLimit = max(1, peripheralCacheLimit)
        self.logger = logger
        // Every platform floor the package declares has auto-reconnect.
        supportsAutoReconnect = autoReconnect
        // Unbounded: a dropped driver event would wedge the connection state machine.
        (events, continuation) = AsyncStream.makeStream(of: BLEDriverEvent.self, bufferingPolicy: .unbounded)
        super.init()
        self.queue.setSpecific(key: queueKey, value: ObjectIdentifier(self))
        var options: [String: Any] = [CBCentralManagerOptionShowPowerAlertKey: NSNumber(value: showPowerAlert)]
        var restoring = false
        if let restoreIdentifier {
            if Self.declaresBluetoothCentralBackgroundMode {
                options[CBCentralManagerOptionRestoreIdentifierKey] = restoreIdentifier
                restoring = true
            } else {
                // CoreBluetooth raises an exception (the app crashes) for a restore identifier
                // without the background mode: go on without restoration, and say why.
                logger.error("State restoration is off: the app does not declare the bluetooth-central background mode (UIBackgroundModes in Info.plist)")
            }
        }
        let delegate: NSObject & CBCentralManagerDelegate = restoring ? RestoringCentralDelegate(self) : CentralDelegate(self)
        centralDelegate = delegate
        // No callback may run before `central` is set: the queue is held meanwhile. (Not a
        // `sync` onto it: it may target the caller's own queue, the main queue for one, and
        // a sync from there deadlocks.)
        self.queue.suspend()
        central = CBCentralManager(delegate: delegate, queue: self.queue, options: options)
        self.queue.resume()
    }

    deinit {
        continuation.finish()
    }

    /// The app's Bluetooth authorization (`CBManager.authorization`).
    public static var authorization: BluetoothAuthorization {
        // Compared rather than switched over: Apple's enum is open (needs `@unknown default`),
        // the look-alike's is closed (where that default would be a warning).
        let current = CBManager.authorization
        let table: [(CBManagerAuthorization, BluetoothAuthorization)] = [
            (.notDetermined, .notDetermined), (.restricted, .restricted), (.denied, .denied), (.allowedAlways, .allowedAlways),
        ]
        return table.first { $0.0 == current }?.1 ?? .denied
    }

    // MARK: Commands

    /// Scans (CoreBluetooth's `scanForPeripherals`). In the background iOS scans only for the
    /// services named (a nil filter finds nothing) and ignores `allowDuplicates`; service UUIDs
    /// a backgrounded advertiser puts in the overflow area are reported with the others.
    public func scan(services: [BluetoothUUID]?, allowDuplicates: Bool) async {
        onQueue {
            guard let central, central.state == .poweredOn else { return }
            central.scanForPeripherals(
                withServices: services?.map(Self.cbUUID),
                options: [CBCentralManagerScanOptionAllowDuplicatesKey: NSNumber(value: allowDuplicates)])
        }
    }

    public func stopScan() async {
        onQueue {
            guard let central, central.state == .poweredOn else { return }
            central.stopScan()
        }
    }

    public func connect(_ peripheral: PeripheralID, options: ConnectOptions) async {
        onQueue {
            guard let central, central.state == .poweredOn else { return }
            guard let target = cbPeripheral(peripheral) else {
                yield(.failedToConnect(peripheral, .connectionFailed("unknown peripheral")))
                return
            }
            var connectOptions: [String: Any] = [
                CBConnectPeripheralOptionNotifyOnDisconnectionKey: NSNumber(value: options.notifyOnDisconnection),
                CBConnectPeripheralOptionNotifyOnNotificationKey: NSNumber(value: options.notifyOnNotification),
            ]
            if supportsAutoReconnect, options.enableAutoReconnect {
                connectOptions[CBConnectPeripheralOptionEnableAutoReconnect] = NSNumber(value: true)
            }
            link(target.identifier)
            central.connect(target, options: connectOptions)
        }
    }

    public func cancelConnection(_ peripheral: PeripheralID) async {
        onQueue {
            guard let central, central.state == .poweredOn, let target = peripherals[peripheral.uuid] else { return }
            central.cancelPeripheralConnection(target)
        }
    }

    public func discoverServices(_ services: [BluetoothUUID]?, on peripheral: PeripheralID) async {
        onQueue {
            guard let target = connected(peripheral) else { return }
            target.discoverServices(services?.map(Self.cbUUID))
        }
    }

    public func discoverCharacteristics(_ characteristics: [BluetoothUUID]?, for service: BluetoothUUID, on peripheral: PeripheralID) async {
        onQueue {
            guard let target = connected(peripheral) else { return }
            guard let cbService = target.services?.first(where: { Self.uuid($0.uuid) == service }) else {
                yield(.characteristicsDiscovered(peripheral, service: service, [], .invalidHandle))
                return
            }
            target.discoverCharacteristics(characteristics?.map(Self.cbUUID), for: cbService)
        }
    }

    public func setNotifyValue(_ enabled: Bool, for characteristic: CharacteristicPath, on peripheral: PeripheralID) async {
        onQueue {
            guard let target = connected(peripheral) else { return }
            guard let cbCharacteristic = Self.find(characteristic, in: target) else {
                yield(.notificationStateUpdated(peripheral, characteristic, isNotifying: false, .invalidHandle))
                return
            }
            target.setNotifyValue(enabled, for: cbCharacteristic)
        }
    }

    public func readValue(for characteristic: CharacteristicPath, on peripheral: PeripheralID) async {
        onQueue {
            guard let target = connected(peripheral) else { return }
            guard let cbCharacteristic = Self.find(characteristic, in: target) else {
                yield(.valueUpdated(peripheral, characteristic, Data(), .invalidHandle))
                return
            }
            target.readValue(for: cbCharacteristic)
        }
    }

    public func writeValue(_ data: Data, for characteristic: CharacteristicPath, type: WriteType, on peripheral: PeripheralID) async {
        onQueue {
            guard let target = connected(peripheral) else { return }
            guard let cbCharacteristic = Self.find(characteristic, in: target) else {
                if type == .withResponse { yield(.writeCompleted(peripheral, characteristic, .invalidHandle)) }
                return
            }
            target.writeValue(data, for: cbCharacteristic, type: type == .withResponse ? .withResponse : .withoutResponse)
        }
    }

    public func readRSSI(on peripheral: PeripheralID) async {
        onQueue { connected(peripheral)?.readRSSI() }
    }

    public func maximumWriteValueLength(for type: WriteType, on peripheral: PeripheralID) async -> Int {
        onQueue {
            guard let target = peripherals[peripheral.uuid] else { return type == .withResponse ? 512 : 20 }
            // No attribute value exceeds 512 bytes; CoreBluetooth reports MTU − 3 for commands,
            // which a large MTU (517, 527) puts past it, and peripherals drop such commands.
            return min(512, target.maximumWriteValueLength(for: type == .withResponse ? .withResponse : .withoutResponse))
        }
    }

    public func canSendWriteWithoutResponse(on peripheral: PeripheralID) async -> Bool {
        onQueue { peripherals[peripheral.uuid]?.canSendWriteWithoutResponse ?? false }
    }

    // MARK: Central manager callbacks (through `CentralDelegate`)

    /// Whether the app declares the `bluetooth-central` background mode, which state
    /// restoration requires.
    static var declaresBluetoothCentralBackgroundMode: Bool {
        #if canImport(CoreBluetooth)
        let modes = Bundle.main.object(forInfoDictionaryKey: "UIBackgroundModes") as? [String]
        #else
        let modes = CBLookalikeBackend.current?.appInfo["UIBackgroundModes"] as? [String]
        #endif
        return modes?.contains("bluetooth-central") ?? false
    }

    fileprivate func centralManagerDidUpdateState(_ central: CBCentralManager) {
        let state = Self.centralState(central.state)
        if state == .unauthorized {
            logger.warning("Bluetooth is not authorized", metadata: ["authorization": "\(Self.authorization.rawValue)"])
        }
        if state != .poweredOn, state != .poweredOff, !peripherals.isEmpty {
            // Below powered-off (resetting, unknown, unauthorized, unsupported) every
            // CBPeripheral CoreBluetooth handed out is invalid. Fresh ones come from discovery
            // or `retrievePeripherals(withIdentifiers:)`.
            logger.info("Bluetooth is \(state); forgetting \(peripherals.count) peripheral object(s)")
            peripherals.removeAll()
            linked.removeAll()
            unlinkedOrder.removeAll()
        } else if state == .poweredOff {
            // Every link is gone (the objects stay valid): none is kept for a connection now.
            for id in linked.sorted(by: { $0.uuidString < $1.uuidString }) { unlink(id) }
        }
        // Below poweredOn every link is gone without a callback per peripheral: the state says
        // so (see `BLEDriverEvent.stateChanged`).
        yield(.stateChanged(state))
    }

    fileprivate func centralManager(_ central: CBCentralManager, willRestoreState dict: [String: Any]) {
        let restored = dict[CBCentralManagerRestoredStatePeripheralsKey] as? [CBPeripheral] ?? []
        for peripheral in restored {
            // Handed back connected or connecting: kept like any link.
            link(peripheral.identifier)
            adopt(peripheral)
        }
        logger.info("Restoring state", metadata: ["peripherals": "\(restored.count)"])
        yield(.willRestoreState(restored.map { PeripheralID($0.identifier) }))
    }

    fileprivate func centralManager(_ central: CBCentralManager, didDiscover peripheral: CBPeripheral, advertisementData: [String: Any], rssi RSSI: NSNumber) {
        adopt(peripheral)
        yield(.discovered(DiscoveredPeripheral(
            id: PeripheralID(peripheral.identifier), name: peripheral.name,
            advertisement: Self.advertisement(advertisementData), rssi: Self.rssi(RSSI))))
    }

    fileprivate func centralManager(_ central: CBCentralManager, didConnect peripheral: CBPeripheral) {
        adopt(peripheral)
        link(peripheral.identifier)
        yield(.connected(PeripheralID(peripheral.identifier)))
    }

    fileprivate func centralManager(_ central: CBCentralManager, didFailToConnect peripheral: CBPeripheral, error: (any Error)?) {
        unlink(peripheral.identifier)
        yield(.failedToConnect(PeripheralID(peripheral.identifier), Self.driverError(error)))
    }

    fileprivate func centralManager(_ central: CBCentralManager, didDisconnectPeripheral peripheral: CBPeripheral, timestamp: CFAbsoluteTime, isReconnecting: Bool, error: (any Error)?) {
        // The OS reconnecting keeps the peripheral linked (it must stay retained for that).
        if !isReconnecting { unlink(peripheral.identifier) }
        yield(.disconnected(PeripheralID(peripheral.identifier), error: Self.driverError(error), isReconnecting: isReconnecting))
    }

    // MARK: CBPeripheralDelegate

    public func peripheral(_ peripheral: CBPeripheral, didDiscoverServices error: (any Error)?) {
        let services = (peripheral.services ?? []).map { GATTService(uuid: Self.uuid($0.uuid), isPrimary: $0.isPrimary) }
        yield(.servicesDiscovered(PeripheralID(peripheral.identifier), error == nil ? services : [], Self.driverError(error)))
    }

    public func peripheral(_ peripheral: CBPeripheral, didDiscoverCharacteristicsFor service: CBService, error: (any Error)?) {
        let serviceUUID = Self.uuid(service.uuid)
        let characteristics = (service.characteristics ?? []).map { characteristic in
            GATTCharacteristic(
                path: CharacteristicPath(service: serviceUUID, characteristic: Self.uuid(characteristic.uuid)),
                properties: CharacteristicProperties(rawValue: UInt8(truncatingIfNeeded: characteristic.properties.rawValue)),
                descriptors: (characteristic.descriptors ?? []).map { GATTDescriptor(uuid: Self.uuid($0.uuid)) })
        }
        yield(.characteristicsDiscovered(PeripheralID(peripheral.identifier), service: serviceUUID, error == nil ? characteristics : [], Self.driverError(error)))
    }

    public func peripheral(_ peripheral: CBPeripheral, didUpdateNotificationStateFor characteristic: CBCharacteristic, error: (any Error)?) {
        guard let path = Self.path(characteristic) else { return }
        yield(.notificationStateUpdated(PeripheralID(peripheral.identifier), path, isNotifying: characteristic.isNotifying, Self.driverError(error)))
    }

    public func peripheral(_ peripheral: CBPeripheral, didUpdateValueFor characteristic: CBCharacteristic, error: (any Error)?) {
        guard let path = Self.path(characteristic) else { return }
        let value = error == nil ? (characteristic.value ?? Data()) : Data()
        yield(.valueUpdated(PeripheralID(peripheral.identifier), path, value, Self.driverError(error)))
    }

    public func peripheral(_ peripheral: CBPeripheral, didWriteValueFor characteristic: CBCharacteristic, error: (any Error)?) {
        guard let path = Self.path(characteristic) else { return }
        yield(.writeCompleted(PeripheralID(peripheral.identifier), path, Self.driverError(error)))
    }

    public func peripheralIsReady(toSendWriteWithoutResponse peripheral: CBPeripheral) {
        yield(.readyToWriteWithoutResponse(PeripheralID(peripheral.identifier)))
    }

    public func peripheral(_ peripheral: CBPeripheral, didReadRSSI RSSI: NSNumber, error: (any Error)?) {
        let id = PeripheralID(peripheral.identifier)
        guard error != nil || Self.rssi(RSSI) != nil else {
            yield(.rssiRead(id, 0, .other("the link's signal strength is not available")))
            return
        }
        yield(.rssiRead(id, RSSI.intValue, Self.driverError(error)))
    }

    public func peripheral(_ peripheral: CBPeripheral, didModifyServices invalidatedServices: [CBService]) {
        // The CBService objects (and their characteristics) are dead: every lookup goes
        // through `peripheral.services`, which no longer holds them, until rediscovered.
        yield(.servicesInvalidated(PeripheralID(peripheral.identifier), invalidatedServices.map { Self.uuid($0.uuid) }))
    }

    // MARK: Internals

    private func yield(_ event: BLEDriverEvent) {
        continuation.yield(event)
    }

    /// Runs `body` on the queue and returns its result; inline when already on it (a
    /// `queue.sync` from the queue itself would deadlock).
    private func onQueue<T>(_ body: () -> T) -> T {
        if DispatchQueue.getSpecific(key: queueKey) == ObjectIdentifier(self) { return body() }
        return queue.sync(execute: body)
    }

    private func adopt(_ peripheral: CBPeripheral) {
        peripheral.delegate = self
        let id = peripheral.identifier
        peripherals[id] = peripheral
        guard !linked.contains(id) else { return }
        unlinkedOrder.removeAll { $0 == id }
        unlinkedOrder.append(id)
        evictUnlinked()
    }

    /// Keeps `id` whatever else is seen: a connection is asked for or up.
    private func link(_ id: UUID) {
        linked.insert(id)
        unlinkedOrder.removeAll { $0 == id }
    }

    /// `id`'s connection is over: it is kept like any peripheral seen.
    private func unlink(_ id: UUID) {
        guard linked.remove(id) != nil, peripherals[id] != nil else { return }
        unlinkedOrder.append(id)
        evictUnlinked()
    }

    private func evictUnlinked() {
        while unlinkedOrder.count > peripheralCacheLimit {
            peripherals[unlinkedOrder.removeFirst()] = nil
        }
    }

    /// Peripheral objects held (linked ones and at most ``peripheralCacheLimit`` others).
    package var cachedPeripheralCount: Int { onQueue { peripherals.count } }

    private func cbPeripheral(_ id: PeripheralID) -> CBPeripheral? {
        if let known = peripherals[id.uuid] { return known }
        guard let retrieved = central?.retrievePeripherals(withIdentifiers: [id.uuid]).first else { return nil }
        adopt(retrieved)
        return retrieved
    }

    private func connected(_ id: PeripheralID) -> CBPeripheral? {
        guard let peripheral = peripherals[id.uuid], peripheral.state == .connected else { return nil }
        return peripheral
    }

    static func cbUUID(_ uuid: BluetoothUUID) -> CBUUID { CBUUID(data: uuid.data) }

    /// CoreBluetooth's RSSI in dBm, or nil for its 127, which means "not available".
    static func rssi(_ value: NSNumber) -> Int? {
        value.intValue == 127 ? nil : value.intValue
    }

    static func uuid(_ uuid: CBUUID) -> BluetoothUUID {
        BluetoothUUID(bytes: uuid.data) ?? BluetoothUUID(string: uuid.uuidString) ?? BluetoothUUID(high: 0, low: 0)
    }

    private static func find(_ path: CharacteristicPath, in peripheral: CBPeripheral) -> CBCharacteristic? {
        peripheral.services?.first { uuid($0.uuid) == path.service }?
            .characteristics?.first { uuid($0.uuid) == path.characteristic }
    }

    private static func path(_ characteristic: CBCharacteristic) -> CharacteristicPath? {
        guard let service = characteristic.service else { return nil }
        return CharacteristicPath(service: uuid(service.uuid), characteristic: uuid(characteristic.uuid))
    }

    static func centralState(_ state: CBManagerState) -> CentralState {
        // See `authorization` for why this is a table and not a switch.
        let table: [(CBManagerState, CentralState)] = [
            (.unknown, .unknown), (.resetting, .resetting), (.unsupported, .unsupported),
            (.unauthorized, .unauthorized), (.poweredOff, .poweredOff), (.poweredOn, .poweredOn),
        ]
        return table.first { $0.0 == state }?.1 ?? .unknown
    }

    /// Maps CoreBluetooth's `NSError`s: ATT codes pass through unchanged (so the core turns
    /// 5, 8, 14 and 15 into pairing failures), link errors become their `DriverError` cases.
    static func driverError(_ error: (any Error)?) -> DriverError? {
        guard let error else { return nil }
        let nsError = error as NSError
        if nsError.domain == CBATTErrorDomain, (1...255).contains(nsError.code) {
            return .att(ATTError(UInt8(nsError.code)))
        }
        guard nsError.domain == CBErrorDomain, let code = CBError.Code(rawValue: nsError.code) else {
            return .other(nsError.localizedDescription)
        }
        switch code {
        case .connectionTimeout: return .connectionTimeout
        case .peripheralDisconnected: return .peripheralDisconnected
        case .connectionFailed, .connectionLimitReached, .unknownDevice: return .connectionFailed(nsError.localizedDescription)
        case .invalidHandle: return .invalidHandle
        case .encryptionTimedOut: return .encryptionFailed
        // The peer forgot the bond: the same situation as ATT error 14 in the transport guide.
        case .peerRemovedPairingInformation: return .att(.unlikelyError)
        default: return .other(nsError.localizedDescription)
        }
    }

    static func advertisement(_ data: [String: Any]) -> AdvertisementData {
        var serviceData: [BluetoothUUID: Data] = [:]
        for (key, value) in data[CBAdvertisementDataServiceDataKey] as? [CBUUID: Data] ?? [:] { serviceData[uuid(key)] = value }
        let connectable = data[CBAdvertisementDataIsConnectable]
        // An advertiser in the background on iOS puts its services in the overflow area only:
        // without them a service filter would never match it.
        var services = (data[CBAdvertisementDataServiceUUIDsKey] as? [CBUUID] ?? []).map(uuid)
        for overflow in (data[CBAdvertisementDataOverflowServiceUUIDsKey] as? [CBUUID] ?? []).map(uuid) where !services.contains(overflow) {
            services.append(overflow)
        }
        return AdvertisementData(
            localName: data[CBAdvertisementDataLocalNameKey] as? String,
            serviceUUIDs: services,
            manufacturerData: data[CBAdvertisementDataManufacturerDataKey] as? Data,
            serviceData: serviceData,
            txPowerLevel: (data[CBAdvertisementDataTxPowerLevelKey] as? NSNumber)?.intValue,
            isConnectable: (connectable as? NSNumber)?.boolValue ?? (connectable as? Bool) ?? true)
    }
}

/// The central manager's delegate, forwarding to the driver on its queue. It does not answer
/// `willRestoreState`: CoreBluetooth logs an API misuse for a delegate that does while the
/// manager has no restore identifier.
///
/// Only the disconnection variant with `isReconnecting` is implemented: implementing the legacy
/// `didDisconnectPeripheral:error:` as well turns auto-reconnect off.
private final class CentralDelegate: NSObject, CBCentralManagerDelegate, @unchecked Sendable {
    private weak var driver: CoreBluetoothDriver?
    init(_ driver: CoreBluetoothDriver) { self.driver = driver }

    func centralManagerDidUpdateState(_ central: CBCentralManager) { driver?.centralManagerDidUpdateState(central) }
    func centralManager(_ central: CBCentralManager, didDiscover peripheral: CBPeripheral, advertisementData: [String: Any], rssi RSSI: NSNumber) {
        driver?.centralManager(central, didDiscover: peripheral, advertisementData: advertisementData, rssi: RSSI)
    }
    func centralManager(_ central: CBCentralManager, didConnect peripheral: CBPeripheral) { driver?.centralManager(central, didConnect: peripheral) }
    func centralManager(_ central: CBCentralManager, didFailToConnect peripheral: CBPeripheral, error: (any Error)?) {
        driver?.centralManager(central, didFailToConnect: peripheral, error: error)
    }
    func centralManager(_ central: CBCentralManager, didDisconnectPeripheral peripheral: CBPeripheral, timestamp: CFAbsoluteTime, isReconnecting: Bool, error: (any Error)?) {
        driver?.centralManager(central, didDisconnectPeripheral: peripheral, timestamp: timestamp, isReconnecting: isReconnecting, error: error)
    }
}

/// The delegate of a manager with a restore identifier: ``CentralDelegate``'s callbacks and
/// `willRestoreState`. A separate class rather than a subclass, so that each declares its own
/// conformance (a subclass's method would not be seen as the protocol's on every platform).
private final class RestoringCentralDelegate: NSObject, CBCentralManagerDelegate, @unchecked Sendable {
    private let forward: CentralDelegate
    private weak var driver: CoreBluetoothDriver?
    init(_ driver: CoreBluetoothDriver) {
        self.driver = driver
        self.forward = CentralDelegate(driver)
    }

    func centralManager(_ central: CBCentralManager, willRestoreState dict: [String: Any]) { driver?.centralManager(central, willRestoreState: dict) }
    func centralManagerDidUpdateState(_ central: CBCentralManager) { forward.centralManagerDidUpdateState(central) }
    func centralManager(_ central: CBCentralManager, didDiscover peripheral: CBPeripheral, advertisementData: [String: Any], rssi RSSI: NSNumber) {
        forward.centralManager(central, didDiscover: peripheral, advertisementData: advertisementData, rssi: RSSI)
    }
    func centralManager(_ central: CBCentralManager, didConnect peripheral: CBPeripheral) { forward.centralManager(central, didConnect: peripheral) }
    func centralManager(_ central: CBCentralManager, didFailToConnect peripheral: CBPeripheral, error: (any Error)?) {
        forward.centralManager(central, didFailToConnect: peripheral, error: error)
    }
    func centralManager(_ central: CBCentralManager, didDisconnectPeripheral peripheral: CBPeripheral, timestamp: CFAbsoluteTime, isReconnecting: Bool, error: (any Error)?) {
        forward.centralManager(central, didDisconnectPeripheral: peripheral, timestamp: timestamp, isReconnecting: isReconnecting, error: error)
    }
}
