#if os(Linux)
import Foundation
import Logging
import Testing
@testable import TetherBlueZ
import TetherBlueZPeripheral
import TetherCore
import TetherDBus
@testable import TetherSimulator

/// ATT errors, pairing, and everything that can be missing: the bus, bluetoothd, the adapter.
@Suite("BlueZ driver faults (bluezoo)", .timeLimit(.minutes(2)))
struct DriverFaultTests {
    typealias Echo = DriverConformanceTests

    /// The emulator's ATT error → the host's D-Bus answer → an ATT code over the air (the rig's
    /// bluetoothd rules) → the central bluetoothd's error → the driver's `DriverError`. An
    /// application cannot send every code: pairing-class codes arrive as 0x08, others as 0x80.
    @Test(arguments: [
        (ATTError.readNotPermitted, ATTError.readNotPermitted),
        (.insufficientAuthentication, .insufficientAuthorization),
        (.insufficientEncryption, .insufficientAuthorization),
        (.insufficientAuthorization, .insufficientAuthorization),
        (.invalidOffset, .invalidOffset),
        (.requestNotSupported, .requestNotSupported),
        (.unlikelyError, ATTError(0x80)),
        (ATTError(0x80), ATTError(0x80)),
        (ATTError(0x85), ATTError(0x85)),
    ] as [(ATTError, ATTError)])
    func attErrorsOfAReadReachTheCentralAsBlueZCarriesThem(_ injected: ATTError, _ expected: ATTError) async throws {
        try await Echo.withEchoPair { pair in
            await pair.radio.inject(FaultRule(.read, on: EchoPeripheral.info, action: .error(injected)))
            try await pair.connect()
            let id = pair.remoteID
            await pair.driver.readValue(for: EchoPeripheral.info, on: id)
            let event = try await pair.events.next("failed read") { if case .valueUpdated(id, EchoPeripheral.info, _, _) = $0 { true } else { false } }
            guard case .valueUpdated(_, _, _, let reported) = event else { return }
            #expect(reported == .att(expected))
        }
    }

    @Test func aSubscriptionRefusedForLackOfPairingIsAPairingFailure() async throws {
        try await Echo.withEchoPair { pair in
            await pair.radio.inject(FaultRule(.subscribe, on: EchoPeripheral.output, action: .error(.insufficientAuthentication)))
            try await pair.connect()
            let id = pair.remoteID
            await pair.driver.setNotifyValue(true, for: EchoPeripheral.output, on: id)
            let event = try await pair.events.next("refused subscription") {
                if case .notificationStateUpdated(id, EchoPeripheral.output, _, _) = $0 { true } else { false }
            }
            guard case .notificationStateUpdated(_, _, let notifying, let error) = event, case .att(let att)? = error else {
                Issue.record("expected an ATT error")
                return
            }
            #expect(!notifying)
            #expect(att.isPairingFailure)
        }
    }

    @Test func aFailedWriteCarriesItsATTCode() async throws {
        try await Echo.withEchoPair { pair in
            await pair.radio.inject(FaultRule(.write, on: EchoPeripheral.input, action: .error(.invalidAttributeValueLength)))
            try await pair.connect()
            let id = pair.remoteID
            await pair.driver.writeValue(Data([1]), for: EchoPeripheral.input, type: .withResponse, on: id)
            let event = try await pair.events.next("failed write") { if case .writeCompleted(id, _, _) = $0 { true } else { false } }
            guard case .writeCompleted(_, _, let error) = event else { return }
            #expect(error == .att(.invalidAttributeValueLength))
        }
    }

    @Test func operationsOnACharacteristicTheDeviceLacksFailAtOnce() async throws {
        try await Echo.withEchoPair { pair in
            try await pair.connect()
            let id = pair.remoteID
            let missing = CharacteristicPath(service: EchoPeripheral.service, characteristic: BluetoothUUID(UInt16(0x2A00)))
            await pair.driver.readValue(for: missing, on: id)
            let event = try await pair.events.next("failed read") { if case .valueUpdated(id, missing, _, _) = $0 { true } else { false } }
            guard case .valueUpdated(_, _, _, let error) = event else { return }
            #expect(error == .invalidHandle)
        }
    }

