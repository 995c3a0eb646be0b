import Foundation
import TetherCore
import TetherSimulator

/// The common base of remote devices, as Apple's `CBPeer`.
open class CBPeer: NSObject, @unchecked Sendable {
    private let uuid: UUID
    init(identifier: UUID) { self.uuid = identifier }
    /// The peer's stable identifier.
    open var identifier: UUID { uuid }
}

/// A remote peripheral, as Apple's `CBPeripheral`.
///
/// Commands are accepted only while `.connected` (others are ignored and logged as
/// "API MISUSE"); their outcomes arrive on the manager's queue through ``delegate``.
open class CBPeripheral: CBPeer, @unchecked Sendable {
    /// The delegate; held weakly, as on Apple platforms.
    open weak var delegate: (any CBPeripheralDelegate)?

    let peripheralID: PeripheralID
    private weak var manager: CBCentralManager?
    private let lock = NSRecursiveLock()
    private var currentName: String?
    private var currentState: CBPeripheralState = .disconnected
    private var discoveredServices: [CBService]?
    /// The filters of the service discoveries asked for and not answered yet, oldest first.
    private var serviceDiscoveries: [[BluetoothUUID]?] = []
    private var mtu = 23
    /// Writes without response the mirror believes the controller can still take; the radio's
    /// readiness events refill it (see `deliver(_:)`).
    private var writeCredits = 0
    /// Bluetooth reset since this object was handed out: it is stale, as Apple's are.
    private var invalidated = false

    init(id: PeripheralID, name: String?, manager: CBCentralManager) {
        self.peripheralID = id
        self.currentName = name
        self.manager = manager
        super.init(identifier: id.uuid)
    }

    deinit {
        let linked = currentState == .connecting || currentState == .connected
        if !invalidated { manager?.peripheralReleased(peripheralID, whileLinked: linked) }
    }

    /// The GAP name, once known.
    open var name: String? { lock.withLock { currentName } }
    /// The connection state.
    open var state: CBPeripheralState { lock.withLock { currentState } }
    /// The services discovered on the current connection; nil before discovery.
    open var services: [CBService]? { lock.withLock { discoveredServices } }
    /// Whether a write without response can be sent now. When false, wait for
    /// `peripheralIsReady(toSendWriteWithoutResponse:)`; writes sent anyway may be dropped.
    open var canSendWriteWithoutResponse: Bool {
        lock.withLock { currentState == .connected && writeCredits > 0 }
    }

    open override var description: String {
        "<CBPeripheral: identifier = \(identifier.uuidString), name = \(name ?? "(null)"), state = \(Self.stateName(state))>"
    }

    private static func stateName(_ state: CBPeripheralState) -> String {
        switch state {
        case .disconnected: "disconnected"
        case .connecting: "connecting"
        case .connected: "connected"
        case .disconnecting: "disconnecting"
        }
    }

    /// The largest value one write of `type` can carry: 512 with response, ATT MTU − 3 without.
    open func maximumWriteValueLength(for type: CBCharacteristicWriteType) -> Int {
        switch type {
        case .withResponse: 512
        case .withoutResponse: lock.withLock { mtu } - 3
        }
    }

    /// Discovers services (nil: all); `peripheral(_:didDiscoverServices:)` follows.
    open func discoverServices(_ serviceUUIDs: [CBUUID]?) {
        guard let manager = requireConnected() else { return }
        let wanted = serviceUUIDs?.map(\.value), id = peripheralID
        lock.withLock { serviceDiscoveries.append(wanted) }
        manager.submit { await $0.discoverServices(wanted, on: id) }
    }

    /// Discovers characteristics of a service; `peripheral(_:didDiscoverCharacteristicsFor:error:)` follows.
    open func discoverCharacteristics(_ characteristicUUIDs: [CBUUID]?, for service: CBService) {
        guard let manager = requireConnected() else { return }
        let wanted = characteristicUUIDs?.map(\.value), id = peripheralID, uuid = service.uuid.value
        manager.submit { await $0.discoverCharacteristics(wanted, for: uuid, on: id) }
    }

