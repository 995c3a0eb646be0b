import Foundation

/// Firmware and hardware details: the `DEVICE_INFO` reply to `DEVICE_QUERY`.
///
/// Firmware older than version code 3 sends only its version code; the other fields then keep
/// their defaults.
public struct DeviceInfo: Sendable, Hashable {
    /// The first firmware version code that sends the full layout.
    static let fullLayoutVersion: UInt8 = 3
    /// The first firmware version code that appends the repeat flag.
    static let repeatModeVersion: UInt8 = 9
    /// The first firmware version code that appends the path hash mode.
    static let pathHashModeVersion: UInt8 = 10

    /// The firmware version code (13 for v1.17).
    public var firmwareVersionCode: UInt8
    /// How many contacts the radio can store (wire: half this value, one byte).
    public var maxContacts: Int
    /// How many channels the radio can store.
    public var maxChannels: UInt8
    /// The BLE pairing PIN.
    public var blePin: UInt32
    /// The firmware build date (12 bytes on the wire).
    public var buildDate: String
    /// The hardware's manufacturer and model (40 bytes on the wire).
    public var manufacturer: String
    /// The firmware version string (20 bytes on the wire).
    public var firmwareVersion: String
    /// Whether the companion also repeats packets; `nil` when not reported (before v9).
    public var repeatMode: Bool?
    /// The path hash mode; `nil` when not reported (before v10).
    public var pathHashMode: UInt8?

    /// Creates a device-info record.
    public init(
        firmwareVersionCode: UInt8,
        maxContacts: Int = 0,
        maxChannels: UInt8 = 0,
        blePin: UInt32 = 0,
        buildDate: String = "",
        manufacturer: String = "",
        firmwareVersion: String = "",
        repeatMode: Bool? = nil,
        pathHashMode: UInt8? = nil
    ) {
        self.firmwareVersionCode = firmwareVersionCode
        self.maxContacts = maxContacts
        self.maxChannels = maxChannels
        self.blePin = blePin
        self.buildDate = buildDate
        self.manufacturer = manufacturer
        self.firmwareVersion = firmwareVersion
        self.repeatMode = repeatMode
        self.pathHashMode = pathHashMode
    }

    static func decode(from reader: inout ByteReader) throws(MeshCoreDecodeError) -> DeviceInfo {
        let version = try reader.u8()
        guard version >= fullLayoutVersion else {
            return DeviceInfo(firmwareVersionCode: version)
        }
        try reader.require(1 + 1 + 4 + 12 + 40 + 20)
        let maxContacts = Int(try reader.u8()) * 2
        let maxChannels = try reader.u8()
        let blePin = try reader.u32()
        let buildDate = try reader.string(fixed: 12)
        let manufacturer = try reader.string(fixed: 40)
        let firmwareVersion = try reader.string(fixed: 20)
        var repeatMode: Bool?
        var pathHashMode: UInt8?
        if version >= repeatModeVersion, !reader.isAtEnd {
            repeatMode = try reader.u8() != 0
            if version >= pathHashModeVersion, !reader.isAtEnd {
                pathHashMode = try reader.u8()
            }
        }
        return DeviceInfo(
            firmwareVersionCode: version, maxContacts: maxContacts, maxChannels: maxChannels,
            blePin: blePin, buildDate: buildDate, manufacturer: manufacturer,
            firmwareVersion: firmwareVersion, repeatMode: repeatMode, pathHashMode: pathHashMode)
    }

    /// Writes the layout the firmware version implies. The optional tail bytes are written
    /// only when the version supports them and the value is set.
    func encode(into writer: inout ByteWriter) {
        writer.u8(firmwareVersionCode)
        guard firmwareVersionCode >= Self.fullLayoutVersion else { return }
        writer.u8(UInt8(clamping: max(0, maxContacts) / 2))
        writer.u8(maxChannels)
        writer.u32(blePin)
        writer.string(buildDate, fixed: 12)
        writer.string(manufacturer, fixed: 40)
        writer.string(firmwareVersion, fixed: 20)
        let writesPathHash = firmwareVersionCode >= Self.pathHashModeVersion && pathHashMode != nil
        if firmwareVersionCode >= Self.repeatModeVersion, repeatMode != nil || writesPathHash {
            writer.bool(repeatMode ?? false)
            if writesPathHash, let pathHashMode {
                writer.u8(pathHashMode)
            }
        }
    }
}
