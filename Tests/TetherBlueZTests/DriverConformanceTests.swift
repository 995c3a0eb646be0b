#if os(Linux)
import Foundation
import Testing
import TetherBlueZ
import TetherBlueZPeripheral
import TetherCore
import TetherDBus
@testable import TetherSimulator

/// The BLEDriver contract, through BlueZ's D-Bus API: `BlueZDriver` on one bluezoo adapter,
/// Tether's own echo peripheral served by `BlueZPeripheralHost` on another.
@Suite("BlueZ driver conformance (bluezoo)", .timeLimit(.minutes(2)))
struct DriverConformanceTests {
    static let echoID = PeripheralID(UUID(uuidString: "E0E0E0E0-0000-4000-8000-0000000000B1")!)

    static func echoPair(behavior: EchoPeripheral = EchoPeripheral(), rig: BluezooRig? = nil) async throws -> BlueZPair {
        try await BlueZPair.make(rig: rig) { radio in
            radio.add(EchoPeripheral.makePeripheral(id: echoID, behavior: behavior))
            return echoID
        }
    }

    @Test func reportsPoweredOnForItsAdapterAndSaysWhich() async throws {
        let pair = try await Self.echoPair()
        defer { Task { await pair.close() } }
        try await pair.poweredOn()
        let status = await pair.driver.status()
        #expect(status.state == .poweredOn)
        #expect(status.adapter == "hci\(pair.central.id)")
        #expect(status.address == pair.central.address)
    }

    @Test func scanFindsTheHostedPeripheralWithItsAdvertisement() async throws {
        let pair = try await Self.echoPair()
        defer { Task { await pair.close() } }
        let found = try await pair.discover(services: [EchoPeripheral.service])
        #expect(found.advertisement.localName == EchoPeripheral.name)
        #expect(found.advertisement.serviceUUIDs.contains(EchoPeripheral.service))
        #expect(found.displayName == EchoPeripheral.name)
    }

    @Test func scanFiltersByServiceOnTheHostSide() async throws {
        // bluezoo, like BlueZ with several clients, does not apply the UUID filter itself.
        let pair = try await Self.echoPair()
        defer { Task { await pair.close() } }
        try await pair.poweredOn()
        let other = BluetoothUUID("0000FEED-0000-1000-8000-00805F9B34FB")
        await pair.driver.scan(services: [other], allowDuplicates: false)
        // Widen the filter once BlueZ has surely reported the device: it must appear only now.
        try await waitUntilBlueZKnows(pair)
        await pair.driver.synchronize()
        let id = pair.remoteID
        let early = pair.events.drain { if case .discovered(let p) = $0 { p.id == id } else { false } }
        #expect(early.isEmpty, "the echo peripheral was reported under a filter it does not match")
        await pair.driver.scan(services: nil, allowDuplicates: false)
        _ = try await pair.events.next("discovery without filter") { if case .discovered(let p) = $0 { p.id == id } else { false } }
    }

    @Test func connectsDiscoversAndDescribesTheGATTDatabase() async throws {
        let pair = try await Self.echoPair()
        defer { Task { await pair.close() } }
        try await pair.connect()
        let id = pair.remoteID
        await pair.driver.discoverServices([EchoPeripheral.service], on: id)
        let services = try await pair.events.next("services") { if case .servicesDiscovered(id, _, _) = $0 { true } else { false } }
        guard case .servicesDiscovered(_, let found, let error) = services else { return }
        #expect(error == nil)
        #expect(found.map(\.uuid) == [EchoPeripheral.service])
        await pair.driver.discoverCharacteristics(nil, for: EchoPeripheral.service, on: id)
        let characteristics = try await pair.events.next("characteristics") {
            if case .characteristicsDiscovered(id, _, _, _) = $0 { true } else { false }
        }
        guard case .characteristicsDiscovered(_, _, let chars, let charError) = characteristics else { return }
        #expect(charError == nil)
        let byUUID = Dictionary(uniqueKeysWithValues: chars.map { ($0.path, $0.properties) })
        #expect(byUUID[EchoPeripheral.input] == [.write, .writeWithoutResponse])
        #expect(byUUID[EchoPeripheral.output] == [.notify])
        #expect(byUUID[EchoPeripheral.info] == [.read])
    }

