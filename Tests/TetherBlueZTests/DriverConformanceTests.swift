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
@Suite("BlueZ driver conformance", .timeLimit(.minutes(2)))
struct DriverConformanceTests {
    static let echoID = PeripheralID(UUID(uuidString: "E0E0E0E0-0000-4000-8000-0000000000B1")!)

    /// Runs `body` with a pair hosting the echo peripheral, closed afterwards.
    static func withEchoPair(rig: (any BlueZTestRig)? = nil, _ body: (BlueZPair) async throws -> Void) async throws {
        try await BlueZPair.with(rig: rig, peripheral: { radio in
            radio.add(EchoPeripheral.makePeripheral(id: echoID))
            return echoID
        }, body)
    }

    @Test func reportsPoweredOnForItsAdapterAndSaysWhich() async throws {
        try await Self.withEchoPair { pair in
            try await pair.poweredOn()
            let status = await pair.driver.status()
            #expect(status.state == .poweredOn)
            #expect(status.adapter == "hci\(pair.central.id)")
            #expect(status.address == pair.central.address)
        }
    }

    @Test func scanFindsTheHostedPeripheralWithItsAdvertisement() async throws {
        try await Self.withEchoPair { pair in
            let found = try await pair.discover(services: [EchoPeripheral.service])
            #expect(found.advertisement.localName == EchoPeripheral.name)
            #expect(found.advertisement.serviceUUIDs.contains(EchoPeripheral.service))
            #expect(found.displayName == EchoPeripheral.name)
        }
    }

    @Test func scanFiltersByServiceOnTheHostSide() async throws {
        // bluezoo, like BlueZ with several clients, does not apply the UUID filter itself; the
        // guest's bluetoothd, with one client, does (it creates no device object).
        try await Self.withEchoPair { pair in
            try await pair.poweredOn()
            let other = BluetoothUUID("0000FEED-0000-1000-8000-00805F9B34FB")
            await pair.driver.scan(services: [other], allowDuplicates: false)
            // Widen the filter once BlueZ has surely heard the device: it must appear only now.
            if BlueZRigs.isGuest {
                // Each re-advertisement reaches every scanner: two of them, and it was heard.
                let start = await pair.host.readvertisementCount()
                try await within(10, "two re-advertisements") {
                    while await pair.host.readvertisementCount() < start + 2 { try await Task.sleep(for: .milliseconds(20)) }
                }
            } else {
                try await waitUntilBlueZKnows(pair)
            }
            await pair.driver.synchronize()
            let id = pair.remoteID
            let early = pair.events.drain { if case .discovered(let p) = $0 { p.id == id } else { false } }
            #expect(early.isEmpty, "the echo peripheral was reported under a filter it does not match")
            await pair.driver.scan(services: nil, allowDuplicates: false)
            _ = try await pair.events.next("discovery without filter") { if case .discovered(let p) = $0 { p.id == id } else { false } }
        }
    }

