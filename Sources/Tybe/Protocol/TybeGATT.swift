import TetherCore

/// The Tybe bridge's GATT identity (wire protocol v1, "GATT").
///
/// The bridge advertises ``defaultBridgeName`` and needs no pairing or bonding.
public enum TybeGATT {
    /// The Tybe service.
    public static let serviceUUID: BluetoothUUID = "74796265-0000-0001-8000-00805F9B34FB"
    /// Text Input: frames of opcodes (write, write without response).
    public static let textInputUUID: BluetoothUUID = "74796265-0010-0001-8000-00805F9B34FB"
    /// Status: 4-byte notifications (notify, read).
    public static let statusUUID: BluetoothUUID = "74796265-0020-0001-8000-00805F9B34FB"
    /// Config: 10-byte read, 1-byte channel write (read, write).
    public static let configUUID: BluetoothUUID = "74796265-0030-0001-8000-00805F9B34FB"
    /// Control: `0x01` requests a status notification (write, write without response).
    public static let controlUUID: BluetoothUUID = "74796265-0040-0001-8000-00805F9B34FB"

    /// Where frames are written.
    public static let textInput = CharacteristicPath(service: serviceUUID, characteristic: textInputUUID)
    /// Where status notifications arrive.
    public static let status = CharacteristicPath(service: serviceUUID, characteristic: statusUUID)
    /// Where the bridge's configuration is read and the ESB channel written.
    public static let config = CharacteristicPath(service: serviceUUID, characteristic: configUUID)
    /// Where control commands go.
    public static let control = CharacteristicPath(service: serviceUUID, characteristic: controlUUID)

    /// Text Input's properties.
    public static let textInputProperties: CharacteristicProperties = [.write, .writeWithoutResponse]
    /// Status's properties.
    public static let statusProperties: CharacteristicProperties = [.notify, .read]
    /// Config's properties.
    public static let configProperties: CharacteristicProperties = [.read, .write]
    /// Control's properties.
    public static let controlProperties: CharacteristicProperties = [.write, .writeWithoutResponse]

    /// Every Tybe characteristic, in table order.
    public static let allCharacteristics: [CharacteristicPath] = [textInput, status, config, control]

    /// The local name the bridge advertises (clients let the user change it).
    public static let defaultBridgeName = "Tybe Zephyr Dev"
}

extension DeviceProfile {
    /// Tybe: its service with Text Input, Config and Control required and Status subscribed,
    /// advertised as ``TybeGATT/defaultBridgeName`` (clients look for the name the user set);
    /// an nRF52 Zephyr build asking for a 185-byte MTU and a 15 ms interval for keyboard latency.
    public static let tybe = DeviceProfile(
        name: "Tybe",
        advertisedName: TybeGATT.defaultBridgeName,
        services: [Service(uuid: TybeGATT.serviceUUID, characteristics: [
            Characteristic(uuid: TybeGATT.textInputUUID, properties: TybeGATT.textInputProperties, required: true),
            Characteristic(uuid: TybeGATT.statusUUID, properties: TybeGATT.statusProperties, subscribed: true),
            Characteristic(uuid: TybeGATT.configUUID, properties: TybeGATT.configProperties, required: true),
            Characteristic(uuid: TybeGATT.controlUUID, properties: TybeGATT.controlProperties, required: true),
        ])],
        link: Link(preferredMTU: 185, connectionInterval: .milliseconds(15)))
}
