import Foundation
import Testing
@testable import TetherCore
@testable import TetherSimulator
import TetherTesting

/// A device that speaks the moment its notifications are enabled (as GripFit's readings and
/// Tybe's greeting status do), and echoes writes.
@SimulationActor
private final class GreetingPeripheral: PeripheralBehavior {
    nonisolated init() {}

    func didChangeSubscription(_ characteristic: CharacteristicPath, enabled: Bool, context: PeripheralContext) {
        if enabled, characteristic == EchoPeripheral.output { _ = context.notify(Data("hello".utf8), on: EchoPeripheral.output) }
    }

    func didWrite(_ value: Data, to characteristic: CharacteristicPath, type: WriteType, context: PeripheralContext) -> ATTError? {
        _ = context.notify(value, on: EchoPeripheral.output)
        return nil
    }
}

/// What a link's handlers were given.
private actor Heard {
    var notifications: [String] = []
    var phases: [String] = []
    var ended: [CharacteristicPath] = []
    func note(_ data: Data) { notifications.append(String(decoding: data, as: UTF8.self)) }
    func note(_ event: ConnectionEvent) { if case .phaseChanged(let phase) = event { phases.append(phase.name) } }
    func end(_ path: CharacteristicPath) { ended.append(path) }
}

/// `DeviceLink`: listeners armed before the link comes up, stopped together, failures as
/// `BLEError`.
@Suite("Device links", .timeLimit(.minutes(2)))
struct DeviceLinkTests {
    static let greeterID = PeripheralID(UUID(uuidString: "E0E0E0E0-0000-4000-8000-00000000C0DE")!)

    /// A harness with a greeting device beside the echo.
    static func world() async -> Harness {
        let h = await Harness()
        await h.radio.add(VirtualPeripheral(
            id: greeterID, name: "Greeter",
            advertisement: AdvertisementData(localName: "Greeter", serviceUUIDs: [EchoPeripheral.service]),
            services: [
                ServiceDefinition(uuid: EchoPeripheral.service, characteristics: [
                    CharacteristicDefinition(uuid: EchoPeripheral.input.characteristic, properties: [.write]),
                    CharacteristicDefinition(uuid: EchoPeripheral.output.characteristic, properties: [.notify]),
                    CharacteristicDefinition(uuid: EchoPeripheral.info.characteristic, properties: [.read], value: Data("Greeter".utf8)),
                ]),
            ],
            behavior: GreetingPeripheral(), distance: 1))
        return h
    }

    fileprivate static func arm(_ h: Harness, _ heard: Heard, to id: PeripheralID = greeterID,
                    configuration: ConnectionConfiguration = Harness.echoConfiguration) async -> DeviceLink {
        await DeviceLink.arm(
            on: h.central, to: id, configuration: configuration,
            notifications: [(EchoPeripheral.output, { @Sendable data in await heard.note(data) })],
            events: { event in await heard.note(event) },
            streamEnded: { path in await heard.end(path) })
    }

    @Test func whatTheDeviceSaysAsNotificationsComeOnIsHeard() async throws {
        let h = await Self.world()
        let heard = Heard()
        let link = await Self.arm(h, heard)
        try await h.run { try await link.connect() }
        try await h.until { await heard.notifications == ["hello"] }
        #expect(await heard.phases.contains("connected"))
        try await h.run { try await link.connection.write(Data("ping".utf8), to: EchoPeripheral.input, type: .withResponse) }
        try await h.until { await heard.notifications == ["hello", "ping"] }
    }

    @Test func aFailedConnectThrowsABLEErrorAndStopsTheListeners() async throws {
        let h = await Self.world()
        let heard = Heard()
        var configuration = Harness.echoConfiguration
        configuration.services = [BluetoothUUID("0000FEED-0000-1000-8000-00805F9B34FB")]
        configuration.requiredCharacteristics = [CharacteristicPath(service: configuration.services[0], characteristic: "0000BEEF-0000-1000-8000-00805F9B34FB")]
        configuration.notifyCharacteristics = []
        let link = await Self.arm(h, heard, configuration: configuration)
        let thrown = try await h.run { () -> BLEError? in
            do throws(BLEError) { try await link.connect(); return nil } catch { return error }
        }
        guard case .serviceNotFound = thrown else {
            Issue.record("expected serviceNotFound, got \(String(describing: thrown))")
            return
        }
        let phasesAtFailure = await heard.phases
        // The same connection brought up by hand: the stopped listeners hear none of it.
        await link.connection.adopt(Harness.echoConfiguration)
        try await h.run { try await link.connection.connect() }
        try await h.run { try await link.connection.write(Data("ping".utf8), to: EchoPeripheral.input, type: .withResponse) }
        await h.advance(.seconds(1))
        #expect(await heard.notifications.isEmpty)
        #expect(await heard.phases == phasesAtFailure)
        #expect(await heard.ended.isEmpty)
    }

    @Test func aStreamTheConnectionEndsIsReportedOneTheClientStopsIsNot() async throws {
        let h = await Self.world()
        let ending = Heard()
        let ended = await Self.arm(h, ending)
        try await h.run { try await ended.connect() }
        try await h.run { await ended.connection.disconnect() }
        try await h.until { await ending.ended == [EchoPeripheral.output] }

        let stopping = Heard()
        let stopped = await Self.arm(h, stopping, to: h.echoID)
        try await h.run { try await stopped.connect() }
        try await h.run { await stopped.close() }
        await h.advance(.seconds(1))
        #expect(await stopping.ended.isEmpty)
        #expect(await !stopped.connection.isConnected)
    }
}
