import Foundation
import Testing
@testable import TetherCore
@testable import TetherSimulator

/// A peripheral's GATT database changing under a ready link (Service Changed, as after a
/// firmware update): the core rediscovers and subscribes again on the same link, and the
/// client sees its streams go on. Runs on the simulator's driver and, in the second pass, on
/// the CoreBluetooth driver (`peripheral(_:didModifyServices:)` on the look-alike).
@Suite("Services changed on a live link", .timeLimit(.minutes(2)))
struct ServicesChangedTests {
    static func configuration(_ policy: ReconnectPolicy = .never) -> ConnectionConfiguration {
        var configuration = Harness.echoConfiguration
        configuration.reconnectPolicy = policy
        configuration.discoveryTimeout = .seconds(5)
        return configuration
    }

    static func echoService(_ h: Harness) async -> ServiceDefinition? {
        let radio = h.radio, id = h.echoID
        return await { @SimulationActor in radio.virtualPeripheral(id)?.services.first }()
    }

    /// The echo's firmware changes its service (and, `removingIt`, drops it): the radio
    /// tells the connected central, which must rediscover.
    static func changeEchoService(_ h: Harness, removingIt: Bool = false) async {
        await h.radio.changeServices(of: h.echoID, invalidating: [EchoPeripheral.service]) {
            if removingIt { $0.removeService(EchoPeripheral.service) }
        }
    }

    static let otherService = BluetoothUUID("54455448-4543-484F-8000-0000000000F0")

    /// Writes `text` and returns the first value `stream` gives.
    static func echo(_ text: String, _ connection: ConnectionStateMachine, _ stream: AsyncStream<Data>, _ h: Harness) async throws -> Data? {
        try await h.run {
            try await connection.write(Data(text.utf8), to: EchoPeripheral.input, type: .withResponse)
            for await value in stream { return value }
            return nil
        }
    }

    @Test func aChangedServiceIsDiscoveredAndSubscribedAgainOnTheSameLink() async throws {
        let h = await Harness()
        let connection = try await h.connected(Self.configuration())
        let stream = await connection.notifications(for: EchoPeripheral.output)
        let log = await EventLog(connection)
        await Self.changeEchoService(h)
        try await h.until { await log.contains { $0 == .servicesChanged(h.echoID) } }
        try await h.until { await connection.isConnected }
        #expect(await log.phases == ["discoveringServices", "discoveringCharacteristics", "subscribingToNotifications", "discoveryComplete", "connected"])
        #expect(await !log.contains { if case .disconnected = $0 { true } else if case .reconnected = $0 { true } else { false } })
        // The radio dropped the old subscription with the change: the echo arriving on the
        // stream armed before it proves the subscription is back.
        #expect(try await Self.echo("after the change", connection, stream, h) == Data("after the change".utf8))
    }

    @Test func aWriteAskedForDuringTheRediscoveryWaitsForIt() async throws {
        let h = await Harness()
        let connection = try await h.connected(Self.configuration())
        let stream = await connection.notifications(for: EchoPeripheral.output)
        await Self.changeEchoService(h)
        try await h.until { await !connection.isConnected }
        #expect(await connection.phase == .discoveringServices(h.echoID))
        #expect(await connection.isLinkUp)
        #expect(try await Self.echo("waited", connection, stream, h) == Data("waited".utf8))
        let rssi = try await h.run { try await connection.readRSSI() }
        #expect(rssi < 0)
    }

    @Test func aServiceRemovedAndAddedBackIsWaitedFor() async throws {
        let h = await Harness()
        let connection = try await h.connected(Self.configuration())
        let stream = await connection.notifications(for: EchoPeripheral.output)
        let log = await EventLog(connection)
        let service = try #require(await Self.echoService(h))
        await Self.changeEchoService(h, removingIt: true)
        try await h.until { await log.contains { $0 == .servicesChanged(h.echoID) } }
        await h.advance(.seconds(2))
        #expect(await connection.phase == .discoveringServices(h.echoID))
        // Added back (CoreBluetooth reports an addition with no invalidated service).
        await h.radio.changeServices(of: h.echoID, invalidating: []) { $0.addService(service) }
        try await h.until { await connection.isConnected }
        #expect(await !log.contains { if case .disconnected = $0 { true } else { false } })
        #expect(try await Self.echo("back", connection, stream, h) == Data("back".utf8))
    }

    @Test func aServiceThatStaysAwayEndsTheLinkAsALoss() async throws {
        let h = await Harness(osAutoReconnect: false)
        let connection = try await h.connected(Self.configuration())
        let log = await EventLog(connection)
        await Self.changeEchoService(h, removingIt: true)
        try await h.until { await !connection.isConnected }
        let pending = Task { try await connection.write(Data([1]), to: EchoPeripheral.input, type: .withResponse) }
        // So does a connect() that joined the link while it was being rediscovered.
        let joining = Task { try await connection.connect() }
        try await h.until { await connection.phase == .idle }
        let missing = BLEError.serviceNotFound(EchoPeripheral.service)
        // Lost as a dropped link is: told once, then idle (no policy), streams ended.
        #expect(await log.events.filter { if case .disconnected = $0 { true } else { false } } == [.disconnected(h.echoID, missing)])
        #expect(await !log.contains { if case .failed = $0 { true } else { false } })
        #expect(await connection.lastError == missing)
        try await h.until { await !h.radio.isConnected(h.echoID) }
        // A write asked for during the rediscovery waited for it, and ends with the link.
        let result = await pending.result
        #expect(throws: missing) { try result.get() }
        let joined = try await h.error { try await joining.value }
        #expect(joined == missing)
    }

