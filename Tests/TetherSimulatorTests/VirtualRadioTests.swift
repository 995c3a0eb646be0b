import Foundation
import Testing
@testable import TetherCore
@testable import TetherSimulator

/// A behaviour that records what the radio hands it and notifies on demand.
@SimulationActor
final class RecordingBehavior: PeripheralBehavior {
    var connects = 0
    var disconnects = 0
    var subscriptions: [Bool] = []
    nonisolated init() {}
    func didConnect(_ context: PeripheralContext) { connects += 1 }
    func didDisconnect(_ context: PeripheralContext) { disconnects += 1 }
    func didChangeSubscription(_ characteristic: CharacteristicPath, enabled: Bool, context: PeripheralContext) {
        subscriptions.append(enabled)
    }
}

@Suite("The virtual radio's link model", .timeLimit(.minutes(3)))
struct VirtualRadioTests {
    static let service = BluetoothUUID("0000AAAA-0000-4000-8000-000000000000")
    static let notify = CharacteristicPath(service: service, characteristic: "0000AAAA-0000-4000-8000-000000000001")

    static func world(mtu: Int = 247, queue: Int = 64) async -> (Harness, PeripheralID, RecordingBehavior) {
        let h = await Harness()
        let behavior = RecordingBehavior()
        let id = PeripheralID(UUID())
        await h.radio.add(VirtualPeripheral(
            id: id, name: "Recorder", advertisement: AdvertisementData(localName: "Recorder", serviceUUIDs: [service]),
            services: [ServiceDefinition(uuid: service, characteristics: [CharacteristicDefinition(uuid: notify.characteristic, properties: [.notify])])],
            behavior: behavior,
            linkParameters: LinkParameters(preferredMTU: mtu, notificationQueueCapacity: queue)))
        return (h, id, behavior)
    }

    static func connect(_ h: Harness, _ id: PeripheralID) async throws -> ConnectionStateMachine {
        let connection = await h.central.connection(to: id, configuration: ConnectionConfiguration(
            services: [service], notifyCharacteristics: [notify], reconnectPolicy: .never))
        try await h.run { try await connection.connect() }
        return connection
    }

    @Test(arguments: [(10, 23), (23, 23), (185, 185), (517, 517), (600, 517)])
    func mtuIsNegotiatedWithinTheATTLimits(preferred: Int, negotiated: Int) async throws {
        let (h, id, _) = await Self.world(mtu: preferred)
        let connection = try await Self.connect(h, id)
        #expect(await h.radio.mtu(of: id) == negotiated)
        // MTU − 3, but no attribute value exceeds 512 bytes (MTU 517 would allow 514).
        #expect(try await connection.maximumWriteValueLength(for: .withoutResponse) == min(512, negotiated - 3))
        #expect(try await connection.maximumWriteValueLength(for: .withResponse) == 512)
    }

    @Test func notificationsAreTruncatedToMTUMinusThree() async throws {
        let (h, id, _) = await Self.world(mtu: 23)
        let connection = try await Self.connect(h, id)
        let stream = await connection.notifications(for: Self.notify)
        let radio = h.radio
        let accepted = await { @SimulationActor in radio.context(for: id)!.notify(Data(repeating: 1, count: 100), on: Self.notify) }()
        #expect(accepted)
        let value = try await h.run { () -> Data? in
            for await value in stream { return value }
            return nil
        }
        #expect(value?.count == 20)
    }

    @Test func notifyFailsWhenNotSubscribedOrWhenTheQueueIsFull() async throws {
        let (h, id, behavior) = await Self.world(queue: 3)
        let radio = h.radio
        let before = await { @SimulationActor in radio.context(for: id)!.notify(Data([1]), on: Self.notify) }()
        #expect(!before)
        _ = try await Self.connect(h, id)
        #expect(await behavior.connects == 1)
        #expect(await behavior.subscriptions == [true])
        let results = await { @SimulationActor in (0..<5).map { _ in radio.context(for: id)!.notify(Data([2]), on: Self.notify) } }()
        #expect(results == [true, true, true, false, false])
        await h.advance(.milliseconds(100))
        let after = await { @SimulationActor in radio.context(for: id)!.notify(Data([3]), on: Self.notify) }()
        #expect(after)
    }

    @Test func behaviourSeesDisconnectsAndTheLinkEnds() async throws {
        let (h, id, behavior) = await Self.world()
        let connection = try await Self.connect(h, id)
        try await h.run { await connection.disconnect() }
        #expect(await behavior.disconnects == 1)
        #expect(await !h.radio.isConnected(id))
    }

    @Test func expiringFaultsAffectOnlyTheirCount() async throws {
        let h = await Harness()
        let connection = try await h.connected()
        await h.radio.inject(FaultRule(.read, on: EchoPeripheral.info, action: .error(.readNotPermitted), count: 2))
        for _ in 0..<2 {
            let error = try await h.error { _ = try await connection.read(EchoPeripheral.info) }
            #expect(error == .readFailed(.att(ATTError(2))))
            #expect(error?.attError == ATTError(2))
        }
        let value = try await h.run { try await connection.read(EchoPeripheral.info) }
        #expect(!value.isEmpty)
    }

    @Test func sameSeedReplaysTheSameRSSI() async throws {
        func rssiSequence() async throws -> [Int] {
            let h = await Harness()
            let connection = try await h.connected()
            return try await h.run { () -> [Int] in
                var values: [Int] = []
                for _ in 0..<5 { values.append(try await connection.readRSSI()) }
                return values
            }
        }
        let first = try await rssiSequence()
        let second = try await rssiSequence()
        #expect(first == second)
        #expect(Set(first).count > 1)
    }
}
