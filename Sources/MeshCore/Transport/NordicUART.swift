import TetherCore

/// The Nordic UART Service as a MeshCore radio exposes it.
///
/// PocketMesh calls the write characteristic "TX" and the notify one "RX" (the app's view);
/// other guides name the same UUIDs from the device's view, so code here says write/notify.
public enum MeshCoreBLE {
    /// NUS service `6E400001-…`.
    public static let service: BluetoothUUID = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"
    /// The characteristic the app writes frames to (`6E400002-…`, PocketMesh's "TX").
    public static let writeCharacteristic = CharacteristicPath(service: service, characteristic: "6E400002-B5A3-F393-E0A9-E50E24DCCA9E")
    /// The characteristic the radio notifies frames on (`6E400003-…`, PocketMesh's "RX").
    public static let notifyCharacteristic = CharacteristicPath(service: service, characteristic: "6E400003-B5A3-F393-E0A9-E50E24DCCA9E")
    /// Every MeshCore radio's advertised name starts with this.
    public static let namePrefix = "MeshCore"
    /// The scan filter for MeshCore radios (NUS service or a `MeshCore` name).
    public static let scanFilter = ScanFilter(services: [service], name: .prefix(namePrefix), matchServicesOrName: true)
}
