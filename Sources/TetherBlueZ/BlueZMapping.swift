import Foundation
import TetherCore
import TetherDBus

/// BlueZ's D-Bus names.
public enum BlueZ {
    /// The well-known bus name of bluetoothd.
    public static let service = "org.bluez"
    public static let adapterInterface = "org.bluez.Adapter1"
    public static let deviceInterface = "org.bluez.Device1"
    public static let serviceInterface = "org.bluez.GattService1"
    public static let characteristicInterface = "org.bluez.GattCharacteristic1"
    public static let descriptorInterface = "org.bluez.GattDescriptor1"
    public static let agentManagerInterface = "org.bluez.AgentManager1"
    public static let agentInterface = "org.bluez.Agent1"
    public static let gattManagerInterface = "org.bluez.GattManager1"
    public static let advertisingManagerInterface = "org.bluez.LEAdvertisingManager1"
    public static let advertisementInterface = "org.bluez.LEAdvertisement1"
    public static let objectManagerInterface = "org.freedesktop.DBus.ObjectManager"
    public static let propertiesInterface = "org.freedesktop.DBus.Properties"
}

/// Pure translations between BlueZ's D-Bus vocabulary and Tether's model.
public enum BlueZMapping {
    // MARK: Identity

    /// The fixed first bytes of a BlueZ-derived ``PeripheralID``.
    static let idPrefix: [UInt8] = [0xB1, 0x0E, 0x2D, 0x00]

    /// A stable `PeripheralID` for a device: derived from the adapter index and the device
    /// address (so it survives restarts, like CoreBluetooth's identifiers) and reversible.
    public static func peripheralID(adapterIndex: UInt8, address: String) -> PeripheralID? {
        guard let bytes = addressBytes(address) else { return nil }
        let uuid = idPrefix + [0x00, adapterIndex, 0x40, 0x00, 0x80, 0x00] + bytes
        return PeripheralID(UUID(uuid: (uuid[0], uuid[1], uuid[2], uuid[3], uuid[4], uuid[5], uuid[6], uuid[7],
                                        uuid[8], uuid[9], uuid[10], uuid[11], uuid[12], uuid[13], uuid[14], uuid[15])))
    }

    /// The adapter index and address a BlueZ-derived `PeripheralID` stands for.
    public static func address(of id: PeripheralID) -> (adapterIndex: UInt8, address: String)? {
        let u = id.uuid.uuid
        let bytes = [u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15]
        guard Array(bytes[0..<4]) == idPrefix, bytes[4] == 0, bytes[6...9] == [0x40, 0x00, 0x80, 0x00] else { return nil }
        return (bytes[5], bytes[10...].map { String(format: "%02X", $0) }.joined(separator: ":"))
    }

    /// `AA:BB:CC:DD:EE:FF` → its six bytes.
    public static func addressBytes(_ address: String) -> [UInt8]? {
        let parts = address.split(separator: ":")
        guard parts.count == 6 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }

    /// The index of an adapter path (`/org/bluez/hci3` → 3).
    public static func adapterIndex(_ name: String) -> UInt8? {
        guard name.hasPrefix("hci") else { return nil }
        return UInt8(name.dropFirst(3))
    }

    // MARK: GATT

    /// BlueZ's characteristic `Flags` → ATT properties (flags with no property bit, such as
    /// `encrypt-read` or `reliable-write`, are dropped).
    public static func properties(flags: [String]) -> CharacteristicProperties {
        var properties: CharacteristicProperties = []
        for flag in flags {
            switch flag {
            case "broadcast": properties.insert(.broadcast)
            case "read": properties.insert(.read)
            case "write-without-response": properties.insert(.writeWithoutResponse)
            case "write": properties.insert(.write)
            case "notify": properties.insert(.notify)
            case "indicate": properties.insert(.indicate)
            case "authenticated-signed-writes": properties.insert(.authenticatedSignedWrites)
            case "extended-properties": properties.insert(.extendedProperties)
            default: break
            }
        }
        return properties
    }

    /// ATT properties → the `Flags` a GATT application declares.
    public static func flags(for properties: CharacteristicProperties) -> [String] {
        var flags: [String] = []
        if properties.contains(.broadcast) { flags.append("broadcast") }
        if properties.contains(.read) { flags.append("read") }
        if properties.contains(.writeWithoutResponse) { flags.append("write-without-response") }
        if properties.contains(.write) { flags.append("write") }
        if properties.contains(.notify) { flags.append("notify") }
        if properties.contains(.indicate) { flags.append("indicate") }
        if properties.contains(.authenticatedSignedWrites) { flags.append("authenticated-signed-writes") }
        return flags
    }

    // MARK: Errors