    @Test func aServiceThatStaysAwayLeavesReconnectingToThePolicy() async throws {
        let h = await Harness(osAutoReconnect: false)
        let connection = try await h.connected(Self.configuration(.threeAttempts))
        let log = await EventLog(connection)
        let service = try #require(await Self.echoService(h))
        await Self.changeEchoService(h, removingIt: true)
        try await h.until { await log.contains { if case .disconnected = $0 { true } else { false } } }
        // The firmware comes back with the service before the next attempt.
        await h.peripheral { $0.addService(service) }
        try await h.until { await connection.isConnected }
        #expect(await log.contains { $0 == .reconnected(h.echoID) })
    }

    @Test func aChangeToAServiceTheConnectionDoesNotUseIsIgnored() async throws {
        let h = await Harness()
        let connection = try await h.connected(Self.configuration())
        let log = await EventLog(connection)
        await h.radio.changeServices(of: h.echoID, invalidating: [Self.otherService]) {
            $0.addService(ServiceDefinition(uuid: Self.otherService, characteristics: []))
        }
        await h.advance(.seconds(1))
        #expect(await connection.isConnected)
        #expect(await log.events.isEmpty)
        // The same path delivers a change that matters.
        await Self.changeEchoService(h)
        try await h.until { await log.contains { $0 == .servicesChanged(h.echoID) } }
    }

    @Test func aChangeDuringTheFirstDiscoveryStartsItOver() async throws {
        let h = await Harness()
        let connection = await h.connection(Self.configuration())
        let log = await EventLog(connection)
        let radio = h.radio, id = h.echoID
        let connecting = Task { try await connection.connect() }
        try await h.until { await connection.phase == .discoveringCharacteristics(id) }
        await radio.changeServices(of: id, invalidating: [EchoPeripheral.service])
        try await h.run { try await connecting.value }
        #expect(await connection.isConnected)
        // Discovery ran twice, and the client was told only that it connected.
        #expect(await log.phases.filter { $0 == "discoveringServices" }.count == 2)
        #expect(await log.contains { $0 == .connected(id) })
        #expect(await !log.contains { $0 == .servicesChanged(id) })
        let stream = await connection.notifications(for: EchoPeripheral.output)
        #expect(try await Self.echo("first", connection, stream, h) == Data("first".utf8))
    }

    @Test func answersFromBeforeAChangeAreNotTakenForTheNewDiscovery() async throws {
        // Every service is used; the change removes one while its discovery is out. The answer
        // already on its way still lists it: taken, it would send the new discovery after a
        // service that is gone.
        let h = await Harness()
        await h.peripheral { $0.addService(ServiceDefinition(uuid: Self.otherService, characteristics: [
            CharacteristicDefinition(uuid: BluetoothUUID("54455448-4543-484F-8000-0000000000F1"), properties: [.read]),
        ])) }
        var configuration = Self.configuration()
        configuration.services = []
        let connection = await h.connection(configuration)
        let connecting = Task { try await connection.connect() }
        let id = h.echoID
        try await h.until { await connection.phase == .discoveringServices(id) }
        await h.radio.changeServices(of: id, invalidating: [Self.otherService]) { $0.removeService(Self.otherService) }
        try await h.run { try await connecting.value }
        #expect(await connection.discoveredServices.map(\.uuid) == [EchoPeripheral.service])
    }

    @Test func disconnectingDuringTheRediscoveryEndsItAndItsWaiters() async throws {
        let h = await Harness()
        let connection = try await h.connected(Self.configuration(.threeAttempts))
        let log = await EventLog(connection)
        await Self.changeEchoService(h, removingIt: true)
        try await h.until { await !connection.isConnected }
        let pending = Task { try await connection.read(EchoPeripheral.info) }
        try await h.run { await connection.disconnect() }
        let result = await pending.result
        #expect(throws: BLEError.cancelled) { try result.get() }
        #expect(await connection.phase == .idle)
        // Asked for: no drop is reported, and nothing reconnects.
        await h.advance(.seconds(10))
        #expect(await connection.phase == .idle)
        #expect(await !log.contains { if case .disconnected = $0 { true } else { false } })
    }

    @Test func bluetoothGoingOffDuringTheRediscoveryIsTheLinksLoss() async throws {
        let h = await Harness()
        let connection = try await h.connected(Self.configuration(.threeAttempts))
        let log = await EventLog(connection)
        await Self.changeEchoService(h, removingIt: true)
        try await h.until { await !connection.isConnected }
        let pending = Task { try await connection.readRSSI() }
        await h.radio.setCentralState(.poweredOff)
        try await h.until { await connection.phase == .idle }
        let result = await pending.result
        #expect(throws: BLEError.bluetoothUnavailable(.poweredOff)) { try result.get() }
        #expect(await log.events.filter { if case .disconnected = $0 { true } else { false } } == [.disconnected(h.echoID, .bluetoothUnavailable(.poweredOff))])
    }

    @Test func theLinksLimitsAreAskedForAfterTheRediscovery() async throws {
        let h = await Harness()
        let connection = try await h.connected(Self.configuration())
        await Self.changeEchoService(h)
        try await h.until { await !connection.isConnected }
        let length = try await h.run { try await connection.maximumWriteValueLength(for: .withResponse) }
        #expect(length == 512)
        #expect(await connection.isConnected)
    }
}
