#if os(Linux)
import Foundation

/// One interface of an exported object: its properties and its methods.
public struct DBusInterface: Sendable {
    /// The interface name.
    public var name: String
    /// Current property values (without variant wrappers).
    public var properties: [String: DBusValue]
    /// Method handlers by member name; each answers its call (now or later).
    public var methods: [String: @Sendable (DBusIncomingCall) -> Void]
    /// Validates a `Properties.Set`; return nil to accept (the tree stores the value and emits
    /// `PropertiesChanged`). Without a validator properties are read-only.
    public var setProperty: (@Sendable (String, DBusValue) -> DBusError?)?

    /// Creates an interface.
    public init(
        name: String, properties: [String: DBusValue] = [:], methods: [String: @Sendable (DBusIncomingCall) -> Void] = [:],
        setProperty: (@Sendable (String, DBusValue) -> DBusError?)? = nil
    ) {
        self.name = name
        self.properties = properties
        self.methods = methods
        self.setProperty = setProperty
    }
}

/// A tree of exported objects under one root, answering the standard interfaces:
/// `ObjectManager.GetManagedObjects` (at the root), `Properties.Get/GetAll/Set` and
/// `Introspectable.Introspect`, and routing every other call to the interface's methods.
///
/// This is the shape BlueZ expects from a GATT application, an advertisement and an agent.
/// All state belongs to the connection's queue; mutating methods hop there.
public final class DBusObjectTree: @unchecked Sendable {
    /// The connection the objects are exported on.
    public let connection: DBusConnection
    /// The root (the object manager's path).
    public let root: DBusObjectPath
    private var objects: [DBusObjectPath: [String: DBusInterface]] = [:]
    private var exported = false

    /// Creates a tree; call ``export()`` to route calls to it.
    public init(connection: DBusConnection, root: DBusObjectPath) {
        self.connection = connection
        self.root = root
    }

    /// Starts answering calls at the root and below.
    public func export() {
        connection.export(root, subtree: true) { [weak self] call in
            guard let self else {
                call.fail(DBusError.unknownObject, "the object tree is gone")
                return
            }
            self.handle(call)
        }
        connection.perform { [self] in exported = true }
    }

    /// Stops answering calls (objects stay defined).
    public func unexport() {
        connection.unexport(root)
        connection.perform { [self] in exported = false }
    }

    /// Adds (or replaces) an object; `announce` emits `InterfacesAdded` from the root.
    public func add(_ path: DBusObjectPath, interfaces: [DBusInterface], announce: Bool = false) {
        connection.perform { [self] in
            objects[path] = Dictionary(interfaces.map { ($0.name, $0) }, uniquingKeysWith: { $1 })
            if announce {
                connection.emit(path: root, interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded",
                                body: [.objectPath(path), interfacesValue(objects[path] ?? [:])])
            }
        }
    }

    /// Removes an object; `announce` emits `InterfacesRemoved`.
    public func remove(_ path: DBusObjectPath, announce: Bool = false) {
        connection.perform { [self] in
            guard let removed = objects.removeValue(forKey: path) else { return }
            if announce {
                connection.emit(path: root, interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved",
                                body: [.objectPath(path), .strings(removed.keys.sorted())])
            }
        }
    }

    /// Removes every object.
    public func removeAll() {
        connection.perform { [self] in objects.removeAll() }
    }

    /// Sets a property; `emit` sends `PropertiesChanged` (the way a GATT server notifies).
    public func setProperty(_ name: String, to value: DBusValue, interface: String, path: DBusObjectPath, emit: Bool = true) {
        connection.perform { [self] in
            guard objects[path]?[interface] != nil else { return }
            objects[path]?[interface]?.properties[name] = value
            if emit { emitChanged(path: path, interface: interface, changes: [name: value]) }
        }
    }

    /// A property's value; call on the connection's queue.
    public func property(_ name: String, interface: String, path: DBusObjectPath) -> DBusValue? {
        dispatchPrecondition(condition: .onQueue(connection.queue))
        return objects[path]?[interface]?.properties[name]
    }

    /// The exported paths; call on the connection's queue.
    public var paths: [DBusObjectPath] {
        dispatchPrecondition(condition: .onQueue(connection.queue))
        return objects.keys.sorted()
    }

    private func emitChanged(path: DBusObjectPath, interface: String, changes: [String: DBusValue]) {
        connection.emit(path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                        body: [.string(interface), .properties(changes), .strings([])])
    }

    private func interfacesValue(_ interfaces: [String: DBusInterface]) -> DBusValue {
        .dictionary(key: .string, value: .dictionary(key: .string, value: .variant), interfaces.keys.sorted().map { name in
            DBusDictionaryEntry(.string(name), .properties(interfaces[name]?.properties ?? [:]))
        })
    }

