/// Properties of a GATT characteristic (the Core Specification's property bits).
public struct CharacteristicProperties: OptionSet, Sendable, Hashable, Codable {
    /// The property bits.
    public let rawValue: UInt8
    /// Wraps property bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The value can be broadcast in advertisements.
    public static let broadcast = Self(rawValue: 0x01)
    /// The value can be read.
    public static let read = Self(rawValue: 0x02)
    /// The value can be written without response (ATT Write Command).
    public static let writeWithoutResponse = Self(rawValue: 0x04)
    /// The value can be written with response (ATT Write Request).
    public static let write = Self(rawValue: 0x08)
    /// The peripheral can notify value changes.
    public static let notify = Self(rawValue: 0x10)
    /// The peripheral can indicate value changes (acknowledged notifications).
    public static let indicate = Self(rawValue: 0x20)
    /// Signed writes are accepted.
    public static let authenticatedSignedWrites = Self(rawValue: 0x40)
    /// Extended properties are in a descriptor.
    public static let extendedProperties = Self(rawValue: 0x80)
}

/// How a value is written to a characteristic.
public enum WriteType: String, Sendable, Hashable, Codable {
    /// ATT Write Request: the peripheral acknowledges (or rejects) each write.
    case withResponse
    /// ATT Write Command: no acknowledgement, paced by the link's flow control.
    case withoutResponse
}

/// Names one characteristic within one service; the key for reads, writes and notifications.
public struct CharacteristicPath: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The service that contains the characteristic.
    public let service: BluetoothUUID
    /// The characteristic's UUID.
    public let characteristic: BluetoothUUID

    /// Creates a path.
    public init(service: BluetoothUUID, characteristic: BluetoothUUID) {
        self.service = service
        self.characteristic = characteristic
    }

    public var description: String { "\(service)/\(characteristic)" }
}

/// A GATT descriptor.
public struct GATTDescriptor: Sendable, Hashable, Codable {
    /// The descriptor's UUID (0x2902 is the Client Characteristic Configuration).
    public let uuid: BluetoothUUID
    /// Creates a descriptor.
    public init(uuid: BluetoothUUID) { self.uuid = uuid }

    /// Client Characteristic Configuration Descriptor (enables notifications/indications).
    public static let clientCharacteristicConfiguration = BluetoothUUID(UInt16(0x2902))
}

/// A discovered GATT characteristic.
public struct GATTCharacteristic: Sendable, Hashable, Codable {
    /// Where the characteristic lives.
    public let path: CharacteristicPath
    /// What it supports.
    public let properties: CharacteristicProperties
    /// Its descriptors.
    public let descriptors: [GATTDescriptor]

    /// Creates a characteristic description.
    public init(path: CharacteristicPath, properties: CharacteristicProperties, descriptors: [GATTDescriptor] = []) {
        self.path = path
        self.properties = properties
        self.descriptors = descriptors
    }

    /// The characteristic's UUID.
    public var uuid: BluetoothUUID { path.characteristic }
}

/// A discovered GATT service.
public struct GATTService: Sendable, Hashable, Codable {
    /// The service's UUID.
    public let uuid: BluetoothUUID
    /// Whether it is a primary service.
    public let isPrimary: Bool

    /// Creates a service description.
    public init(uuid: BluetoothUUID, isPrimary: Bool = true) {
        self.uuid = uuid
        self.isPrimary = isPrimary
    }
}
