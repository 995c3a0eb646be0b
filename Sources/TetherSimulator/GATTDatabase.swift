import Foundation
import TetherCore

/// A characteristic a virtual peripheral serves.
public struct CharacteristicDefinition: Sendable {
    /// The characteristic's UUID.
    public var uuid: BluetoothUUID
    /// What it supports.
    public var properties: CharacteristicProperties
    /// The value returned by reads (behaviours may change it).
    public var value: Data

    /// Creates a characteristic definition.
    public init(uuid: BluetoothUUID, properties: CharacteristicProperties, value: Data = Data()) {
        self.uuid = uuid
        self.properties = properties
        self.value = value
    }
}

/// A service a virtual peripheral serves.
public struct ServiceDefinition: Sendable {
    /// The service's UUID.
    public var uuid: BluetoothUUID
    /// Its characteristics.
    public var characteristics: [CharacteristicDefinition]

    /// Creates a service definition.
    public init(uuid: BluetoothUUID, characteristics: [CharacteristicDefinition]) {
        self.uuid = uuid
        self.characteristics = characteristics
    }
}

/// The ATT operations faults can target.
public enum GATTOperation: String, Sendable, Hashable, CaseIterable {
    /// ATT Read Request.
    case read
    /// ATT Write Request (write with response).
    case write
    /// ATT Write Command (write without response).
    case writeWithoutResponse
    /// Enabling or disabling notifications (a CCCD write).
    case subscribe
}
