import TetherCore

/// The Kiro desk companion's GATT identity and link timing (protocol §2 and §8.3).
///
/// Characteristics are named from the app's side: the app writes commands to
/// ``writeCharacteristic`` and subscribes to ``notifyCharacteristic`` for events.
public enum KiroBLEConstants {
    /// The Kiro service (`FFE0`, a 16-bit alias inside the Bluetooth Base UUID).
    public static let serviceUUID: BluetoothUUID = "0000FFE0-0000-1000-8000-00805F9B34FB"
    /// App → device commands (write with response).
    public static let writeCharacteristicUUID: BluetoothUUID = "0000FFE1-0000-1000-8000-00805F9B34FB"
    /// Device → app events (notify).
    public static let notifyCharacteristicUUID: BluetoothUUID = "0000FFE2-0000-1000-8000-00805F9B34FB"

    /// Where commands go.
    public static let writeCharacteristic = CharacteristicPath(
        service: serviceUUID, characteristic: writeCharacteristicUUID)
    /// Where events arrive.
    public static let notifyCharacteristic = CharacteristicPath(
        service: serviceUUID, characteristic: notifyCharacteristicUUID)

    /// The advertised local name.
    public static let deviceName = "Kiro"

    /// How long one scan may run before it counts as "device not found" (§2.3).
    public static let scanTimeout: Duration = .seconds(10)
    /// How long one connection attempt may take (§2.3).
    public static let connectionTimeout: Duration = .seconds(15)

    /// Backoff before each scan retry; its count is the maximum number of retries (§8.3).
    public static let scanRetryDelays: [Duration] = [.seconds(2), .seconds(4), .seconds(8)]
    /// Backoff before each connection retry (§8.3).
    public static let connectRetryDelays: [Duration] = [.seconds(1), .seconds(2), .seconds(4)]
    /// Backoff before each write retry (§8.3).
    public static let writeRetryDelays: [Duration] = [.milliseconds(500), .seconds(1)]
}

extension DeviceProfile {
    /// Kiro: the `FFE0` service with FFE1 (commands, required) and FFE2 (events, subscribed),
    /// advertised as `Kiro`; a small BLE module asking for a 185-byte MTU.
    public static let kiro = DeviceProfile(
        name: "Kiro",
        advertisedName: KiroBLEConstants.deviceName,
        services: [Service(uuid: KiroBLEConstants.serviceUUID, characteristics: [
            Characteristic(uuid: KiroBLEConstants.writeCharacteristicUUID, properties: [.write], required: true),
            Characteristic(uuid: KiroBLEConstants.notifyCharacteristicUUID, properties: [.notify], subscribed: true),
        ])],
        link: Link(preferredMTU: 185, connectionInterval: .milliseconds(30)))
}
