import TetherCore

/// The GripFit device's GATT identity (integration guide §2.5).
///
/// TX and RX are named from the device's side: the phone subscribes to TX and writes to RX.
public enum GripFitBLEConstants {
    /// Nordic UART Service.
    public static let nusServiceUUID: BluetoothUUID = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"
    /// Device → phone (notify).
    public static let nusTXCharacteristicUUID: BluetoothUUID = "6E400003-B5A3-F393-E0A9-E50E24DCCA9E"
    /// Phone → device (write with response).
    public static let nusRXCharacteristicUUID: BluetoothUUID = "6E400002-B5A3-F393-E0A9-E50E24DCCA9E"
    /// The advertised name.
    public static let deviceNamePrefix = "_GRIPFIT"
    /// What a device-info line starts with.
    public static let firmwareMessagePrefix = "D:GRIPFIT,"

    /// Where readings and statuses arrive (the device's TX).
    public static let notifyCharacteristic = CharacteristicPath(service: nusServiceUUID, characteristic: nusTXCharacteristicUUID)
    /// Where commands go (the device's RX).
    public static let writeCharacteristic = CharacteristicPath(service: nusServiceUUID, characteristic: nusRXCharacteristicUUID)
}
