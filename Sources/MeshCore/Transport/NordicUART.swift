import TetherCore

/// The Nordic UART Service as a MeshCore radio exposes it.
///
/// PocketMesh calls the write characteristic "TX" and the notify one "RX" (the app's view);
/// other guides name the same UUIDs from the device's view, so code here says write/notify.
public enum MeshCoreBLE {
    /// NUS service `6E400001-…`.
    public static let service: BluetoothUUID = NordicUARTService.uuid
    /// The characteristic the app writes frames to (`6E400002-…`, PocketMesh's "TX").
    public static let writeCharacteristic = NordicUARTService.rx
    /// The characteristic the radio notifies frames on (`6E400003-…`, PocketMesh's "RX").
    public static let notifyCharacteristic = NordicUARTService.tx
    /// Every MeshCore radio's advertised name starts with this.
    public static let namePrefix = "MeshCore"
    /// The scan filter for MeshCore radios (NUS service or a `MeshCore` name).
    public static let scanFilter = ScanFilter(services: [service], name: .prefix(namePrefix), matchServicesOrName: true)
}

extension DeviceProfile {
    /// A MeshCore companion radio: NUS with both characteristics required and TX subscribed,
    /// advertised as `MeshCore-<node name>` (found by service or name prefix); it asks for a
    /// 247-byte MTU, so a 176-byte frame fits one notification.
    public static let meshCore = DeviceProfile(
        name: "MeshCore",
        advertisedName: MeshCoreBLE.namePrefix,
        scanFilter: MeshCoreBLE.scanFilter,
        services: [Service(uuid: NordicUARTService.uuid, characteristics: [
            Characteristic(uuid: NordicUARTService.rxCharacteristicUUID, properties: [.write, .writeWithoutResponse], required: true),
            Characteristic(uuid: NordicUARTService.txCharacteristicUUID, properties: [.notify], required: true, subscribed: true),
        ])],
        link: Link(preferredMTU: 247, connectionInterval: .milliseconds(30)))
}