    private func handle(_ call: DBusIncomingCall) {
        let message = call.message
        guard let path = message.path, let member = message.member else { return call.fail(DBusError.unknownMethod, "no member") }
        switch (message.interface, member) {
        case ("org.freedesktop.DBus.ObjectManager", "GetManagedObjects") where path == root:
            let entries = objects.keys.sorted().filter { $0 != root }.map { objectPath in
                DBusDictionaryEntry(.objectPath(objectPath), interfacesValue(objects[objectPath] ?? [:]))
            }
            call.reply([.dictionary(key: .objectPath, value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)), entries)])
            return
        case ("org.freedesktop.DBus.Introspectable", "Introspect"):
            call.reply([.string(introspection(of: path))])
            return
        default:
            break
        }
        guard let interfaces = objects[path] else {
            return call.fail(DBusError.unknownObject, "no object at \(path)")
        }
        if message.interface == "org.freedesktop.DBus.Properties" {
            return handleProperties(call, path: path, interfaces: interfaces)
        }
        let candidates = message.interface.map { name in interfaces[name].map { [$0] } ?? [] } ?? Array(interfaces.values)
        guard !candidates.isEmpty else {
            return call.fail(DBusError.unknownInterface, "\(path) has no interface \(message.interface ?? "")")
        }
        guard let method = candidates.lazy.compactMap({ $0.methods[member] }).first else {
            return call.fail(DBusError.unknownMethod, "no method \(member) on \(message.interface ?? path.rawValue)")
        }
        method(call)
    }

    private func handleProperties(_ call: DBusIncomingCall, path: DBusObjectPath, interfaces: [String: DBusInterface]) {
        let body = call.message.body
        guard let interfaceName = body.first?.string else { return call.fail(DBusError.invalidArgs, "missing interface name") }
        guard let interface = interfaces[interfaceName] else {
            return call.fail(DBusError.unknownInterface, "\(path) has no interface \(interfaceName)")
        }
        switch call.message.member {
        case "GetAll":
            call.reply([.properties(interface.properties)])
        case "Get":
            guard body.count >= 2, let name = body[1].string else { return call.fail(DBusError.invalidArgs, "missing property name") }
            guard let value = interface.properties[name] else {
                return call.fail(DBusError.unknownProperty, "\(interfaceName) has no property \(name)")
            }
            call.reply([.variant(value)])
        case "Set":
            guard body.count >= 3, let name = body[1].string else { return call.fail(DBusError.invalidArgs, "Set needs a name and a value") }
            guard interface.properties[name] != nil else {
                return call.fail(DBusError.unknownProperty, "\(interfaceName) has no property \(name)")
            }
            guard let validate = interface.setProperty else {
                return call.fail("org.freedesktop.DBus.Error.PropertyReadOnly", "\(interfaceName).\(name) is read-only")
            }
            let value = body[2].unwrapped
            if let error = validate(name, value) { return call.fail(error) }
            objects[path]?[interfaceName]?.properties[name] = value
            call.reply()
            emitChanged(path: path, interface: interfaceName, changes: [name: value])
        default:
            call.fail(DBusError.unknownMethod, "no method \(call.message.member ?? "") on org.freedesktop.DBus.Properties")
        }
    }

    private func introspection(of path: DBusObjectPath) -> String {
        var xml = "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\" \"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n<node>\n"
        xml += "  <interface name=\"org.freedesktop.DBus.Introspectable\"><method name=\"Introspect\"><arg type=\"s\" direction=\"out\"/></method></interface>\n"
        if let interfaces = objects[path] {
            xml += "  <interface name=\"org.freedesktop.DBus.Properties\"/>\n"
            for name in interfaces.keys.sorted() {
                xml += "  <interface name=\"\(name)\">\n"
                for method in (interfaces[name]?.methods.keys.sorted() ?? []) { xml += "    <method name=\"\(method)\"/>\n" }
                for (property, value) in (interfaces[name]?.properties.sorted { $0.key < $1.key } ?? []) {
                    xml += "    <property name=\"\(property)\" type=\"\(value.type.signature)\" access=\"read\"/>\n"
                }
                xml += "  </interface>\n"
            }
        }
        if path == root { xml += "  <interface name=\"org.freedesktop.DBus.ObjectManager\"/>\n" }
        let children = Set(objects.keys.compactMap { child -> String? in
            guard child != path, child.isDescendant(of: path) else { return nil }
            let rest = path.rawValue == "/" ? child.rawValue.dropFirst() : child.rawValue.dropFirst(path.rawValue.count + 1)
            return rest.split(separator: "/").first.map(String.init)
        })
        for child in children.sorted() { xml += "  <node name=\"\(child)\"/>\n" }
        return xml + "</node>\n"
    }
}
#endif