    @Test func connectsDiscoversAndDescribesTheGATTDatabase() async throws {
        try await Self.withEchoPair { pair in
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
    }

    @Test func readsAValue() async throws {
        try await Self.withEchoPair { pair in
            try await pair.connect()
            let id = pair.remoteID
            await pair.driver.readValue(for: EchoPeripheral.info, on: id)
            let event = try await pair.events.next("read") { if case .valueUpdated(id, EchoPeripheral.info, _, _) = $0 { true } else { false } }
            guard case .valueUpdated(_, _, let value, let error) = event else { return }
            #expect(error == nil)
            #expect(value == Data("Tether Echo 1.0".utf8))
        }
    }

    @Test func writesBothWaysAndReceivesNotificationsInOrder() async throws {
        try await Self.withEchoPair { pair in
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
    }

    @Test func maximumWriteLengthFollowsTheMTU() async throws {
        try await Self.withEchoPair { pair in
            try await pair.connect()
            let id = pair.remoteID
            #expect(await pair.driver.maximumWriteValueLength(for: .withResponse, on: id) == BlueZRigs.maximumValueLength)
            let withoutResponse = await pair.driver.maximumWriteValueLength(for: .withoutResponse, on: id)
            #expect(withoutResponse == BlueZRigs.commandLength)
        }
    }

    @Test func requestedDisconnectionCarriesNoError() async throws {
        try await Self.withEchoPair { pair in
            try await pair.connect()
            let id = pair.remoteID
            await pair.driver.cancelConnection(id)
            let event = try await pair.events.next("disconnection") { if case .disconnected(id, _, _) = $0 { true } else { false } }
            guard case .disconnected(_, let error, let reconnecting) = event else { return }
            #expect(error == nil)
            #expect(!reconnecting)
        }
    }

    @Test func remoteDisconnectionIsReportedAsThePeripheralsDoing() async throws {
        try await Self.withEchoPair { pair in
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
    }

    @Test func reconnectsAfterADisconnection() async throws {
        try await Self.withEchoPair { pair in
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
    }

    @Test func aConnectionRequestedWhileTheCancelIsStillDisconnectingFollowsIt() async throws {
        try await Self.withEchoPair { pair in
            try await pair.connect()
            let id = pair.remoteID
            await pair.driver.cancelConnection(id)
            await pair.driver.connect(id, options: ConnectOptions())
            // CoreBluetooth's order: the cancel's disconnection, then the new connection.
            let first = try await pair.events.next("disconnection") {
                switch $0 { case .disconnected(id, _, _), .connected(id), .failedToConnect(id, _): true; default: false }
            }
            guard case .disconnected(_, let error, _) = first else { Issue.record("expected the disconnection first, got \(first)"); return }
            #expect(error == nil)
            _ = try await pair.events.next("the new connection") { if case .connected(id) = $0 { true } else { false } }
        }
    }

    @Test func cancellingAnUnknownPeripheralReportsADisconnection() async throws {
        try await Self.withEchoPair { pair in
            try await pair.poweredOn()
            let stranger = PeripheralID(UUID())
            await pair.driver.cancelConnection(stranger)
            _ = try await pair.events.next("disconnection") { if case .disconnected(stranger, nil, false) = $0 { true } else { false } }
        }
    }

    @Test func connectingToADeviceBlueZHasNotSeenScansForItFirst() async throws {
        // BlueZ forgets unconnected devices 30 s after a scan: a reconnection must find it again.
        try await Self.withEchoPair { pair in
            try await pair.poweredOn()
            let id = pair.remoteID
            await pair.driver.connect(id, options: ConnectOptions())
            _ = try await pair.events.next("connection without a scan") { if case .connected(id) = $0 { true } else { false } }
            #expect(pair.events.drain { if case .discovered = $0 { true } else { false } }.isEmpty, "nobody asked to scan")
        }
    }

    @Test func aConnectionToADeviceThatNeverAppearsWaitsUntilCancelled() async throws {
        try await Self.withEchoPair { pair in
            try await pair.poweredOn()
            let absent = BlueZMapping.peripheralID(adapterIndex: pair.central.id, address: "00:11:22:33:44:55")!
            let adapter = DBusObjectPath("/org/bluez/hci\(pair.central.id)")!
            let watcher = try await DBusConnection.connect(to: DBusAddress(parsing: pair.rig.busAddress))
            defer { watcher.close() }
            @Sendable func discovering() async throws -> Bool? {
                let reply = try await watcher.call(.methodCall(destination: "org.bluez", path: adapter, interface: "org.freedesktop.DBus.Properties",
                                                               member: "Get", body: [.string("org.bluez.Adapter1"), .string("Discovering")]))
                return reply.body.first?.bool
            }
            await pair.driver.connect(absent, options: ConnectOptions())
            // SetDiscoveryFilter, then StartDiscovery: poll (bounded) until the adapter scans.
            try await within(10, "the driver does not scan for the device it waits for") {
                while try await discovering() != true { try await Task.sleep(for: .milliseconds(10)) }
            }
            #expect(pair.events.drain { if case .failedToConnect = $0 { true } else { false } }.isEmpty, "a connection request does not time out by itself")
            await pair.driver.cancelConnection(absent)
            _ = try await pair.events.next("cancellation") { if case .disconnected(absent, nil, false) = $0 { true } else { false } }
            try await within(10, "the driver still scans with nothing left to scan for") {
                while try await discovering() != false { try await Task.sleep(for: .milliseconds(10)) }
            }
        }
    }

    @Test func aPowerCycleDuringAConnectionAttemptLeavesTheDriverUsable() async throws {
        try await Self.withEchoPair { pair in
            let id = pair.remoteID
            _ = try await pair.discover()
            // The peripheral is off: BlueZ fails every attempt at once, and the driver retries.
            try await pair.rig.setPowered(false, adapter: pair.peripheral.id)
            await pair.driver.connect(id, options: ConnectOptions())
            try await pair.rig.setPowered(false, adapter: pair.central.id)
            _ = try await pair.events.next("the attempt ended with the radio") {
                if case .failedToConnect(id, .bluetoothUnavailable?) = $0 { true } else { false }
            }
            try await pair.rig.setPowered(true, adapter: pair.central.id)
            try await pair.rig.setPowered(true, adapter: pair.peripheral.id)
            _ = try await pair.events.next("poweredOn again") { if case .stateChanged(.poweredOn) = $0 { true } else { false } }
            await pair.driver.connect(id, options: ConnectOptions())
            _ = try await pair.events.next("connection after the power cycle") { if case .connected(id) = $0 { true } else { false } }
        }
    }

    @Test func aDeviceWhoseDatabaseLacksWhatWasAskedForIsForgottenAfterTheLink() async throws {
        try await Self.withEchoPair { pair in
            try await pair.connect()
            let id = pair.remoteID
            let missing = BluetoothUUID("7E7E0000-0000-4000-8000-00000000DEAD")
            await pair.driver.discoverServices([EchoPeripheral.service, missing], on: id)
            let services = try await pair.events.next("services") { if case .servicesDiscovered(id, _, _) = $0 { true } else { false } }
            guard case .servicesDiscovered(_, let found, _) = services else { return }
            #expect(found.map(\.uuid) == [EchoPeripheral.service])
            let watcher = try await DBusConnection.connect(to: DBusAddress(parsing: pair.rig.busAddress))
            defer { watcher.close() }
            let device = "/org/bluez/hci\(pair.central.id)/dev_" + pair.peripheral.address.replacingOccurrences(of: ":", with: "_")
            let removals = try await watcher.signals(matching: DBusMatchRule(sender: "org.bluez", interface: "org.freedesktop.DBus.ObjectManager",
                                                                            member: "InterfacesRemoved", path: "/"))
            await pair.driver.cancelConnection(id)
            _ = try await pair.events.next("disconnection") { if case .disconnected(id, _, _) = $0 { true } else { false } }
            try await within(10, "BlueZ kept the device with the suspect cache") {
                for await message in removals where message.body.first?.objectPath?.rawValue == device
                    && message.body.last?.stringArray?.contains("org.bluez.Device1") == true { return }
            }
            // A scan finds it again, and it connects with a fresh database.
            await pair.driver.scan(services: nil, allowDuplicates: false)
            _ = try await pair.events.next("rediscovery") { if case .discovered(let p) = $0 { p.id == id } else { false } }
            await pair.driver.connect(id, options: ConnectOptions())
            _ = try await pair.events.next("connection") { if case .connected(id) = $0 { true } else { false } }
        }
    }

    @Test func theCoreChunksLongWritesAndNothingIsDroppedOrReordered() async throws {
        let behavior = EchoPeripheral(echoes: false)
        try await BlueZPair.with(recordingEvents: false, peripheral: { radio in
            radio.add(EchoPeripheral.makePeripheral(id: Self.echoID, behavior: behavior))
            return Self.echoID
        }) { pair in
            let central = await pair.makeCentral()
            do {
                try await central.requirePoweredOn()
            } catch {
                throw BlueZTestError("\(error); the driver says \(await pair.driver.status())")
            }
            // Other tests' echo peripherals advertise on the same rig: wait for this pair's.
            let id = pair.remoteID
            let scan = try await central.scan(filter: ScanFilter(services: [EchoPeripheral.service]))
            let device = try await within(10, "discovery through the core") { () -> DiscoveredPeripheral? in
                for await found in scan where found.id == id { return found }
                return nil
            }
            guard let device else { throw BlueZTestError("the scan ended without this pair's peripheral") }
            let connection = await central.connection(to: device.id, configuration: ConnectionConfiguration(
                services: [EchoPeripheral.service], requiredCharacteristics: [EchoPeripheral.input], notifyCharacteristics: [EchoPeripheral.output]))
            try await within(10, "connection through the core") { try await connection.connect() }
            #expect(try await connection.maximumWriteValueLength(for: .withoutResponse) == BlueZRigs.commandLength)
            // 200 kB without response: chunked to MTU − 3 bytes, paced by BlueZ's replies.
            let payload = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) })
            try await within(30, "a 200 kB write") { try await connection.write(payload, to: EchoPeripheral.input, type: .withoutResponse) }
            // With response, as long as the peripheral takes: longer than one ATT write where
            // the MTU is below 515 (bluezoo: BlueZ's long write).
            let tail = Data(repeating: 0xA5, count: BlueZRigs.maximumValueLength)
            try await within(10, "a long write with response") { try await connection.write(tail, to: EchoPeripheral.input, type: .withResponse) }
            // A request to a characteristic that also takes commands is answered once the host
            // has handed it to the emulator's link (bluetoothd names no write type), so wait
            // for the link to deliver it.
            let total = payload.count + tail.count
            try? await within(BlueZRigs.patience, "the emulator receiving all \(total) bytes") {
                while await onSimulationActor({ behavior.received.count }) < total { try await Task.sleep(for: .milliseconds(10)) }
            }
            let received = await behavior.received
            #expect(received.count == total)
            #expect(received == payload + tail)
            await connection.disconnect()
        }
    }

    @Test func aBurstOfAThousandNotificationsArrivesWholeAndInOrder() async throws {
        try await Self.withEchoPair { pair in
            try await pair.connect()
            let id = pair.remoteID
            await pair.driver.setNotifyValue(true, for: EchoPeripheral.output, on: id)
            _ = try await pair.events.next("subscription") { if case .notificationStateUpdated(id, _, true, nil) = $0 { true } else { false } }
            for index in 0..<1000 {
                while !(await pair.driver.canSendWriteWithoutResponse(on: id)) {
                    _ = try await pair.events.next("flow control") { if case .readyToWriteWithoutResponse(id) = $0 { true } else { false } }
                }
                await pair.driver.writeValue(Data([UInt8(index >> 8), UInt8(index & 0xFF)]), for: EchoPeripheral.input, type: .withoutResponse, on: id)
            }
            var indices: [Int] = []
            for _ in 0..<1000 {
                let event = try await pair.events.next("notification \(indices.count)") { if case .valueUpdated(id, EchoPeripheral.output, _, _) = $0 { true } else { false } }
                if case .valueUpdated(_, _, let value, _) = event, value.count == 2 { indices.append(Int(value[0]) << 8 | Int(value[1])) }
            }
            #expect(indices == Array(0..<1000))
        }
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
