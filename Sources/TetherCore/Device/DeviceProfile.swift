/// Everything a device's GATT identity says, declared once: the services and characteristics its
/// firmware serves, how it advertises, which characteristics a client needs and subscribes to,
/// and the link it asks for.
///
/// The client derives its ``ConnectionConfiguration`` from it
/// (``connectionConfiguration(connectionTimeout:discoveryTimeout:writeTimeout:reconnectPolicy:firstConnectionRetry:notificationBufferSize:)``)
/// and its scan from ``scanFilter``; an emulator derives the virtual peripheral's GATT database
/// and advertisement from the same value (`VirtualPeripheral(profile:…)` in TetherSimulator), so
/// the two sides cannot drift apart.
///
/// ```swift
/// extension DeviceProfile {
///     static let thermometer = DeviceProfile(
///         name: "Thermometer", advertisedName: "THERMO",
///         services: [.init(uuid: serviceUUID, characteristics: [
///             .init(uuid: readingUUID, properties: [.notify], subscribed: true),
///             .init(uuid: commandUUID, properties: [.write], required: true),
///         ])])
/// }
/// ```
public struct DeviceProfile: Sendable, Hashable {
    /// One characteristic of a ``Service``.
    public struct Characteristic: Sendable, Hashable {
        /// Its UUID.
        public var uuid: BluetoothUUID
        /// What the firmware lets a client do with it.
        public var properties: CharacteristicProperties
        /// A connection fails with `characteristicNotFound` when it is missing.
        public var required: Bool
        /// Every (re)connection subscribes to it before it is reported.
        public var subscribed: Bool

        /// Creates a characteristic; `subscribed` needs `.notify` or `.indicate` in `properties`.
        public init(uuid: BluetoothUUID, properties: CharacteristicProperties, required: Bool = false, subscribed: Bool = false) {
            precondition(!subscribed || !properties.isDisjoint(with: [.notify, .indicate]),
                         "a subscribed characteristic must notify or indicate")
            self.uuid = uuid
            self.properties = properties
            self.required = required
            self.subscribed = subscribed
        }
    }

    /// One primary service.
    public struct Service: Sendable, Hashable {
        /// Its UUID.
        public var uuid: BluetoothUUID
        /// Its characteristics, in the firmware's order.
        public var characteristics: [Characteristic]

        /// Creates a service.
        public init(uuid: BluetoothUUID, characteristics: [Characteristic]) {
            self.uuid = uuid
            self.characteristics = characteristics
        }
    }

    /// The link the firmware asks for: hints for emulators and benchmarks (a real central
    /// negotiates them with the device).
    public struct Link: Sendable, Hashable {
        /// The ATT MTU the firmware requests.
        public var preferredMTU: Int
        /// The connection interval it asks for.
        public var connectionInterval: Duration

        /// Creates link hints.
        public init(preferredMTU: Int = 247, connectionInterval: Duration = .milliseconds(30)) {
            self.preferredMTU = preferredMTU
            self.connectionInterval = connectionInterval
        }
    }

    /// The device's product name, for logs and screens ("GripFit").
    public var name: String
    /// The local name the firmware advertises by default.
    public var advertisedName: String?
    /// The services the firmware puts in its advertisement (default: the first service).
    public var advertisedServices: [BluetoothUUID]
    /// How a scan finds the device (default: by its advertised services).
    public var scanFilter: ScanFilter
    /// The GATT database.
    public var services: [Service]
    /// The link the firmware asks for.
    public var link: Link

    /// Creates a profile. `advertisedServices` defaults to the first service, `scanFilter` to
    /// those services.
    public init(
        name: String,
        advertisedName: String? = nil,
        advertisedServices: [BluetoothUUID]? = nil,
        scanFilter: ScanFilter? = nil,
        services: [Service],
        link: Link = Link()
    ) {
        let advertised = advertisedServices ?? services.first.map { [$0.uuid] } ?? []
        self.name = name
        self.advertisedName = advertisedName
        self.advertisedServices = advertised
        self.scanFilter = scanFilter ?? ScanFilter(services: advertised)
        self.services = services
        self.link = link
    }

    /// Every characteristic, with its path, in the database's order.
    public var characteristics: [(path: CharacteristicPath, characteristic: Characteristic)] {
        services.flatMap { service in
            service.characteristics.map { (CharacteristicPath(service: service.uuid, characteristic: $0.uuid), $0) }
        }
    }

    /// The characteristics a connection requires.
    public var requiredCharacteristics: [CharacteristicPath] { characteristics.filter(\.characteristic.required).map(\.path) }

    /// The characteristics every connection subscribes to.
    public var notifyCharacteristics: [CharacteristicPath] { characteristics.filter(\.characteristic.subscribed).map(\.path) }

    /// The declared characteristic at `path`, if any.
    public func characteristic(_ path: CharacteristicPath) -> Characteristic? {
        services.first { $0.uuid == path.service }?.characteristics.first { $0.uuid == path.characteristic }
    }

    /// The connection configuration a client of this device uses: its services discovered, its
    /// required characteristics checked, its subscriptions made on every (re)connection.
    public func connectionConfiguration(
        connectionTimeout: Duration = .seconds(10),
        discoveryTimeout: Duration = .seconds(40),
        writeTimeout: Duration = .seconds(5),
        reconnectPolicy: ReconnectPolicy = .threeAttempts,
        firstConnectionRetry: ReconnectPolicy = .never,
        notificationBufferSize: Int = 1024
    ) -> ConnectionConfiguration {
        ConnectionConfiguration(
            services: services.map(\.uuid),
            requiredCharacteristics: requiredCharacteristics,
            notifyCharacteristics: notifyCharacteristics,
            connectionTimeout: connectionTimeout,
            discoveryTimeout: discoveryTimeout,
            writeTimeout: writeTimeout,
            reconnectPolicy: reconnectPolicy,
            firstConnectionRetry: firstConnectionRetry,
            notificationBufferSize: notificationBufferSize)
    }
}
