import Foundation
import TetherCore

/// The default virtual world the CLI runs on: every emulator the project has, plus the echo
/// peripheral and a few bystanders, at plausible distances.
public enum SimulatedWorld {
    /// Fixed identifiers so runs are repeatable and scripts can name devices.
    public enum IDs {
        /// The echo peripheral.
        public static let echo = PeripheralID(UUID(uuidString: "7E7E7E7E-0000-4000-8000-000000000001")!)
        /// A heart-rate strap nobody connects to.
        public static let heartRate = PeripheralID(UUID(uuidString: "7E7E7E7E-0000-4000-8000-000000000002")!)
        /// A non-connectable beacon.
        public static let beacon = PeripheralID(UUID(uuidString: "7E7E7E7E-0000-4000-8000-000000000003")!)
    }

    /// Builds the default world on a new radio.
    @SimulationActor
    public static func makeDefault(clock: some Clock<Duration>, seed: UInt64 = 1) -> VirtualRadio {
        let radio = VirtualRadio(clock: clock, seed: seed)
        radio.add(EchoPeripheral.makePeripheral(id: IDs.echo, distance: 1.5))
        radio.add(VirtualPeripheral(
            id: IDs.heartRate,
            name: "HR Strap 42",
            advertisement: AdvertisementData(localName: "HR Strap 42", serviceUUIDs: [BluetoothUUID(UInt16(0x180D))], txPowerLevel: 4),
            services: [ServiceDefinition(uuid: BluetoothUUID(UInt16(0x180D)), characteristics: [
                CharacteristicDefinition(uuid: BluetoothUUID(UInt16(0x2A37)), properties: [.notify]),
            ])],
            distance: 4.0,
            advertisingInterval: .milliseconds(250)))
        radio.add(VirtualPeripheral(
            id: IDs.beacon,
            name: nil,
            advertisement: AdvertisementData(manufacturerData: Data([0x4C, 0x00, 0x02, 0x15]), isConnectable: false),
            services: [],
            distance: 8.0,
            advertisingInterval: .milliseconds(500)))
        return radio
    }
}
