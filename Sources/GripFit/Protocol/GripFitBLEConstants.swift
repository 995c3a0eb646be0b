import TetherCore

/// The GripFit device's GATT identity (integration guide §2.5).
///
/// TX and RX are named from the device's side: the phone subscribes to TX and writes to RX.
public enum GripFitBLEConstants {
    /// Nordic UART Service.
    public static let nusServiceUUID: BluetoothUUID = NordicUARTService.uuid
    /// Device → phone (notify).
    public static let nusTXCharacteristicUUID: BluetoothUUID = NordicUARTService.txCharacteristicUUID
    /// Phone → device (write with response).
    public static let nusRXCharacteristicUUID: BluetoothUUID = NordicUARTService.rxCharacteristicUUID
    /// The advertised name.
    public static let deviceNamePrefix = "_GRIPFIT"
    /// What a device-info line starts with.
    public static let firmwareMessagePrefix = "D:GRIPFIT,"

    /// Where readings and statuses arrive (the device's TX).
    public static let notifyCharacteristic = NordicUARTService.tx
    /// Where commands go (the device's RX).
    public static let writeCharacteristic = NordicUARTService.rx
}

extension DeviceProfile {
    /// GripFit: NUS with TX subscribed and RX required; advertised as `_GRIPFIT` with the NUS
    /// service; the nRF52840 asks for a 247-byte MTU and a 7.5 ms interval (typical for NUS
    /// streaming).
    public static let gripFit = DeviceProfile(
        name: "GripFit",
        advertisedName: GripFitBLEConstants.deviceNamePrefix,
        // The NUS service, with the name as confirmation (guide §4.2).
        scanFilter: ScanFilter(services: [NordicUARTService.uuid], name: .contains(GripFitBLEConstants.deviceNamePrefix)),
        services: [Service(uuid: NordicUARTService.uuid, characteristics: [
            Characteristic(uuid: NordicUARTService.txCharacteristicUUID, properties: [.notify], subscribed: true),
            Characteristic(uuid: NordicUARTService.rxCharacteristicUUID, properties: [.write, .writeWithoutResponse], required: true),
        ])],
        link: Link(preferredMTU: 247, connectionInterval: .microseconds(7500)))
}
