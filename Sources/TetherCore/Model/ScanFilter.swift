/// Decides which discovered peripherals a scan reports.
///
/// Service UUIDs are passed to the driver (the OS filters in hardware where it can); name and
/// RSSI conditions are checked in software on every discovery.
public struct ScanFilter: Sendable, Hashable {
    /// How a peripheral's name must match.
    public enum NameMatch: Sendable, Hashable {
        /// The name equals this string exactly.
        case exact(String)
        /// The name starts with this string (case-sensitive).
        case prefix(String)
        /// The name contains this string, ignoring case.
        case contains(String)
        /// The name contains any of these strings, ignoring case.
        case containsAny([String])

        /// True if `name` satisfies this condition.
        public func matches(_ name: String?) -> Bool {
            guard let name else { return false }
            switch self {
            case .exact(let s): return name == s
            case .prefix(let s): return name.hasPrefix(s)
            case .contains(let s): return name.lowercased().contains(s.lowercased())
            case .containsAny(let list):
                let lowered = name.lowercased()
                return list.contains { lowered.contains($0.lowercased()) }
            }
        }
    }

    /// Advertised services, any of which must be present (empty: no service condition).
    public var services: [BluetoothUUID]
    /// A name condition, if any.
    public var name: NameMatch?
    /// The weakest signal accepted, in dBm. A discovery without a signal strength does not
    /// pass it (nothing says it is near).
    public var minimumRSSI: Int?
    /// When both services and a name are given, accept a match on either (discovery "by service
    /// UUID or by name"); by default both must hold.
    public var matchServicesOrName: Bool

    /// Creates a filter; the default accepts everything.
    public init(
        services: [BluetoothUUID] = [],
        name: NameMatch? = nil,
        minimumRSSI: Int? = nil,
        matchServicesOrName: Bool = false
    ) {
        self.services = services
        self.name = name
        self.minimumRSSI = minimumRSSI
        self.matchServicesOrName = matchServicesOrName
    }

    /// A filter that accepts every peripheral.
    public static let any = ScanFilter()

    /// Service UUIDs to hand to the driver, or nil when the driver must not filter
    /// (an either/or filter needs to see peripherals that advertise no service).
    public var driverServices: [BluetoothUUID]? {
        services.isEmpty || (matchServicesOrName && name != nil) ? nil : services
    }

    /// True if the discovery passes every condition.
    public func matches(_ peripheral: DiscoveredPeripheral) -> Bool {
        if let minimumRSSI, (peripheral.rssi ?? .min) < minimumRSSI { return false }
        let serviceOK = services.isEmpty
            || services.contains { peripheral.advertisement.serviceUUIDs.contains($0) }
        let nameOK = name.map {
            $0.matches(peripheral.advertisement.localName) || $0.matches(peripheral.name)
        } ?? true
        if matchServicesOrName, !services.isEmpty, name != nil {
            return serviceOK || nameOK
        }
        return serviceOK && nameOK
    }
}
