import Foundation
import Testing

@testable import TetherDBus

private let properties = "org.freedesktop.DBus.Properties"
private let objectManager = "org.freedesktop.DBus.ObjectManager"

/// A private bus with a client `a` and a server `b` exporting a tree at `/app`:
/// `/app/thing` with a read-only `com.example.Thing` (and a `Ping` method) and a writable
/// `com.example.Settings` whose validator accepts only int32 `Level`s in 0...10.
private struct TreeFixture {
    let bus: PrivateBus
    let a: DBusConnection
    let b: DBusConnection
    let tree: DBusObjectTree

    static func start() async throws -> TreeFixture {
        let bus = try await PrivateBus.start()
        let a = try await bus.connect()
        let b = try await bus.connect()
        let tree = DBusObjectTree(connection: b, root: "/app")
        let thing = DBusInterface(
            name: "com.example.Thing", properties: ["Name": .string("lamp"), "Count": .uint32(2)],
            methods: ["Ping": { call in call.reply([.string("pong from \(call.message.path?.rawValue ?? "?")")]) }])
        let settings = DBusInterface(
            name: "com.example.Settings", properties: ["Level": .int32(1), "Mode": .string("auto")],
            setProperty: { name, value in
                guard name == "Level" else { return DBusError(name: DBusError.invalidArgs, message: "\(name) is fixed") }
                guard case .int32(let level) = value, (0...10).contains(level) else {
                    return DBusError(name: DBusError.invalidArgs, message: "Level must be an int32 in 0...10")
                }
                return nil
            })
        tree.add("/app/thing", interfaces: [thing, settings])
        tree.add("/app/group/inner", interfaces: [DBusInterface(name: "com.example.Inner")])
        tree.export()
        try await b.drainQueue()
        return TreeFixture(bus: bus, a: a, b: b, tree: tree)
    }

    func stop() {
        a.close()
        b.close()
        bus.stop()
    }

    func call(_ path: DBusObjectPath, _ interface: String?, _ member: String, _ body: [DBusValue] = []) -> DBusMessage {
        .methodCall(destination: b.uniqueName, path: path, interface: interface, member: member, body: body)
    }
}

@Suite("DBusObjectTree on a private bus")
struct ObjectTreeTests {
    @Test func getManagedObjectsListsEveryObjectWithItsProperties() async throws {
        let fixture = try await TreeFixture.start()
        defer { fixture.stop() }
        let reply = try await fixture.a.reply(to: fixture.call("/app", objectManager, "GetManagedObjects"))
        #expect(reply.signature == "a{oa{sa{sv}}}")
        let objects = try #require(reply.body.first?.dictionaryEntries)
        #expect(objects.map(\.key) == [.objectPath("/app/group/inner"), .objectPath("/app/thing")])
        let thing = try #require(objects.last?.value.dictionaryEntries)
        #expect(thing.map(\.key) == [.string("com.example.Settings"), .string("com.example.Thing")])
        #expect(thing.last?.value.stringKeyedDictionary == ["Count": .uint32(2), "Name": .string("lamp")])
        // Only the root is an object manager.
        let error = try await fixture.a.error(from: fixture.call("/app/thing", objectManager, "GetManagedObjects"))
        #expect(error.name == DBusError.unknownInterface)
    }

    @Test func propertiesGetAndGetAll() async throws {
        let fixture = try await TreeFixture.start()
        defer { fixture.stop() }
        let get = try await fixture.a.reply(to: fixture.call("/app/thing", properties, "Get",
                                                             [.string("com.example.Thing"), .string("Name")]))
        #expect(get.body == [.variant(.string("lamp"))])
        #expect(get.signature == "v")
        let all = try await fixture.a.reply(to: fixture.call("/app/thing", properties, "GetAll", [.string("com.example.Thing")]))
        #expect(all.signature == "a{sv}")
        #expect(all.body.first?.stringKeyedDictionary == ["Count": .uint32(2), "Name": .string("lamp")])

        let unknownProperty = try await fixture.a.error(from: fixture.call("/app/thing", properties, "Get",
                                                                           [.string("com.example.Thing"), .string("Nope")]))
        #expect(unknownProperty.name == DBusError.unknownProperty)
        let unknownInterface = try await fixture.a.error(from: fixture.call("/app/thing", properties, "GetAll",
                                                                            [.string("com.example.Nope")]))
        #expect(unknownInterface.name == DBusError.unknownInterface)
        let missingArgument = try await fixture.a.error(from: fixture.call("/app/thing", properties, "Get"))
        #expect(missingArgument.name == DBusError.invalidArgs)
    }

