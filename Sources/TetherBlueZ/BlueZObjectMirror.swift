#if os(Linux)
import TetherDBus

/// A copy of bluetoothd's object tree, kept current from `GetManagedObjects`,
/// `InterfacesAdded`/`InterfacesRemoved` and `PropertiesChanged` (the driver confines its own
/// to its D-Bus queue).
public struct BlueZObjectMirror: Sendable {
    /// Path → interface → property → value (variants unwrapped).
    public private(set) var objects: [DBusObjectPath: [String: [String: DBusValue]]] = [:]

    /// An empty mirror.
    public init() {}

    /// Asks bluetoothd for its whole tree (`GetManagedObjects` on `org.bluez`) over `connection`.
    public static func read(from connection: DBusConnection, timeout: Duration = .seconds(25)) async throws(DBusError) -> BlueZObjectMirror {
        let reply = try await connection.call(.methodCall(destination: BlueZ.service, path: .root,
                                                          interface: BlueZ.objectManagerInterface, member: "GetManagedObjects"),
                                              timeout: timeout)
        return BlueZObjectMirror(managedObjects: reply)
    }

    /// A mirror of a `GetManagedObjects` reply.
    public init(managedObjects reply: DBusMessage) {
        load(reply.body.first ?? .array(.byte, []))
    }

    /// Replaces everything with a `GetManagedObjects` reply body.
    public mutating func load(_ reply: DBusValue) {
        objects.removeAll()
        for entry in reply.dictionaryEntries ?? [] {
            guard let path = entry.key.objectPath else { continue }
            objects[path] = Self.interfaces(entry.value)
        }
    }

    /// Applies `InterfacesAdded(o, a{sa{sv}})`; returns the interfaces added.
    mutating func interfacesAdded(_ body: [DBusValue]) -> (DBusObjectPath, [String])? {
        guard body.count >= 2, let path = body[0].objectPath else { return nil }
        let added = Self.interfaces(body[1])
        for (name, properties) in added {
            objects[path, default: [:]][name, default: [:]].merge(properties) { $1 }
        }
        return (path, Array(added.keys))
    }

    /// Applies `InterfacesRemoved(o, as)`; returns the interfaces removed.
    mutating func interfacesRemoved(_ body: [DBusValue]) -> (DBusObjectPath, [String])? {
        guard body.count >= 2, let path = body[0].objectPath, let names = body[1].stringArray else { return nil }
        for name in names { objects[path]?[name] = nil }
        if objects[path]?.isEmpty == true { objects[path] = nil }
        return (path, names)
    }

    /// Applies `PropertiesChanged(s, a{sv}, as)` on `path`; returns the interface and the
    /// changed properties (invalidated ones are removed and not returned).
    mutating func propertiesChanged(path: DBusObjectPath, _ body: [DBusValue]) -> (String, [String: DBusValue])? {
        guard body.count >= 2, let interface = body[0].string, let changed = body[1].stringKeyedDictionary else { return nil }
        guard objects[path]?[interface] != nil else { return (interface, changed) }
        objects[path]?[interface]?.merge(changed) { $1 }
        for name in (body.count >= 3 ? body[2].stringArray ?? [] : []) { objects[path]?[interface]?[name] = nil }
        return (interface, changed)
    }

    /// The properties of one interface of one object.
    public func properties(_ path: DBusObjectPath, _ interface: String) -> [String: DBusValue]? {
        objects[path]?[interface]
    }

    /// Paths that have `interface`, sorted.
    public func paths(with interface: String, under ancestor: DBusObjectPath? = nil) -> [DBusObjectPath] {
        objects.compactMap { path, interfaces in
            guard interfaces[interface] != nil else { return nil }
            if let ancestor, !(path != ancestor && path.isDescendant(of: ancestor)) { return nil }
            return path
        }.sorted()
    }

    /// Removes an object and everything below it.
    mutating func removeSubtree(_ root: DBusObjectPath) {
        for path in objects.keys where path.isDescendant(of: root) { objects[path] = nil }
    }

    mutating func removeAll() { objects.removeAll() }

    private static func interfaces(_ value: DBusValue) -> [String: [String: DBusValue]] {
        var result: [String: [String: DBusValue]] = [:]
        for entry in value.dictionaryEntries ?? [] {
            guard let name = entry.key.string else { continue }
            result[name] = entry.value.stringKeyedDictionary ?? [:]
        }
        return result
    }
}
#endif
