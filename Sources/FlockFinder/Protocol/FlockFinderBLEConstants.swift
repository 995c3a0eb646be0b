import TetherCore

/// The FlockFinder device's GATT identity (BLE protocol spec, "Service & Characteristics").
///
/// The firmware (an oui-spy / flock-you fork on an ESP32-S3) advertises as
/// ``advertisedName`` and hosts one custom service with three characteristics: detections
/// (notify), commands (write) and the live scan stream (notify).
public enum FlockFinderBLEConstants {
    /// The custom FlockFinder service.
    public static let serviceUUID: BluetoothUUID = "4FAFC201-1FB5-459E-8FCC-C5C9C331914B"
    /// Detection alerts, one JSON object per notification.
    public static let detectionUUID: BluetoothUUID = "BEB5483E-36E1-4688-B7F5-EA07361B26A8"
    /// Commands, written as bare UTF-8 strings (see ``FlockCommand``).
    public static let commandUUID: BluetoothUUID = "BEB5483E-36E1-4688-B7F5-EA07361B26A9"
    /// The live scan stream, one JSON object per notification (see ``StreamEvent``).
    public static let streamUUID: BluetoothUUID = "BEB5483E-36E1-4688-B7F5-EA07361B26AA"

    /// Where detections arrive (notify).
    public static let detection = CharacteristicPath(service: serviceUUID, characteristic: detectionUUID)
    /// Where commands go (write with response).
    public static let command = CharacteristicPath(service: serviceUUID, characteristic: commandUUID)
    /// Where stream events arrive (notify).
    public static let stream = CharacteristicPath(service: serviceUUID, characteristic: streamUUID)

    /// Lower-case substrings of advertised names that mark a likely FlockFinder, used when a
    /// device does not advertise ``serviceUUID``. Compare against the lower-cased name.
    public static let deviceNamePatterns = ["flockfinder", "flock", "feather", "esp32", "s3"]
    /// The name the properly configured firmware advertises.
    public static let advertisedName = "FlockFinder-S3"
    /// The largest notification payload the parser accepts.
    ///
    /// Real payloads are at most MTU − 3 bytes (≤ 512); the bound keeps hostile or corrupted
    /// input from costing unbounded parse work.
    public static let maxPayloadBytes = 1024

    /// Whether an advertised name matches one of the ``deviceNamePatterns`` (case-insensitive).
    public static func nameMatches(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return deviceNamePatterns.contains { lowered.contains($0) }
    }
}

extension DeviceProfile {
    /// FlockFinder: its service with Detection and Stream (subscribed) and Command (required),
    /// advertised as `FlockFinder-S3`, found by service or by a name pattern; NimBLE on the
    /// ESP32-S3 as the firmware configures it (185-byte MTU, 30 ms interval).
    public static let flockFinder = DeviceProfile(
        name: "FlockFinder",
        advertisedName: FlockFinderBLEConstants.advertisedName,
        scanFilter: ScanFilter(services: [FlockFinderBLEConstants.serviceUUID],
                               name: .containsAny(FlockFinderBLEConstants.deviceNamePatterns),
                               matchServicesOrName: true),
        services: [Service(uuid: FlockFinderBLEConstants.serviceUUID, characteristics: [
            Characteristic(uuid: FlockFinderBLEConstants.detectionUUID, properties: [.notify], subscribed: true),
            Characteristic(uuid: FlockFinderBLEConstants.commandUUID, properties: [.write], required: true),
            Characteristic(uuid: FlockFinderBLEConstants.streamUUID, properties: [.notify], subscribed: true),
        ])],
        link: Link(preferredMTU: 185, connectionInterval: .milliseconds(30)))
}
