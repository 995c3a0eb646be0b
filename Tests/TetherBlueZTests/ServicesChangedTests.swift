#if os(Linux)
import Foundation
import Testing
@testable import TetherBlueZ
import TetherBlueZPeripheral
import TetherCore
@testable import TetherSimulator
import TetherTesting

/// Service Changed over BlueZ: the hosted echo's database changes (a firmware update in the
/// simulation), the peripheral host registers its application again, bluetoothd tells the
/// central, whose GATT objects go away and come back; the driver reports the services
/// invalidated and the core rediscovers and subscribes again on the same link. On bluezoo
/// (its patch k) and on the real bluetoothd in the guest.
@Suite("Services changed over BlueZ", .timeLimit(.minutes(3)))
struct BlueZServicesChangedTests {
    @Test func aConnectionRediscoversAndResubscribesWhenThePeripheralsServicesChange() async throws {
        let id = PeripheralID(UUID())
        try await BlueZPair.with(recordingEvents: false, peripheral: { radio in
            radio.add(EchoPeripheral.makePeripheral(id: id))
            return id
        }) { pair in
            let central = await pair.makeCentral()
            let found = try await flowStep("discovering the echo", on: pair) {
                try await discoverOwnPeripheral(of: pair, on: central, filter: ScanFilter(services: [EchoPeripheral.service]))
            }
            var configuration = ConnectionConfiguration(
                services: [EchoPeripheral.service],
                requiredCharacteristics: [EchoPeripheral.input],
                notifyCharacteristics: [EchoPeripheral.output])
            configuration.reconnectPolicy = .never
            configuration.discoveryTimeout = Patience.duration(.seconds(20))
            let connection = await central.connection(to: found.id, configuration: configuration)
            let events = FlowStreamLog(await connection.events())
            defer { events.cancel() }
            try await within(20, "connect()") { try await connection.connect() }
            let echoes = FlowStreamLog(await connection.notifications(for: EchoPeripheral.output))
            defer { echoes.cancel() }
            let hostActivity = FlowStreamLog(pair.host.activity)
            defer { hostActivity.cancel() }

            try await within(10, "the first echo") { try await connection.write(Data("before".utf8), to: EchoPeripheral.input) }
            try await echoes.next("the echo before the change") { $0 == Data("before".utf8) }

            // The firmware update: the echo service comes back (with a new handle on bluezoo).
            let radio = pair.radio
            await radio.changeServices(of: id, invalidating: [EchoPeripheral.service])
            try await hostActivity.next("the host registering its application again", where: {
                if case .servicesChanged = $0 { true } else { false }
            })
            let seen = try await events.wait("servicesChanged") { $0.contains(.servicesChanged(found.id)) }
            let changed = seen.firstIndex(of: .servicesChanged(found.id))! + 1
            try await events.next("connected again", after: changed, within: 20) { $0 == .phaseChanged(.connected(found.id)) }
            #expect(!events.all.contains { if case .disconnected = $0 { true } else { false } })

            // The subscription is back: the stream armed before the change carries the echo.
            try await within(10, "the echo after the change") { try await connection.write(Data("after".utf8), to: EchoPeripheral.input) }
            try await echoes.next("the echo after the change") { $0 == Data("after".utf8) }
            await connection.disconnect()
        }
    }

    @Test func aChangeMadeWithNoCentralConnectedIsWhatTheNextCentralFinds() async throws {
        let id = PeripheralID(UUID())
        let added = BluetoothUUID("54455448-4543-484F-8000-0000000000F0")
        try await BlueZPair.with(recordingEvents: false, peripheral: { radio in
            radio.add(EchoPeripheral.makePeripheral(id: id))
            return id
        }) { pair in
            let hostActivity = FlowStreamLog(pair.host.activity)
            defer { hostActivity.cancel() }
            await pair.radio.changeServices(of: id, invalidating: []) {
                $0.addService(ServiceDefinition(uuid: added, characteristics: [
                    CharacteristicDefinition(uuid: BluetoothUUID("54455448-4543-484F-8000-0000000000F1"), properties: [.read], value: Data("new".utf8)),
                ]))
            }
            try await hostActivity.next("the host registering its application again", where: {
                if case .servicesChanged = $0 { true } else { false }
            })
            let central = await pair.makeCentral()
            let found = try await flowStep("discovering the echo", on: pair) {
                try await discoverOwnPeripheral(of: pair, on: central, filter: ScanFilter(services: [EchoPeripheral.service]))
            }
            let path = CharacteristicPath(service: added, characteristic: "54455448-4543-484F-8000-0000000000F1")
            let connection = await central.connection(to: found.id, configuration: ConnectionConfiguration(
                services: [EchoPeripheral.service, added], requiredCharacteristics: [EchoPeripheral.input, path]))
            try await within(20, "connect()") { try await connection.connect() }
            let value = try await within(10, "reading the added characteristic") { try await connection.read(path) }
            #expect(value == Data("new".utf8))
            await connection.disconnect()
        }
    }
}
#endif
