/// Nordic's UART Service (NUS), the serial-over-GATT service GripFit and MeshCore radios use.
///
/// RX and TX are named from the device's side, as Nordic names them: the app writes to RX and
/// subscribes to TX. (PocketMesh names them from the app's side, the other way round.)
public enum NordicUARTService {
    /// The service, `6E400001-…`.
    public static let uuid: BluetoothUUID = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"
    /// The device receives here: the app writes, `6E400002-…`.
    public static let rxCharacteristicUUID: BluetoothUUID = "6E400002-B5A3-F393-E0A9-E50E24DCCA9E"
    /// The device transmits here: the app subscribes, `6E400003-…`.
    public static let txCharacteristicUUID: BluetoothUUID = "6E400003-B5A3-F393-E0A9-E50E24DCCA9E"
    /// Where the app writes.
    public static let rx = CharacteristicPath(service: uuid, characteristic: rxCharacteristicUUID)
    /// What the app subscribes to.
    public static let tx = CharacteristicPath(service: uuid, characteristic: txCharacteristicUUID)
}
