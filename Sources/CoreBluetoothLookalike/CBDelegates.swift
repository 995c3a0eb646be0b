import Foundation

/// The central manager's delegate, as Apple's `CBCentralManagerDelegate`.
///
/// Apple's optional methods are requirements with empty default implementations here (Swift
/// has no optional protocol requirements outside Objective-C), so a delegate implements only
/// what it needs. Class-bound like Apple's `NSObjectProtocol` refinement.
public protocol CBCentralManagerDelegate: NSObjectProtocol {
    /// The manager's state changed. Required, as on Apple platforms.
    func centralManagerDidUpdateState(_ central: CBCentralManager)
    /// The app was relaunched to restore this manager; delivered before the first state update.
    func centralManager(_ central: CBCentralManager, willRestoreState dict: [String: Any])
    /// A scan found a peripheral.
    func centralManager(_ central: CBCentralManager, didDiscover peripheral: CBPeripheral, advertisementData: [String: Any], rssi RSSI: NSNumber)
    /// A connection is up.
    func centralManager(_ central: CBCentralManager, didConnect peripheral: CBPeripheral)
    /// A connection attempt failed.
    func centralManager(_ central: CBCentralManager, didFailToConnect peripheral: CBPeripheral, error: (any Error)?)
    /// A connection went down (legacy variant, called only through the default implementation
    /// of the variant with `timestamp` and `isReconnecting`).
    func centralManager(_ central: CBCentralManager, didDisconnectPeripheral peripheral: CBPeripheral, error: (any Error)?)
    /// A connection went down; `isReconnecting` is true when the system is reconnecting by itself
    /// (`CBConnectPeripheralOptionEnableAutoReconnect`).
    func centralManager(_ central: CBCentralManager, didDisconnectPeripheral peripheral: CBPeripheral, timestamp: CFAbsoluteTime, isReconnecting: Bool, error: (any Error)?)
}

extension CBCentralManagerDelegate {
    public func centralManager(_ central: CBCentralManager, willRestoreState dict: [String: Any]) {}
    public func centralManager(_ central: CBCentralManager, didDiscover peripheral: CBPeripheral, advertisementData: [String: Any], rssi RSSI: NSNumber) {}
    public func centralManager(_ central: CBCentralManager, didConnect peripheral: CBPeripheral) {}
    public func centralManager(_ central: CBCentralManager, didFailToConnect peripheral: CBPeripheral, error: (any Error)?) {}
    public func centralManager(_ central: CBCentralManager, didDisconnectPeripheral peripheral: CBPeripheral, error: (any Error)?) {}

    /// Forwards to the legacy variant, as CoreBluetooth calls the legacy method when a delegate
    /// implements only that one.
    public func centralManager(_ central: CBCentralManager, didDisconnectPeripheral peripheral: CBPeripheral, timestamp: CFAbsoluteTime, isReconnecting: Bool, error: (any Error)?) {
        centralManager(central, didDisconnectPeripheral: peripheral, error: error)
    }
}

/// A peripheral's delegate, as Apple's `CBPeripheralDelegate`; every method is optional
/// (empty default implementations).
public protocol CBPeripheralDelegate: NSObjectProtocol {
    /// Service discovery finished.
    func peripheral(_ peripheral: CBPeripheral, didDiscoverServices error: (any Error)?)
    /// Characteristic discovery for one service finished.
    func peripheral(_ peripheral: CBPeripheral, didDiscoverCharacteristicsFor service: CBService, error: (any Error)?)
    /// A read completed or a notification/indication arrived.
    func peripheral(_ peripheral: CBPeripheral, didUpdateValueFor characteristic: CBCharacteristic, error: (any Error)?)
    /// A write with response completed.
    func peripheral(_ peripheral: CBPeripheral, didWriteValueFor characteristic: CBCharacteristic, error: (any Error)?)
    /// Enabling or disabling notifications completed.
    func peripheral(_ peripheral: CBPeripheral, didUpdateNotificationStateFor characteristic: CBCharacteristic, error: (any Error)?)
    /// The peripheral can take writes without response again (after `canSendWriteWithoutResponse`
    /// was false).
    func peripheralIsReady(toSendWriteWithoutResponse peripheral: CBPeripheral)
    /// An RSSI read completed.
    func peripheral(_ peripheral: CBPeripheral, didReadRSSI RSSI: NSNumber, error: (any Error)?)
    /// The peripheral's name changed (never sent here).
    func peripheralDidUpdateName(_ peripheral: CBPeripheral)
    /// The peripheral's services changed (Service Changed): the services passed are no longer
    /// in `services` and must be discovered again.
    func peripheral(_ peripheral: CBPeripheral, didModifyServices invalidatedServices: [CBService])
}

extension CBPeripheralDelegate {
    public func peripheral(_ peripheral: CBPeripheral, didDiscoverServices error: (any Error)?) {}
    public func peripheral(_ peripheral: CBPeripheral, didDiscoverCharacteristicsFor service: CBService, error: (any Error)?) {}
    public func peripheral(_ peripheral: CBPeripheral, didUpdateValueFor characteristic: CBCharacteristic, error: (any Error)?) {}
    public func peripheral(_ peripheral: CBPeripheral, didWriteValueFor characteristic: CBCharacteristic, error: (any Error)?) {}
    public func peripheral(_ peripheral: CBPeripheral, didUpdateNotificationStateFor characteristic: CBCharacteristic, error: (any Error)?) {}
    public func peripheralIsReady(toSendWriteWithoutResponse peripheral: CBPeripheral) {}
    public func peripheral(_ peripheral: CBPeripheral, didReadRSSI RSSI: NSNumber, error: (any Error)?) {}
    public func peripheralDidUpdateName(_ peripheral: CBPeripheral) {}
    public func peripheral(_ peripheral: CBPeripheral, didModifyServices invalidatedServices: [CBService]) {}
}
