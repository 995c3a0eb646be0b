/// A peripheral seen while scanning.
public struct DiscoveredPeripheral: Sendable, Equatable, Identifiable, Codable {
    /// The peripheral's identifier, used to connect.
    public let id: PeripheralID
    /// The peripheral's GAP name, when known (may differ from the advertised local name).
    public var name: String?
    /// What it advertised.
    public var advertisement: AdvertisementData
    /// Received signal strength in dBm.
    public var rssi: Int

    /// Creates a discovery record.
    public init(id: PeripheralID, name: String? = nil, advertisement: AdvertisementData, rssi: Int) {
        self.id = id
        self.name = name
        self.advertisement = advertisement
        self.rssi = rssi
    }

    /// The name to show a person: the advertised local name, else the GAP name.
    public var displayName: String? { advertisement.localName ?? name }
}