    @Test func setOnAReadOnlyInterfaceFails() async throws {
        let fixture = try await TreeFixture.start()
        defer { fixture.stop() }
        let error = try await fixture.a.error(from: fixture.call("/app/thing", properties, "Set",
                                                                 [.string("com.example.Thing"), .string("Name"), .variant(.string("x"))]))
        #expect(error.name == "org.freedesktop.DBus.Error.PropertyReadOnly")
        let still = try await fixture.a.reply(to: fixture.call("/app/thing", properties, "Get",
                                                               [.string("com.example.Thing"), .string("Name")]))
        #expect(still.body == [.variant(.string("lamp"))])
    }

    @Test func setWithAValidatorStoresTheValueAndEmitsPropertiesChanged() async throws {
        let fixture = try await TreeFixture.start()
        defer { fixture.stop() }
        let rule = DBusMatchRule(sender: fixture.b.uniqueName, interface: properties, member: "PropertiesChanged")
        try await fixture.a.addMatchBounded(rule)
        let changes = Collector<DBusMessage>()
        fixture.a.onSignal(rule) { changes.append($0) }

        let set = fixture.call("/app/thing", properties, "Set", [.string("com.example.Settings"), .string("Level"), .variant(.int32(7))])
        #expect(try await fixture.a.reply(to: set).body == [])
        let signal = try #require(try await withTimeout("PropertiesChanged") { await changes.first(1) }.first)
        #expect(signal.path == "/app/thing")
        #expect(signal.body == [.string("com.example.Settings"), .properties(["Level": .int32(7)]), .strings([])])

        let get = try await fixture.a.reply(to: fixture.call("/app/thing", properties, "Get",
                                                             [.string("com.example.Settings"), .string("Level")]))
        #expect(get.body == [.variant(.int32(7))])
        try await fixture.b.drainQueue()
        let stored = fixture.b.queue.sync { fixture.tree.property("Level", interface: "com.example.Settings", path: "/app/thing") }
        #expect(stored == .int32(7))

        // The validator's error is returned and nothing changes.
        let rejected = try await fixture.a.error(from: fixture.call(
            "/app/thing", properties, "Set", [.string("com.example.Settings"), .string("Level"), .variant(.int32(99))]))
        #expect(rejected == DBusError(name: DBusError.invalidArgs, message: "Level must be an int32 in 0...10"))
        let wrongType = try await fixture.a.error(from: fixture.call(
            "/app/thing", properties, "Set", [.string("com.example.Settings"), .string("Level"), .variant(.string("7"))]))
        #expect(wrongType.name == DBusError.invalidArgs)
        let unknown = try await fixture.a.error(from: fixture.call(
            "/app/thing", properties, "Set", [.string("com.example.Settings"), .string("Nope"), .variant(.int32(1))]))
        #expect(unknown.name == DBusError.unknownProperty)
        let after = try await fixture.a.reply(to: fixture.call("/app/thing", properties, "Get",
                                                               [.string("com.example.Settings"), .string("Level")]))
        #expect(after.body == [.variant(.int32(7))])
        // Only the accepted Set emitted a change.
        try await fixture.a.drainQueue()
        #expect(changes.items.count == 1)
    }

    @Test func setPropertyFromTheServerSideEmitsPropertiesChanged() async throws {
        let fixture = try await TreeFixture.start()
        defer { fixture.stop() }
        let rule = DBusMatchRule(sender: fixture.b.uniqueName, interface: properties, member: "PropertiesChanged")
        try await fixture.a.addMatchBounded(rule)
        let changes = Collector<DBusMessage>()
        fixture.a.onSignal(rule) { changes.append($0) }
        fixture.tree.setProperty("Count", to: .uint32(3), interface: "com.example.Thing", path: "/app/thing", emit: false)
        fixture.tree.setProperty("Count", to: .uint32(4), interface: "com.example.Thing", path: "/app/thing")
        let signal = try #require(try await withTimeout("PropertiesChanged") { await changes.first(1) }.first)
        #expect(signal.body == [.string("com.example.Thing"), .properties(["Count": .uint32(4)]), .strings([])])
        let get = try await fixture.a.reply(to: fixture.call("/app/thing", properties, "Get",
                                                             [.string("com.example.Thing"), .string("Count")]))
        #expect(get.body == [.variant(.uint32(4))])
        #expect(changes.items.count == 1, "emit: false sent nothing")
    }