    @Test func theAgentAnswersWithTheConfiguredPIN() async throws {
        let rig = try await BluezooRig.shared.value
        let connection = try await DBusConnection.connect(to: DBusAddress(parsing: rig.busAddress))
        defer { connection.close() }
        let tree = DBusObjectTree(connection: connection, root: "/test/agent")
        let ours: DBusObjectPath = "/org/bluez/hci0/dev_00_11_22_33_44_55"
        tree.add("/test/agent", interfaces: [BlueZPairingAgent(pin: "123456").interface(logger: Logger(label: "test")) { $0 == ours }])
        tree.export()
        let caller = try await DBusConnection.connect(to: DBusAddress(parsing: rig.busAddress))
        defer { caller.close() }
        let device = DBusValue.objectPath("/org/bluez/hci0/dev_00_11_22_33_44_55")
        let passkey = try await caller.call(.methodCall(destination: connection.uniqueName, path: "/test/agent",
                                                        interface: "org.bluez.Agent1", member: "RequestPasskey", body: [device]))
        #expect(passkey.body == [.uint32(123_456)])
        let pin = try await caller.call(.methodCall(destination: connection.uniqueName, path: "/test/agent",
                                                    interface: "org.bluez.Agent1", member: "RequestPinCode", body: [device]))
        #expect(pin.body == [.string("123456")])
        // A device this app is not connecting to gets nothing.
        await #expect(throws: DBusError.self) {
            _ = try await caller.call(.methodCall(destination: connection.uniqueName, path: "/test/agent", interface: "org.bluez.Agent1",
                                                  member: "RequestPasskey", body: [.objectPath("/org/bluez/hci0/dev_66_66_66_66_66_66")]))
        }
        await #expect(throws: DBusError.self) {
            _ = try await caller.call(.methodCall(destination: connection.uniqueName, path: "/test/agent", interface: "org.bluez.Agent1",
                                                  member: "RequestConfirmation", body: [.objectPath("/org/bluez/hci0/dev_66_66_66_66_66_66"), .uint32(1)]))
        }
        #expect(BlueZPairingAgent(pin: "123456").capability == "KeyboardOnly")
        #expect(BlueZPairingAgent().capability == "NoInputNoOutput")
    }

    @Test func anAgentWithoutAPINRejectsPasskeyRequestsAndAcceptsJustWorks() async throws {
        let rig = try await BluezooRig.shared.value
        let connection = try await DBusConnection.connect(to: DBusAddress(parsing: rig.busAddress))
        defer { connection.close() }
        let tree = DBusObjectTree(connection: connection, root: "/test/agent")
        tree.add("/test/agent", interfaces: [BlueZPairingAgent().interface(logger: Logger(label: "test")) { _ in true }])
        tree.export()
        let caller = try await DBusConnection.connect(to: DBusAddress(parsing: rig.busAddress))
        defer { caller.close() }
        let device = DBusValue.objectPath("/org/bluez/hci0/dev_00_11_22_33_44_55")
        await #expect(throws: DBusError.self) {
            _ = try await caller.call(.methodCall(destination: connection.uniqueName, path: "/test/agent",
                                                  interface: "org.bluez.Agent1", member: "RequestPasskey", body: [device]))
        }
        let confirmation = try await caller.call(.methodCall(destination: connection.uniqueName, path: "/test/agent",
                                                             interface: "org.bluez.Agent1", member: "RequestConfirmation",
                                                             body: [device, .uint32(1234)]))
        #expect(confirmation.kind == .methodReturn)
    }

    @Test func theDriverRegistersItsAgentWithBlueZ() async throws {
        let rig = try await BluezooRig.shared.value
        for (agent, capability) in [(BlueZPairingAgent(), "NoInputNoOutput"), (BlueZPairingAgent(pin: "424242"), "KeyboardOnly")] as [(BlueZPairingAgent?, String?)] + [(nil, nil)] {
            let driver = BlueZDriver(configuration: BlueZDriverConfiguration(busAddress: rig.busAddress, agent: agent))
            let status = await driver.status()
            await driver.shutdown()
            #expect(status.agent == capability)
        }
    }

    /// Weak references to what a driver owns.
    final class Watched: @unchecked Sendable {
        weak var engine: BlueZCentral?
        weak var connection: DBusConnection?
        var alive: Bool { engine != nil || connection != nil }
    }

    @Test func aDriverThatShutDownIsFreedWithItsConnection() async throws {
        let rig = try await BluezooRig.shared.value
        let watched = Watched()
        do {
            let driver = BlueZDriver(configuration: BlueZDriverConfiguration(busAddress: rig.busAddress))
            #expect(await driver.status().state == .poweredOn)
            let central = try #require(await driver.engineForTesting())
            watched.engine = central
            watched.connection = central.connection
            await driver.shutdown()
        }
        // Deallocation has no event to wait on: poll, bounded.
        try await within(5, "the driver's engine and bus connection were not freed") {
            while watched.alive { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(!watched.alive)
    }

    @Test func noBusIsUnsupportedWithAReason() async throws {
        let driver = BlueZDriver(configuration: BlueZDriverConfiguration(busAddress: "unix:path=/nonexistent/tether-test-bus"))
        let status = await driver.status()
        #expect(status.state == .unsupported)
        #expect(status.reason?.contains("no D-Bus system bus") == true)
        let events = EventRecorder(driver)
        _ = try await events.next("unsupported") { if case .stateChanged(.unsupported) = $0 { true } else { false } }
        await driver.shutdown()
    }

    @Test func aMissingAdapterIsUnsupportedWithAReason() async throws {
        let rig = try await BluezooRig.shared.value
        let driver = BlueZDriver(configuration: BlueZDriverConfiguration(adapter: "hci250", busAddress: rig.busAddress))
        let status = await driver.status()
        await driver.shutdown()
        #expect(status.state == .unsupported)
        #expect(status.reason?.contains("no adapter hci250") == true)
    }

    @Test func noBluetoothdIsUnsupportedThenPoweredOnWhenItStarts() async throws {
        let rig = try await BluezooRig.start(adapters: [(0, "00:AA:03:00:00:00")])
        defer { rig.stop() }
        try await rig.stopBluez()
        let driver = BlueZDriver(configuration: BlueZDriverConfiguration(busAddress: rig.busAddress))
        defer { Task { await driver.shutdown() } }
        let events = EventRecorder(driver)
        let status = await driver.status()
        #expect(status.state == .unsupported)
        #expect(status.reason?.contains("bluetoothd is not running") == true)
        try await rig.startBluez()
        _ = try await events.next("poweredOn after bluetoothd started") { if case .stateChanged(.poweredOn) = $0 { true } else { false } }
    }

    @Test func poweringOffDropsTheLinkAndPoweringOnComesBack() async throws {
        try await Echo.withEchoPair { pair in
            try await pair.connect()
            let id = pair.remoteID
            try await pair.rig.setPowered(false, adapter: pair.central.id)
            _ = try await pair.events.next("poweredOff") { if case .stateChanged(.poweredOff) = $0 { true } else { false } }
            let event = try await pair.events.next("disconnection") { if case .disconnected(id, _, _) = $0 { true } else { false } }
            guard case .disconnected(_, let error, _) = event else { return }
            #expect(error == .bluetoothUnavailable(.poweredOff))
            #expect(await pair.driver.status().reason?.contains("powered off") == true)
            try await pair.rig.setPowered(true, adapter: pair.central.id)
            _ = try await pair.events.next("poweredOn") { if case .stateChanged(.poweredOn) = $0 { true } else { false } }
        }
    }

    @Test func bluetoothdRestartingIsResettingAndEveryLinkIsLost() async throws {
        let rig = try await BluezooRig.start(adapters: [(0, "00:AA:04:00:00:00"), (1, "00:AA:04:01:00:01")])
        defer { rig.stop() }
        try await Echo.withEchoPair(rig: rig) { pair in
            try await pair.connect()
            let id = pair.remoteID
            try await rig.stopBluez()
            _ = try await pair.events.next("resetting") { if case .stateChanged(.resetting) = $0 { true } else { false } }
            let event = try await pair.events.next("disconnection") { if case .disconnected(id, _, _) = $0 { true } else { false } }
            guard case .disconnected(_, let error, _) = event else { return }
            #expect(error == .bluetoothUnavailable(.resetting))
            try await rig.startBluez()
            _ = try await pair.events.next("poweredOn again") { if case .stateChanged(.poweredOn) = $0 { true } else { false } }
            // bluetoothd owns its name before its adapters exist (the rig does the same): that
            // moment is not "unsupported", which the core would take as final.
            #expect(pair.events.drain { if case .stateChanged(.unsupported) = $0 { true } else { false } }.isEmpty)
        }
    }

    @Test func removingTheAdapterIsUnsupported() async throws {
        try await Echo.withEchoPair { pair in
            try await pair.poweredOn()
            // bluezoo unplugs the adapter (btvirt in the guest cannot)
            try await #require(pair.rig as? BluezooRig).removeAdapter(id: pair.central.id)
            _ = try await pair.events.next("unsupported") { if case .stateChanged(.unsupported) = $0 { true } else { false } }
            let status = await pair.driver.status()
            // "hciN was removed", or, once other adapters come and go, "no adapter hciN".
            let reason = status.reason ?? ""
            #expect(status.state == .unsupported)
            #expect(reason.contains("removed") || reason.contains("no adapter hci\(pair.central.id) "), "\(status)")
        }
    }
}
#endif