    @Test func readsAValue() async throws {
        let pair = try await Self.echoPair()
        defer { Task { await pair.close() } }
        try await pair.connect()
        let id = pair.remoteID
        await pair.driver.readValue(for: EchoPeripheral.info, on: id)
        let event = try await pair.events.next("read") { if case .valueUpdated(id, EchoPeripheral.info, _, _) = $0 { true } else { false } }
        guard case .valueUpdated(_, _, let value, let error) = event else { return }
        #expect(error == nil)
        #expect(value == Data("Tether Echo 1.0".utf8))
    }

    @Test func writesBothWaysAndReceivesNotificationsInOrder() async throws {
        let pair = try await Self.echoPair()
        defer { Task { await pair.close() } }
        try await pair.connect()
        let id = pair.remoteID
        await pair.driver.setNotifyValue(true, for: EchoPeripheral.output, on: id)
        let subscribed = try await pair.events.next("subscription") {
            if case .notificationStateUpdated(id, EchoPeripheral.output, _, _) = $0 { true } else { false }
        }
        guard case .notificationStateUpdated(_, _, let isNotifying, let subscribeError) = subscribed else { return }
        #expect(isNotifying && subscribeError == nil)

        await pair.driver.writeValue(Data("with".utf8), for: EchoPeripheral.input, type: .withResponse, on: id)
        let written = try await pair.events.next("write completion") { if case .writeCompleted(id, EchoPeripheral.input, _) = $0 { true } else { false } }
        guard case .writeCompleted(_, _, let writeError) = written else { return }
        #expect(writeError == nil)
        let echo = try await pair.events.next("echo") { if case .valueUpdated(id, EchoPeripheral.output, _, _) = $0 { true } else { false } }
        guard case .valueUpdated(_, _, let echoed, _) = echo else { return }
        #expect(echoed == Data("with".utf8))

        for index in 0..<50 {
            while !(await pair.driver.canSendWriteWithoutResponse(on: id)) {
                _ = try await pair.events.next("flow control") { if case .readyToWriteWithoutResponse(id) = $0 { true } else { false } }
            }
            await pair.driver.writeValue(Data([UInt8(index)]), for: EchoPeripheral.input, type: .withoutResponse, on: id)
        }
        var received: [UInt8] = []
        for _ in 0..<50 {
            let event = try await pair.events.next("echo of a command") { if case .valueUpdated(id, EchoPeripheral.output, _, _) = $0 { true } else { false } }
            if case .valueUpdated(_, _, let value, _) = event { received.append(contentsOf: value) }
        }
        #expect(received == (0..<50).map(UInt8.init))
    }

    @Test func maximumWriteLengthFollowsTheMTU() async throws {
        let pair = try await Self.echoPair()
        defer { Task { await pair.close() } }
        try await pair.connect()
        let id = pair.remoteID
        #expect(await pair.driver.maximumWriteValueLength(for: .withResponse, on: id) == 512)
        let withoutResponse = await pair.driver.maximumWriteValueLength(for: .withoutResponse, on: id)
        // bluezoo reports MTU 512 (no application MTU): one command carries MTU − 3 bytes.
        #expect(withoutResponse == 509)
    }

    @Test func requestedDisconnectionCarriesNoError() async throws {
        let pair = try await Self.echoPair()
        defer { Task { await pair.close() } }
        try await pair.connect()
        let id = pair.remoteID
        await pair.driver.cancelConnection(id)
        let event = try await pair.events.next("disconnection") { if case .disconnected(id, _, _) = $0 { true } else { false } }
        guard case .disconnected(_, let error, let reconnecting) = event else { return }
        #expect(error == nil)
        #expect(!reconnecting)
    }