    /// A BlueZ error reply → a `DriverError` (the reverse of `create_gatt_dbus_error` in
    /// BlueZ's `src/gatt-client.c`), with the ATT code where one can be known.
    public static func driverError(name: String, message: String) -> DriverError {
        let lower = message.lowercased()
        switch name {
        case "org.bluez.Error.NotPermitted":
            if lower.contains("not paired") || lower.contains("insufficient") { return .att(.insufficientAuthentication) }
            if lower.contains("read not permitted") { return .att(.readNotPermitted) }
            if lower.contains("write not permitted") { return .att(.writeNotPermitted) }
            return .other("not permitted: \(message)")
        case "org.bluez.Error.NotAuthorized":
            return .att(.insufficientAuthorization)
        case "org.bluez.Error.InvalidOffset":
            return .att(.invalidOffset)
        case "org.bluez.Error.InvalidValueLength":
            return .att(.invalidAttributeValueLength)
        case "org.bluez.Error.InvalidArguments":
            if lower.contains("offset") { return .att(.invalidOffset) }
            if lower.contains("length") { return .att(.invalidAttributeValueLength) }
            return .other("invalid arguments: \(message)")
        case "org.bluez.Error.NotSupported":
            return .att(.requestNotSupported)
        case "org.bluez.Error.NotConnected":
            return .peripheralDisconnected
        case "org.bluez.Error.NotReady":
            return .bluetoothUnavailable(.poweredOff)
        case "org.bluez.Error.AuthenticationFailed", "org.bluez.Error.AuthenticationCanceled",
             "org.bluez.Error.AuthenticationRejected", "org.bluez.Error.AuthenticationTimeout":
            return .encryptionFailed
        case "org.bluez.Error.Failed":
            if let code = attCode(in: message) { return .att(ATTError(code)) }
            if lower.contains("not connected") || lower.contains("disconnected") { return .peripheralDisconnected }
            if lower.hasPrefix("le-connection-") || lower.hasPrefix("br-connection-") { return .connectionFailed(message) }
            return .other(message.isEmpty ? "BlueZ: operation failed" : message)
        case "org.freedesktop.DBus.Error.NoReply":
            return .other("bluetoothd did not answer: \(message)")
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.Disconnected":
            return .bluetoothUnavailable(.resetting)
        case "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownMethod":
            return .invalidHandle
        default:
            return .other(message.isEmpty ? name : "\(name): \(message)")
        }
    }

    /// The ATT code in BlueZ's `"Operation failed with ATT error: 0x0e"` (any case, also
    /// without the `0x`).
    static func attCode(in message: String) -> UInt8? {
        guard let range = message.range(of: "ATT error:", options: .caseInsensitive) else { return nil }
        var text = message[range.upperBound...].trimmingCharacters(in: .whitespaces)
        if text.lowercased().hasPrefix("0x") { text = String(text.dropFirst(2)) }
        let digits = text.prefix { $0.isHexDigit }
        return UInt8(digits, radix: 16)
    }

    /// Whether a failed `Connect` is worth re-issuing (BlueZ's transient `le-connection-*`
    /// aborts, a busy controller, a D-Bus timeout): Tether's driver contract is that a
    /// connection request never times out by itself.
    public static func isRetryableConnectFailure(name: String, message: String) -> Bool {
        switch name {
        case "org.bluez.Error.InProgress", "org.freedesktop.DBus.Error.NoReply": return true
        case "org.bluez.Error.Failed":
            let lower = message.lowercased()
            return lower.hasPrefix("le-connection-") || lower.contains("abort") || lower.contains("timeout")
                || lower.contains("timed out") || lower.contains("busy") || lower.contains("in progress")
        default: return false
        }
    }

    /// How long a `Connect` to a device whose last link went down at `lastLinkDown` must still
    /// wait (``BlueZDriverConfiguration/reconnectSettleTime``); nil: it may go now.
    public static func reconnectDelay(lastLinkDown: ContinuousClock.Instant?, now: ContinuousClock.Instant,
                                      settle: Duration) -> Duration? {
        guard let lastLinkDown else { return nil }
        let left = settle - (now - lastLinkDown)
        return left > .zero ? left : nil
    }

    // MARK: Reads

    /// The notifications among the `Value` changes seen while a read was outstanding.
    ///
    /// BlueZ writes a read's result into its cache and emits it as a `Value` change before the
    /// read's reply, so with notifications on every read would otherwise be reported twice.
    /// The last change equal to the reply is that echo; the others are real notifications
    /// that arrived meanwhile, kept in order.
    public static func notifications(heldDuringRead held: [Data], reply: Data) -> [Data] {
        var notifications = held
        if let echo = notifications.lastIndex(of: reply) { notifications.remove(at: echo) }
        return notifications
    }

    // MARK: Advertisements

    /// A `Device1`'s advertisement properties → `AdvertisementData`. `ManufacturerData`
    /// (`a{qv}`, company id → bytes) becomes Tether's "company id (little-endian) + payload".
    /// Only the first company's data is kept (the model holds one); keys typed as strings
    /// (bluezoo's `a{sv}`) are read too.
    public static func advertisement(from properties: [String: DBusValue]) -> AdvertisementData {
        var advertisement = AdvertisementData()
        if let name = properties["Name"]?.string { advertisement.localName = name }
        advertisement.serviceUUIDs = (properties["UUIDs"]?.stringArray ?? []).compactMap(BluetoothUUID.init(string:))
        let manufacturer = (properties["ManufacturerData"]?.dictionaryEntries ?? []).compactMap { entry -> (UInt16, Data)? in
            let key = entry.key.integer ?? entry.key.string.flatMap { Int64($0) }
            guard let key, let company = UInt16(exactly: key), let bytes = entry.value.bytes else { return nil }
            return (company, bytes)
        }
        if let first = manufacturer.first {
            var data = Data([UInt8(first.0 & 0xFF), UInt8(first.0 >> 8)])
            data.append(first.1)
            advertisement.manufacturerData = data
        }
        for entry in properties["ServiceData"]?.dictionaryEntries ?? [] {
            if let key = entry.key.string, let uuid = BluetoothUUID(string: key), let bytes = entry.value.bytes {
                advertisement.serviceData[uuid] = bytes
            }
        }
        if let tx = properties["TxPower"]?.integer { advertisement.txPowerLevel = Int(tx) }
        return advertisement
    }
}

extension Result {
    /// Whether this is a success (for logs).
    var isSuccess: Bool {
        if case .success = self { true } else { false }
    }
}
