import Foundation

/// Options for a connection request, mirroring CoreBluetooth's connect options.
public struct ConnectOptions: Sendable, Hashable {
    /// Ask the OS to reconnect by itself after an unexpected disconnection
    /// (`CBConnectPeripheralOptionEnableAutoReconnect`, iOS 17 / macOS 14). Drivers that cannot
    /// do this ignore it and report `supportsAutoReconnect == false`.
    public var enableAutoReconnect: Bool
    /// Alert the user on disconnection while the app is suspended.
    public var notifyOnDisconnection: Bool
    /// Alert the user on notifications while the app is suspended.
    public var notifyOnNotification: Bool

    /// Creates connect options.
    public init(enableAutoReconnect: Bool = false, notifyOnDisconnection: Bool = true, notifyOnNotification: Bool = false) {
        self.enableAutoReconnect = enableAutoReconnect
        self.notifyOnDisconnection = notifyOnDisconnection
        self.notifyOnNotification = notifyOnNotification
    }
}

/// Everything a driver reports, in the order it happened.
///
/// The cases mirror `CBCentralManagerDelegate` and `CBPeripheralDelegate` callbacks.
public enum BLEDriverEvent: Sendable {
    /// The radio's state changed.
    ///
    /// Below ``CentralState/poweredOn`` every link is gone (CoreBluetooth drops them without a
    /// disconnection callback; BlueZ when the adapter powers off or bluetoothd restarts). This
    /// event is enough for the core, which treats it as the loss of every connection; a
    /// driver may also report each link's disconnection after it (BlueZ does), which the core
    /// then ignores. A driver whose platform invalidates its peripheral objects with the state
    /// (CoreBluetooth below powered-off) forgets them.
    case stateChanged(CentralState)
    /// A peripheral was seen while scanning.
    case discovered(DiscoveredPeripheral)
    /// A connection (requested, or re-established by the OS) is up.
    case connected(PeripheralID)
    /// A connection attempt failed.
    case failedToConnect(PeripheralID, DriverError?)
    /// A connection went down; `isReconnecting` is true when the OS is already reconnecting.
    case disconnected(PeripheralID, error: DriverError?, isReconnecting: Bool)
    /// Service discovery finished.
    case servicesDiscovered(PeripheralID, [GATTService], DriverError?)
    /// Characteristic discovery for one service finished.
    case characteristicsDiscovered(PeripheralID, service: BluetoothUUID, [GATTCharacteristic], DriverError?)
    /// A notification subscription changed (or failed to).
    case notificationStateUpdated(PeripheralID, CharacteristicPath, isNotifying: Bool, DriverError?)
    /// A read completed or a notification/indication arrived.
    case valueUpdated(PeripheralID, CharacteristicPath, Data, DriverError?)
    /// A write with response completed.
    case writeCompleted(PeripheralID, CharacteristicPath, DriverError?)
    /// The link can take more writes without response.
    case readyToWriteWithoutResponse(PeripheralID)
    /// An RSSI read completed.
    case rssiRead(PeripheralID, Int, DriverError?)
    /// The peripheral's GATT database changed while connected (a Service Changed indication:
    /// a firmware update, a service removed, added or moved): the services listed are gone or
    /// moved, with their characteristics and notification subscriptions, until discovered
    /// again. An empty list says services were only added.
    ///
    /// CoreBluetooth's `peripheral(_:didModifyServices:)`; BlueZ removing or adding GATT
    /// objects under a connected device. The core rediscovers and resubscribes by itself.
    case servicesInvalidated(PeripheralID, [BluetoothUUID])
    /// The OS relaunched the app and hands back these peripherals (state restoration).
    case willRestoreState([PeripheralID])
}

/// A platform's Bluetooth LE central, reduced to commands in and events out.
///
/// Drivers map their platform's calls and callbacks one to one; all connection logic lives in
/// ``Central`` and ``ConnectionStateMachine``. Commands return at once; their outcome arrives as
/// a ``BLEDriverEvent`` on ``events``, which has exactly one consumer (the ``Central``).
public protocol BLEDriver: Sendable {
    /// The driver's event stream. Events are delivered in the order they happened.
    var events: AsyncStream<BLEDriverEvent> { get }
    /// A short name for logs and the CLI (`simulator`, `bluez`, `corebluetooth`).
    var name: String { get }
    /// Whether ``ConnectOptions/enableAutoReconnect`` is honoured.
    var supportsAutoReconnect: Bool { get }

    /// Starts (or restarts) scanning; nil services means all peripherals.
    func scan(services: [BluetoothUUID]?, allowDuplicates: Bool) async
    /// Stops scanning.
    func stopScan() async
    /// Requests a connection. Like CoreBluetooth, a driver never times this out by itself.
    func connect(_ peripheral: PeripheralID, options: ConnectOptions) async
    /// Cancels a pending or established connection.
    func cancelConnection(_ peripheral: PeripheralID) async
    /// Discovers services (nil: all). Every discovery request (services or characteristics) is
    /// answered, in the order asked, as one ATT bearer answers: the core counts on it to tell
    /// the answers of a discovery that started over (Service Changed) from the new ones.
    func discoverServices(_ services: [BluetoothUUID]?, on peripheral: PeripheralID) async
    /// Discovers characteristics of one service (nil: all).
    func discoverCharacteristics(_ characteristics: [BluetoothUUID]?, for service: BluetoothUUID, on peripheral: PeripheralID) async
    /// Enables or disables notifications (or indications).
    func setNotifyValue(_ enabled: Bool, for characteristic: CharacteristicPath, on peripheral: PeripheralID) async
    /// Reads a characteristic's value.
    func readValue(for characteristic: CharacteristicPath, on peripheral: PeripheralID) async
    /// Writes a value of at most ``maximumWriteValueLength(for:on:)`` bytes.
    func writeValue(_ data: Data, for characteristic: CharacteristicPath, type: WriteType, on peripheral: PeripheralID) async
    /// Reads the link's RSSI.
    func readRSSI(on peripheral: PeripheralID) async
    /// The largest value one write of this type can carry on this link.
    func maximumWriteValueLength(for type: WriteType, on peripheral: PeripheralID) async -> Int
    /// Whether a write without response can be queued now (flow control).
    func canSendWriteWithoutResponse(on peripheral: PeripheralID) async -> Bool
}
