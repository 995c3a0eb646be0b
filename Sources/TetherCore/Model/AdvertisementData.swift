import Foundation

/// What a peripheral advertises (and returns in its scan response).
public struct AdvertisementData: Sendable, Equatable, Codable {
    /// The advertised (complete or shortened) local name.
    public var localName: String?
    /// Service UUIDs in the advertisement.
    public var serviceUUIDs: [BluetoothUUID]
    /// Manufacturer-specific data: company identifier (little-endian) followed by payload.
    public var manufacturerData: Data?
    /// Service data keyed by service UUID.
    public var serviceData: [BluetoothUUID: Data]
    /// The advertised TX power level in dBm.
    public var txPowerLevel: Int?
    /// Whether the peripheral accepts connections.
    public var isConnectable: Bool

    /// Creates advertisement data.
    public init(
        localName: String? = nil,
        serviceUUIDs: [BluetoothUUID] = [],
        manufacturerData: Data? = nil,
        serviceData: [BluetoothUUID: Data] = [:],
        txPowerLevel: Int? = nil,
        isConnectable: Bool = true
    ) {
        self.localName = localName
        self.serviceUUIDs = serviceUUIDs
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.txPowerLevel = txPowerLevel
        self.isConnectable = isConnectable
    }

    /// The Bluetooth SIG company identifier at the start of the manufacturer data, if any.
    public var companyIdentifier: UInt16? {
        guard let data = manufacturerData, data.count >= 2 else { return nil }
        let start = data.startIndex
        return UInt16(data[start]) | UInt16(data[start + 1]) << 8
    }
}
