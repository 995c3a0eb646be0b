/// A peripheral seen while scanning.
public struct DiscoveredPeripheral: Sendable, Equatable, Identifiable, Codable {
    /// The peripheral's identifier, used to connect.
    public let id: PeripheralID
    /// The peripheral's GAP name, when known (may differ from the advertised local name).
    public var name: String?
    /// What it advertised.
    public var advertisement: AdvertisementData
    /// Received signal strength in dBm; nil when the stack had no value for this
    /// advertisement (CoreBluetooth's 127).
    public var rssi: Int?

    /// Creates a discovery record.
    public init(id: PeripheralID, name: String? = nil, advertisement: AdvertisementData, rssi: Int?) {
        self.id = id
        self.name = name
        self.advertisement = advertisement
        self.rssi = rssi
    }

    /// The name to show a person: the advertised local name, else the GAP name.
    public var displayName: String? { advertisement.localName ?? name }

    /// A signal strength as a person reads it: `-60 dBm`, or `RSSI unknown` for none.
    public static func describe(rssi: Int?) -> String {
        rssi.map { "\($0) dBm" } ?? "RSSI unknown"
    }
}