    @Test func remoteDisconnectionIsReportedAsThePeripheralsDoing() async throws {
        let pair = try await Self.echoPair()
        defer { Task { await pair.close() } }
        try await pair.connect()
        let id = pair.remoteID
        // Someone else (another client, the link) ends the connection.
        let other = try await DBusConnection.connect(to: DBusAddress(parsing: pair.rig.busAddress))
        defer { other.close() }
        let device = DBusObjectPath("/org/bluez/hci\(pair.central.id)/dev_" + pair.peripheral.address.replacingOccurrences(of: ":", with: "_"))!
        _ = try await other.call(.methodCall(destination: "org.bluez", path: device, interface: "org.bluez.Device1", member: "Disconnect"))
        let event = try await pair.events.next("disconnection") { if case .disconnected(id, _, _) = $0 { true } else { false } }
        guard case .disconnected(_, let error, _) = event else { return }
        #expect(error == .peripheralDisconnected)
    }

    @Test func reconnectsAfterADisconnection() async throws {
        let pair = try await Self.echoPair()
        defer { Task { await pair.close() } }
        try await pair.connect()
        let id = pair.remoteID
        for round in 0..<3 {
            await pair.driver.cancelConnection(id)
            _ = try await pair.events.next("disconnection \(round)") { if case .disconnected(id, _, _) = $0 { true } else { false } }
            await pair.driver.connect(id, options: ConnectOptions())
            _ = try await pair.events.next("connection \(round)") { if case .connected(id) = $0 { true } else { false } }
            await pair.driver.readValue(for: EchoPeripheral.info, on: id)
            let read = try await pair.events.next("read \(round)") { if case .valueUpdated(id, EchoPeripheral.info, _, _) = $0 { true } else { false } }
            guard case .valueUpdated(_, _, let value, _) = read else { return }
            #expect(value == Data("Tether Echo 1.0".utf8))
        }
    }

    @Test func cancellingAnUnknownPeripheralReportsADisconnection() async throws {
        let pair = try await Self.echoPair()
        defer { Task { await pair.close() } }
        try await pair.poweredOn()
        let stranger = PeripheralID(UUID())
        await pair.driver.cancelConnection(stranger)
        _ = try await pair.events.next("disconnection") { if case .disconnected(stranger, nil, false) = $0 { true } else { false } }
    }

    @Test func connectingToADeviceBlueZNeverSawFailsClearly() async throws {
        let pair = try await Self.echoPair()
        defer { Task { await pair.close() } }
        try await pair.poweredOn()
        let unseen = BlueZMapping.peripheralID(adapterIndex: pair.central.id, address: "00:11:22:33:44:55")!
        await pair.driver.connect(unseen, options: ConnectOptions())
        let event = try await pair.events.next("failure") { if case .failedToConnect(unseen, _) = $0 { true } else { false } }
        guard case .failedToConnect(_, let error) = event, case .connectionFailed(let why)? = error else {
            Issue.record("expected connectionFailed")
            return
        }
        #expect(why.contains("scan"))
    }

    /// Waits until bluetoothd has a device object for the hosted peripheral on the central's
    /// adapter (checked from a connection of the test's own).
    private func waitUntilBlueZKnows(_ pair: BlueZPair) async throws {
        let connection = try await DBusConnection.connect(to: DBusAddress(parsing: pair.rig.busAddress))
        defer { connection.close() }
        let device = "/org/bluez/hci\(pair.central.id)/dev_" + pair.peripheral.address.replacingOccurrences(of: ":", with: "_")
        let stream = try await connection.signals(matching: DBusMatchRule(sender: "org.bluez", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded"))
        let reply = try await connection.call(.methodCall(destination: "org.bluez", path: .root, interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects"))
        if reply.body.first?.dictionaryEntries?.contains(where: { $0.key.objectPath?.rawValue == device }) == true { return }
        try await within(10, "bluetoothd never created \(device)") {
            for await message in stream where message.body.first?.objectPath?.rawValue == device { return }
        }
    }
}
#endif
