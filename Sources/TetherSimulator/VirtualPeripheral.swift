import Foundation
import TetherCore

/// A peripheral in the virtual world: what it advertises, where it is, its GATT database and
/// the behaviour (firmware) behind it.
@SimulationActor
public final class VirtualPeripheral {
    /// Its identifier.
    public nonisolated let id: PeripheralID
    /// Its GAP name.
    public var name: String?
    /// What it advertises.
    public var advertisement: AdvertisementData
    /// Its GATT database.
    public private(set) var services: [ServiceDefinition]
    /// The firmware.
    public nonisolated let behavior: (any PeripheralBehavior)?
    /// Distance from the central in metres (drives RSSI).
    public var distance: Double
    /// False when out of range: invisible to scans, and links time out.
    public var isInRange = true
    /// Time between advertisements.
    public var advertisingInterval: Duration
    /// How links to it behave.
    public var linkParameters: LinkParameters
    /// When true, connection requests are never answered (fault injection).
    public var ignoresConnections = false
    /// Keeps advertising while connected (most peripherals stop).
    public var advertisesWhileConnected = false

    /// Creates a virtual peripheral.
    public nonisolated init(
        id: PeripheralID = PeripheralID(UUID()),
        name: String?,
        advertisement: AdvertisementData,
        services: [ServiceDefinition],
        behavior: (any PeripheralBehavior)? = nil,
        distance: Double = 1.5,
        advertisingInterval: Duration = .milliseconds(100),
        linkParameters: LinkParameters = LinkParameters()
    ) {
        self.id = id
        self.name = name
        self.advertisement = advertisement
        self.services = services
        self.behavior = behavior
        self.distance = distance
        self.advertisingInterval = advertisingInterval
        self.linkParameters = linkParameters
    }

    /// The definition of one characteristic, if the database has it.
    public func characteristic(_ path: CharacteristicPath) -> CharacteristicDefinition? {
        services.first { $0.uuid == path.service }?.characteristics.first { $0.uuid == path.characteristic }
    }

    /// Replaces the value reads return.
    public func setValue(_ value: Data, for path: CharacteristicPath) {
        guard let s = services.firstIndex(where: { $0.uuid == path.service }),
              let c = services[s].characteristics.firstIndex(where: { $0.uuid == path.characteristic }) else { return }
        services[s].characteristics[c].value = value
    }

    /// Removes a service from the database (fault injection: "missing service").
    public func removeService(_ uuid: BluetoothUUID) {
        services.removeAll { $0.uuid == uuid }
    }

    /// Adds a service to the database, or replaces the one with its UUID (a firmware update;
    /// tell a connected central with ``VirtualRadio/changeServices(of:invalidating:_:)``).
    public func addService(_ service: ServiceDefinition) {
        if let index = services.firstIndex(where: { $0.uuid == service.uuid }) {
            services[index] = service
        } else {
            services.append(service)
        }
    }

    /// Removes a characteristic from the database (fault injection: "missing characteristic").
    public func removeCharacteristic(_ path: CharacteristicPath) {
        guard let s = services.firstIndex(where: { $0.uuid == path.service }) else { return }
        services[s].characteristics.removeAll { $0.uuid == path.characteristic }
    }
}

extension VirtualPeripheral {
    /// A peripheral serving `profile`'s GATT database, advertising its name and services, with
    /// the link it asks for: an emulator's side of the profile its client connects with.
    ///
    /// - Parameters:
    ///   - profile: the device's GATT layout, advertisement and link.
    ///   - id: the peripheral's identity on the radio.
    ///   - name: the advertised and GAP name (default: the profile's advertised name).
    ///   - values: what reads of these characteristics return at first.
    ///   - advertisement: replaces the advertisement derived from the profile.
    ///   - linkParameters: replaces the link derived from the profile's hints.
    ///   - behavior: the firmware: what the peripheral does with writes, reads and subscriptions.
    ///   - distance: metres from the central, for the RSSI.
    public nonisolated convenience init(
        profile: DeviceProfile,
        id: PeripheralID = PeripheralID(UUID()),
        name: String? = nil,
        behavior: (any PeripheralBehavior)?,
        distance: Double = 1.5,
        values: [CharacteristicPath: Data] = [:],
        advertisement: AdvertisementData? = nil,
        linkParameters: LinkParameters? = nil
    ) {
        let name = name ?? profile.advertisedName
        let services = profile.services.map { service in
            ServiceDefinition(uuid: service.uuid, characteristics: service.characteristics.map {
                CharacteristicDefinition(uuid: $0.uuid, properties: $0.properties,
                                         value: values[CharacteristicPath(service: service.uuid, characteristic: $0.uuid)] ?? Data())
            })
        }
        self.init(
            id: id,
            name: name,
            advertisement: advertisement ?? AdvertisementData(localName: name, serviceUUIDs: profile.advertisedServices),
            services: services,
            behavior: behavior,
            distance: distance,
            linkParameters: linkParameters ?? LinkParameters(preferredMTU: profile.link.preferredMTU,
                                                             connectionInterval: profile.link.connectionInterval))
    }
}
