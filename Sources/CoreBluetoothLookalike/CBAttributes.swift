import Foundation
import TetherCore

/// A Bluetooth UUID (16, 32 or 128 bits), as Apple's `CBUUID`.
///
/// Equality compares the 128-bit value, so `CBUUID(string: "180A")` equals the same UUID
/// written out in full inside the Bluetooth Base UUID.
open class CBUUID: NSObject, NSCopying, @unchecked Sendable {
    /// The UUID as Tether models it (immutable, so sharing is safe).
    let value: BluetoothUUID

    /// Parses a 16-, 32- or 128-bit UUID string. Apple raises an exception for a malformed
    /// string; this traps likewise.
    public init(string theString: String) {
        guard let value = BluetoothUUID(string: theString) else {
            preconditionFailure("CBUUID: invalid UUID string \(theString)")
        }
        self.value = value
    }

    /// Creates a UUID from 2, 4 or 16 big-endian bytes (traps otherwise, like Apple's exception).
    public init(data theData: Data) {
        guard let value = BluetoothUUID(bytes: theData) else {
            preconditionFailure("CBUUID: data must be 2, 4 or 16 bytes, not \(theData.count)")
        }
        self.value = value
    }

    /// Creates a UUID from a Foundation `UUID` (Apple: `init(nsuuid:)`).
    public init(nsuuid theUUID: UUID) {
        self.value = BluetoothUUID(theUUID)
    }

    init(_ value: BluetoothUUID) { self.value = value }

    /// The UUID's bytes in its shortest form (2, 4 or 16).
    open var data: Data { value.data }
    /// The UUID's text: 4 or 8 hex digits for Base-UUID aliases, else the dashed 36-character form.
    open var uuidString: String { value.uuidString }

    open override var description: String { value.uuidString }
    open override var hash: Int { value.hashValue }
    open override func isEqual(_ object: Any?) -> Bool {
        (object as? CBUUID)?.value == value
    }

    public func copy(with zone: NSZone? = nil) -> Any { self }
}

/// The common base of services and characteristics, as Apple's `CBAttribute`.
open class CBAttribute: NSObject, @unchecked Sendable {
    /// The attribute's type UUID.
    open var uuid: CBUUID { fatalError("CBAttribute is abstract") }
}

/// A service of a remote peripheral, as Apple's `CBService`.
///
/// Like every look-alike object, its mutable state belongs to the owning manager's queue.
open class CBService: CBAttribute, @unchecked Sendable {
    private let type: CBUUID
    private let lock = NSLock()
    private var discoveredCharacteristics: [CBCharacteristic]?

    init(uuid: CBUUID, peripheral: CBPeripheral) {
        self.type = uuid
        self.peripheral = peripheral
    }

    open override var uuid: CBUUID { type }
    /// The peripheral the service belongs to.
    public private(set) weak var peripheral: CBPeripheral?
    /// Whether it is a primary service (always true here).
    open var isPrimary: Bool { true }
    /// The characteristics discovered so far; nil before the first discovery.
    open var characteristics: [CBCharacteristic]? { lock.withLock { discoveredCharacteristics } }
    /// Included services (never discovered here).
    open var includedServices: [CBService]? { nil }

    /// Merges a discovery result, keeping the objects of characteristics already known.
    func merge(_ found: [GATTCharacteristic]) -> [CBCharacteristic] {
        lock.withLock {
            var list = discoveredCharacteristics ?? []
            for definition in found {
                let properties = CBCharacteristicProperties(rawValue: UInt(definition.properties.rawValue))
                if let existing = list.first(where: { $0.bluetoothUUID == definition.uuid }) {
                    existing.update(properties: properties)
                } else {
                    list.append(CBCharacteristic(uuid: CBUUID(definition.uuid), properties: properties, service: self))
                }
            }
            discoveredCharacteristics = list
            return list
        }
    }

    func characteristic(_ uuid: BluetoothUUID) -> CBCharacteristic? {
        lock.withLock { discoveredCharacteristics?.first { $0.bluetoothUUID == uuid } }
    }

    func forgetNotifications() {
        for characteristic in characteristics ?? [] { characteristic.setNotifying(false) }
    }
}

/// A characteristic of a remote peripheral's service, as Apple's `CBCharacteristic`.
open class CBCharacteristic: CBAttribute, @unchecked Sendable {
    private let type: CBUUID
    private let lock = NSLock()
    private var currentProperties: CBCharacteristicProperties
    private var currentValue: Data?
    private var notifying = false

    init(uuid: CBUUID, properties: CBCharacteristicProperties, service: CBService) {
        self.type = uuid
        self.currentProperties = properties
        self.service = service
    }

    var bluetoothUUID: BluetoothUUID { type.value }

    open override var uuid: CBUUID { type }
    /// The service this characteristic belongs to.
    public private(set) weak var service: CBService?
    /// What the characteristic supports.
    open var properties: CBCharacteristicProperties { lock.withLock { currentProperties } }
    /// The latest value read or notified; nil before the first one.
    open var value: Data? { lock.withLock { currentValue } }
    /// Whether notifications or indications are enabled.
    open var isNotifying: Bool { lock.withLock { notifying } }
    /// Descriptors (never discovered here).
    open var descriptors: [CBDescriptor]? { nil }

    func update(properties: CBCharacteristicProperties) { lock.withLock { currentProperties = properties } }
    func setValue(_ value: Data) { lock.withLock { currentValue = value } }
    func setNotifying(_ on: Bool) { lock.withLock { notifying = on } }
}

/// A characteristic's descriptor, as Apple's `CBDescriptor`. The look-alike never discovers
/// descriptors; the type exists so signatures match.
open class CBDescriptor: CBAttribute, @unchecked Sendable {
    private let type: CBUUID
    init(uuid: CBUUID) { self.type = uuid }
    open override var uuid: CBUUID { type }
    /// The descriptor's value (always nil here).
    open var value: Any? { nil }
}
