import Foundation
import TetherCore

/// A simple peripheral that notifies back whatever is written to it: the demo's partner and
/// the test bed for the core.
@SimulationActor
public final class EchoPeripheral: PeripheralBehavior {
    /// The echo service.
    public nonisolated static let service = BluetoothUUID("54455448-4543-484F-8000-000000000000")
    /// Write here (with or without response).
    public nonisolated static let input = CharacteristicPath(service: service, characteristic: "54455448-4543-484F-8000-000000000001")
    /// Subscribe here to receive the echo.
    public nonisolated static let output = CharacteristicPath(service: service, characteristic: "54455448-4543-484F-8000-000000000002")
    /// Read here for the firmware description.
    public nonisolated static let info = CharacteristicPath(service: service, characteristic: "54455448-4543-484F-8000-000000000003")
    /// The advertised name.
    public nonisolated static let name = "Tether Echo"

    /// Bytes received so far (writes of either type).
    public private(set) var received = Data()
    /// When false, writes are only counted (for throughput runs).
    public var echoes = true

    /// Creates the behaviour; with `echoes` false it only counts what it receives.
    public nonisolated init(echoes: Bool = true) {
        self.echoes = echoes
    }

    /// A virtual peripheral running this behaviour. `inputProperties` are the input's write
    /// properties (`CharacteristicProperties/writeWithoutResponse` alone makes a
    /// characteristic that takes only commands).
    public nonisolated static func makePeripheral(
        id: PeripheralID = PeripheralID(UUID()),
        distance: Double = 1.5,
        linkParameters: LinkParameters = LinkParameters(),
        behavior: EchoPeripheral = EchoPeripheral(),
        inputProperties: CharacteristicProperties = [.write, .writeWithoutResponse]
    ) -> VirtualPeripheral {
        VirtualPeripheral(
            id: id,
            name: name,
            advertisement: AdvertisementData(localName: name, serviceUUIDs: [service], txPowerLevel: 0),
            services: [
                ServiceDefinition(uuid: service, characteristics: [
                    CharacteristicDefinition(uuid: input.characteristic, properties: inputProperties),
                    CharacteristicDefinition(uuid: output.characteristic, properties: [.notify]),
                    CharacteristicDefinition(uuid: info.characteristic, properties: [.read], value: Data("Tether Echo 1.0".utf8)),
                ]),
            ],
            behavior: behavior,
            distance: distance,
            linkParameters: linkParameters)
    }

    public func didWrite(_ value: Data, to characteristic: CharacteristicPath, type: WriteType, context: PeripheralContext) -> ATTError? {
        guard characteristic == Self.input else { return .writeNotPermitted }
        if received.count < 1 << 20 { received.append(value) }
        guard echoes, context.isSubscribed(Self.output) else { return nil }
        let size = min(512, context.mtu - 3)
        var offset = value.startIndex
        while offset < value.endIndex {
            let end = value.index(offset, offsetBy: size, limitedBy: value.endIndex) ?? value.endIndex
            context.notify(value[offset..<end], on: Self.output)
            offset = end
        }
        return nil
    }

    /// Forgets what was received.
    public func reset() { received.removeAll() }
}