    /// Enables or disables notifications/indications; `didUpdateNotificationStateFor` follows.
    open func setNotifyValue(_ enabled: Bool, for characteristic: CBCharacteristic) {
        guard let manager = requireConnected(), let path = path(of: characteristic) else { return }
        let id = peripheralID
        manager.submit { await $0.setNotifyValue(enabled, for: path, on: id) }
    }

    /// Reads a characteristic; `peripheral(_:didUpdateValueFor:error:)` follows.
    open func readValue(for characteristic: CBCharacteristic) {
        guard let manager = requireConnected(), let path = path(of: characteristic) else { return }
        let id = peripheralID
        manager.submit { await $0.readValue(for: path, on: id) }
    }

    /// Writes a value. With response, `peripheral(_:didWriteValueFor:error:)` follows; without,
    /// nothing does, and ``canSendWriteWithoutResponse`` paces the writes.
    open func writeValue(_ data: Data, for characteristic: CBCharacteristic, type: CBCharacteristicWriteType) {
        guard let manager = requireConnected(), let path = path(of: characteristic) else { return }
        let id = peripheralID
        switch type {
        case .withResponse:
            manager.submit { await $0.writeValue(data, for: path, type: .withResponse, on: id) }
        case .withoutResponse:
            let exhausted: Bool = lock.withLock {
                writeCredits -= 1
                return writeCredits <= 0
            }
            manager.submit { driver in
                await driver.writeValue(data, for: path, type: .withoutResponse, on: id)
                guard exhausted else { return }
                // The mirror ran out of credit. Asking the radio arms its readiness event if its
                // buffer is full; if it still has room, say so now, in order with the radio's
                // other events (nothing else can refill the mirror).
                if await driver.canSendWriteWithoutResponse(on: id) {
                    await driver.inject(.readyToWriteWithoutResponse(id))
                }
            }
        }
    }

    /// Reads the link's RSSI; `peripheral(_:didReadRSSI:error:)` follows.
    open func readRSSI() {
        guard let manager = requireConnected() else { return }
        let id = peripheralID
        manager.submit { await $0.readRSSI(on: id) }
    }

    // MARK: Internals

    private func requireConnected() -> CBCentralManager? {
        guard let manager else { return nil }
        guard !isInvalidated else {
            manager.misuse("<CBPeripheral \(identifier.uuidString)> is invalid: it was handed out before Bluetooth reset")
            return nil
        }
        guard manager.state == .poweredOn, state == .connected else {
            manager.misuse("<CBPeripheral \(identifier.uuidString)> can only accept commands while in the connected state")
            return nil
        }
        return manager
    }

    private func path(of characteristic: CBCharacteristic) -> CharacteristicPath? {
        guard let service = characteristic.service else {
            manager?.misuse("<CBCharacteristic \(characteristic.uuid)> no longer belongs to a service")
            return nil
        }
        return CharacteristicPath(service: service.uuid.value, characteristic: characteristic.uuid.value)
    }

    func updateName(_ name: String) { lock.withLock { currentName = name } }

    /// Whether a Bluetooth reset made this object stale.
    var isInvalidated: Bool { lock.withLock { invalidated } }

    func invalidate() { lock.withLock { invalidated = true } }

    func connectRequested() {
        lock.withLock { if currentState == .disconnected { currentState = .connecting } }
    }

    func cancelRequested() {
        lock.withLock { if currentState == .connected { currentState = .disconnecting } }
    }

    func linkUp(_ link: CBCentralManager.LinkInfo) {
        lock.withLock {
            currentState = .connected
            mtu = link.mtu
            writeCredits = link.writeBuffer
        }
    }

