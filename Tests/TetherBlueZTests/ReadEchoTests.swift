#if os(Linux)
import Foundation
import Testing
import TetherBlueZ
import TetherCore
import TetherDBus

/// BlueZ writes a read's result into its cache and emits it as a `Value` change *before* the
/// read's reply; with notifications on, a naive driver reports every read twice. The rig's
/// bluezoo does the same (launcher patch (i)), so the driver's de-duplication meets the real
/// sequence. (Notifications that arrive during a read are kept: `MappingTests`; bluezoo relays
/// an application's changes asynchronously, so it cannot order them against a reply.)
@Suite("BlueZ read echo", .timeLimit(.minutes(1)))
struct ReadEchoTests {
    static let service = BluetoothUUID("7E7E0001-0000-4000-8000-0000000000EC")
    static let characteristic = CharacteristicPath(service: service, characteristic: "7E7E0002-0000-4000-8000-0000000000EC")

    /// What the application answers to reads, in order.
    final class Replies: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [Data] = []
        func push(_ value: Data) { lock.withLock { values.append(value) } }
        func next() -> Data { lock.withLock { values.isEmpty ? Data() : values.removeFirst() } }
    }

    @Test func aReadIsReportedOnceThoughBlueZEchoesItAsAChange() async throws {
        let rig = try await BlueZRigs.shared()
        let adapters = try await rig.addFreshAdapters(2)
        let centralAdapter = adapters[0], peripheralAdapter = adapters[1]
        defer { Task { try? await rig.releaseAdapter(id: centralAdapter.id); try? await rig.releaseAdapter(id: peripheralAdapter.id) } }

        let app = try await DBusConnection.connect(to: DBusAddress(parsing: rig.busAddress))
        defer { app.close() }
        let replies = Replies()
        let root: DBusObjectPath = "/test/readecho"
        let tree = DBusObjectTree(connection: app, root: root)
        let charPath: DBusObjectPath = "/test/readecho/service0/char0"
        tree.add("/test/readecho/service0", interfaces: [DBusInterface(name: BlueZ.serviceInterface, properties: [
            "UUID": .string(Self.service.longString), "Primary": .boolean(true),
        ])])
        tree.add(charPath, interfaces: [DBusInterface(name: BlueZ.characteristicInterface, properties: [
            "UUID": .string(Self.characteristic.characteristic.longString), "Service": .objectPath("/test/readecho/service0"),
            "Flags": .strings(["read", "notify"]), "Value": .bytes(Data()), "Notifying": .boolean(false),
        ], methods: [
            "ReadValue": { call in call.reply([.bytes(replies.next())]) },
            "StartNotify": { call in call.reply() },
            "StopNotify": { call in call.reply() },
        ])])
        tree.export()
        let advertisement = DBusObjectTree(connection: app, root: "/test/readecho_advertisement")
        advertisement.add("/test/readecho_advertisement", interfaces: [DBusInterface(name: BlueZ.advertisementInterface, properties: [
            "Type": .string("peripheral"), "LocalName": .string("Read Echo"), "ServiceUUIDs": .strings([Self.service.longString]),
            "Discoverable": .boolean(true),
        ], methods: ["Release": { call in call.reply() }])])
        advertisement.export()
        let adapterPath = DBusObjectPath("/org/bluez/hci\(peripheralAdapter.id)")!
        _ = try await app.call(.methodCall(destination: BlueZ.service, path: adapterPath, interface: BlueZ.gattManagerInterface,
                                           member: "RegisterApplication", body: [.objectPath(root), .properties([:])]))
        _ = try await app.call(.methodCall(destination: BlueZ.service, path: adapterPath, interface: BlueZ.advertisingManagerInterface,
                                           member: "RegisterAdvertisement", body: [.objectPath("/test/readecho_advertisement"), .properties([:])]))

        let driver = BlueZDriver(configuration: BlueZDriverConfiguration(adapter: "hci\(centralAdapter.id)", busAddress: rig.busAddress))
        defer { Task { await driver.shutdown() } }
        let events = EventRecorder(driver)
        _ = try await events.next("poweredOn") { if case .stateChanged(.poweredOn) = $0 { true } else { false } }
        let id = try #require(BlueZMapping.peripheralID(adapterIndex: centralAdapter.id, address: peripheralAdapter.address))
        await driver.scan(services: [Self.service], allowDuplicates: false)
        // btvirt reports an advertisement only when it starts (see BlueZRigs.readvertiseInterval).
        let readvertising = Task {
            guard let interval = BlueZRigs.readvertiseInterval else { return }
            while !Task.isCancelled {
                try await Task.sleep(for: interval)
                _ = try? await app.call(.methodCall(destination: BlueZ.service, path: adapterPath, interface: BlueZ.advertisingManagerInterface,
                                                    member: "UnregisterAdvertisement", body: [.objectPath("/test/readecho_advertisement")]))
                _ = try? await app.call(.methodCall(destination: BlueZ.service, path: adapterPath, interface: BlueZ.advertisingManagerInterface,
                                                    member: "RegisterAdvertisement", body: [.objectPath("/test/readecho_advertisement"), .properties([:])]))
            }
        }
        defer { readvertising.cancel() }
        _ = try await events.next("discovery") { if case .discovered(let p) = $0 { p.id == id } else { false } }
        await driver.stopScan()
        await driver.connect(id, options: ConnectOptions())
        _ = try await events.next("connection") { if case .connected(id) = $0 { true } else { false } }
        await driver.setNotifyValue(true, for: Self.characteristic, on: id)
        _ = try await events.next("subscription") { if case .notificationStateUpdated(id, _, true, nil) = $0 { true } else { false } }

        let value: @Sendable (BLEDriverEvent) -> Bool = { if case .valueUpdated(id, Self.characteristic, _, _) = $0 { true } else { false } }
        for round in 1...3 {
            let read = Data("read-\(round)".utf8)
            replies.push(read)
            await driver.readValue(for: Self.characteristic, on: id)
            let event = try await events.next("read \(round)", where: value)
            guard case .valueUpdated(_, _, let got, let error) = event else { return }
            #expect(got == read && error == nil)
            await driver.synchronize()
            #expect(events.drain(where: value).isEmpty, "read \(round) was also reported as a notification")
        }

        // Unsolicited changes (notifications) flow as usual.
        tree.setProperty("Value", to: .bytes(Data([7])), interface: BlueZ.characteristicInterface, path: charPath)
        let pushed = try await events.next("notification", where: value)
        guard case .valueUpdated(_, _, let pushedValue, _) = pushed else { return }
        #expect(pushedValue == Data([7]))
    }
}
#endif