    @Test func introspectionNamesInterfacesAndChildren() async throws {
        let fixture = try await TreeFixture.start()
        defer { fixture.stop() }
        let rootXML = try #require(try await fixture.a.reply(
            to: fixture.call("/app", "org.freedesktop.DBus.Introspectable", "Introspect")).body.first?.string)
        #expect(rootXML.contains(#"<node name="thing"/>"#))
        #expect(rootXML.contains(#"<node name="group"/>"#))
        #expect(!rootXML.contains(#"<node name="inner"/>"#), "only direct children")
        #expect(rootXML.contains(#"<interface name="org.freedesktop.DBus.ObjectManager"/>"#))

        let thingXML = try #require(try await fixture.a.reply(
            to: fixture.call("/app/thing", "org.freedesktop.DBus.Introspectable", "Introspect")).body.first?.string)
        #expect(thingXML.contains(#"<interface name="com.example.Thing">"#))
        #expect(thingXML.contains(#"<method name="Ping"/>"#))
        #expect(thingXML.contains(#"<property name="Count" type="u" access="read"/>"#))
        #expect(thingXML.hasPrefix("<!DOCTYPE node"))
        #expect(thingXML.hasSuffix("</node>\n"))

        let groupXML = try #require(try await fixture.a.reply(
            to: fixture.call("/app/group", "org.freedesktop.DBus.Introspectable", "Introspect")).body.first?.string)
        #expect(groupXML.contains(#"<node name="inner"/>"#))
    }

    @Test func methodsAreRoutedAndUnknownsFail() async throws {
        let fixture = try await TreeFixture.start()
        defer { fixture.stop() }
        let a = fixture.a
        #expect(try await a.reply(to: fixture.call("/app/thing", "com.example.Thing", "Ping")).body == [.string("pong from /app/thing")])
        // Without an interface the method is looked up on every interface of the object.
        #expect(try await a.reply(to: fixture.call("/app/thing", nil, "Ping")).body == [.string("pong from /app/thing")])
        #expect(try await a.error(from: fixture.call("/app/thing", "com.example.Thing", "Nope")).name == DBusError.unknownMethod)
        #expect(try await a.error(from: fixture.call("/app/thing", "com.example.Nope", "Ping")).name == DBusError.unknownInterface)
        #expect(try await a.error(from: fixture.call("/app/nope", "com.example.Thing", "Ping")).name == DBusError.unknownObject)
        #expect(try await a.error(from: fixture.call("/elsewhere", "com.example.Thing", "Ping")).name == DBusError.unknownObject)
        #expect(try await a.error(from: fixture.call("/app/thing", properties, "Frobnicate", [.string("com.example.Thing")])).name
                == DBusError.unknownMethod)
        // After unexport nothing under the root answers.
        fixture.tree.unexport()
        #expect(try await a.error(from: fixture.call("/app/thing", "com.example.Thing", "Ping")).name == DBusError.unknownObject)
    }

    @Test func interfacesAddedAndRemovedAreAnnounced() async throws {
        let fixture = try await TreeFixture.start()
        defer { fixture.stop() }
        let rule = DBusMatchRule(sender: fixture.b.uniqueName, interface: objectManager, path: "/app")
        try await fixture.a.addMatchBounded(rule)
        let announcements = Collector<DBusMessage>()
        fixture.a.onSignal(rule) { announcements.append($0) }

        fixture.tree.add("/app/quiet", interfaces: [DBusInterface(name: "com.example.Quiet")])
        fixture.tree.add("/app/new", interfaces: [DBusInterface(name: "com.example.New", properties: ["On": .boolean(true)])],
                         announce: true)
        fixture.tree.remove("/app/new", announce: true)
        fixture.tree.remove("/app/quiet")
        fixture.tree.remove("/app/never_added", announce: true)
        let signals = try await withTimeout("InterfacesAdded and InterfacesRemoved") { await announcements.first(2) }
        // The tree's mutations hop to b's queue: let them all land before asking a's question.
        try await fixture.b.drainQueue()
        #expect(signals.map(\.member) == ["InterfacesAdded", "InterfacesRemoved"])
        #expect(signals[0].body == [
            .objectPath("/app/new"),
            .dictionary(key: .string, value: .dictionary(key: .string, value: .variant), [
                DBusDictionaryEntry(.string("com.example.New"), .properties(["On": .boolean(true)])),
            ]),
        ])
        #expect(signals[1].body == [.objectPath("/app/new"), .strings(["com.example.New"])])

        let managed = try await fixture.a.reply(to: fixture.call("/app", objectManager, "GetManagedObjects"))
        #expect(managed.body.first?.dictionaryEntries?.map(\.key) == [.objectPath("/app/group/inner"), .objectPath("/app/thing")])
        try await fixture.b.drainQueue()
        #expect(fixture.b.queue.sync { fixture.tree.paths } == ["/app/group/inner", "/app/thing"])
        try await fixture.a.drainQueue()
        #expect(announcements.items.count == 2, "quiet changes are not announced")
    }
}