    func linkDown(reconnecting: Bool) {
        let services: [CBService]? = lock.withLock {
            currentState = reconnecting ? .connecting : .disconnected
            writeCredits = 0
            serviceDiscoveries.removeAll()
            defer { discoveredServices = nil }
            return discoveredServices
        }
        for service in services ?? [] { service.forgetNotifications() }
    }

    func restore(_ link: CBCentralManager.LinkInfo?) {
        if let link, link.connected { linkUp(link) } else { lock.withLock { currentState = .connecting } }
    }

    private func service(_ uuid: BluetoothUUID) -> CBService? {
        lock.withLock { discoveredServices?.first { $0.uuid.value == uuid } }
    }

    private func characteristic(_ path: CharacteristicPath) -> CBCharacteristic? {
        service(path.service)?.characteristic(path.characteristic)
    }

    /// Runs on the manager's queue: updates the attribute objects, then calls the delegate.
    func deliver(_ event: BLEDriverEvent) {
        switch event {
        case .servicesDiscovered(_, let found, let error):
            lock.withLock {
                let filter = serviceDiscoveries.isEmpty ? nil : serviceDiscoveries.removeFirst()
                guard error == nil else { return }
                // A discovery of every service says what the database holds now (services it
                // no longer lists are gone); one for named services adds to what is known.
                var list = filter == nil ? [] : discoveredServices ?? []
                for service in found where !list.contains(where: { $0.uuid.value == service.uuid }) {
                    list.append(discoveredServices?.first { $0.uuid.value == service.uuid } ?? CBService(uuid: CBUUID(service.uuid), peripheral: self))
                }
                discoveredServices = list
            }
            delegate?.peripheral(self, didDiscoverServices: error?.cbNSError)
        case .characteristicsDiscovered(_, let uuid, let found, let error):
            let target = service(uuid) ?? CBService(uuid: CBUUID(uuid), peripheral: self)
            if error == nil { _ = target.merge(found) }
            delegate?.peripheral(self, didDiscoverCharacteristicsFor: target, error: error?.cbNSError)
        case .notificationStateUpdated(_, let path, let isNotifying, let error):
            guard let characteristic = characteristic(path) else { return }
            characteristic.setNotifying(isNotifying)
            delegate?.peripheral(self, didUpdateNotificationStateFor: characteristic, error: error?.cbNSError)
        case .valueUpdated(_, let path, let value, let error):
            guard let characteristic = characteristic(path) else { return }
            if error == nil { characteristic.setValue(value) }
            delegate?.peripheral(self, didUpdateValueFor: characteristic, error: error?.cbNSError)
        case .writeCompleted(_, let path, let error):
            guard let characteristic = characteristic(path) else { return }
            delegate?.peripheral(self, didWriteValueFor: characteristic, error: error?.cbNSError)
        case .readyToWriteWithoutResponse:
            // Only a peripheral that could not send hears that it can again.
            let wasBlocked: Bool = lock.withLock {
                guard currentState == .connected, writeCredits <= 0 else { return false }
                writeCredits = 1
                return true
            }
            if wasBlocked { delegate?.peripheralIsReady(toSendWriteWithoutResponse: self) }
        case .rssiRead(_, let rssi, let error):
            let unavailable = manager?.backend?.rssiUnavailable.contains(identifier) == true
            delegate?.peripheral(self, didReadRSSI: NSNumber(value: unavailable ? 127 : rssi), error: error?.cbNSError)
        case .servicesInvalidated(_, let uuids):
            // As Apple's: the invalidated services leave `services` (their objects, and their
            // characteristics', are dead from here on) before the delegate hears of them.
            let invalidated: [CBService] = lock.withLock {
                let gone = (discoveredServices ?? []).filter { uuids.contains($0.uuid.value) }
                discoveredServices?.removeAll { uuids.contains($0.uuid.value) }
                return gone
            }
            for service in invalidated { service.forgetNotifications() }
            delegate?.peripheral(self, didModifyServices: invalidated)
        case .stateChanged, .discovered, .connected, .failedToConnect, .disconnected, .willRestoreState:
            break
        }
    }
}
