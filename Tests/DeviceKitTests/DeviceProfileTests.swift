import Foundation
import Testing
import TetherTesting
import TetherCore
@testable import TetherSimulator
import GripFit
import GripFitEmulator
import Kiro
import KiroEmulator
import Tybe
import TybeEmulator
import FlockFinder
import FlockFinderEmulator
import MeshCore
import MeshCoreEmulator

/// Each device's GATT identity is declared once, in its `DeviceProfile`: the client's connection
/// configuration and the emulator's database both come from it and agree.
@Suite("Device profiles")
struct DeviceProfileTests {
    /// An emulator's peripheral and the profile its client connects with.
    struct Case: Sendable, CustomTestStringConvertible {
        let profile: DeviceProfile
        let peripheral: @SimulationActor @Sendable () -> VirtualPeripheral
        /// What the clients required and subscribed to before profiles existed.
        let required: [CharacteristicPath]
        let subscribed: [CharacteristicPath]
        /// What the emulators served before profiles existed.
        let name: String
        let mtu: Int
        let interval: Duration
        let properties: [CharacteristicProperties]
        var testDescription: String { profile.name }
    }

    static let cases: [Case] = [
        Case(profile: .gripFit, peripheral: { GripFitEmulator().makePeripheral() },
             required: [GripFitBLEConstants.writeCharacteristic], subscribed: [GripFitBLEConstants.notifyCharacteristic],
             name: "_GRIPFIT", mtu: 247, interval: .microseconds(7500), properties: [[.notify], [.write, .writeWithoutResponse]]),
        Case(profile: .kiro, peripheral: { KiroEmulator().makePeripheral() },
             required: [KiroBLEConstants.writeCharacteristic], subscribed: [KiroBLEConstants.notifyCharacteristic],
             name: "Kiro", mtu: 185, interval: .milliseconds(30), properties: [[.write], [.notify]]),
        Case(profile: .tybe, peripheral: { TybeBridgeEmulator().makePeripheral() },
             required: [TybeGATT.textInput, TybeGATT.config, TybeGATT.control], subscribed: [TybeGATT.status],
             name: "Tybe Zephyr Dev", mtu: 185, interval: .milliseconds(15),
             properties: [[.write, .writeWithoutResponse], [.notify, .read], [.read, .write], [.write, .writeWithoutResponse]]),
        Case(profile: .flockFinder, peripheral: { FlockFinderEmulator().makePeripheral() },
             required: [FlockFinderBLEConstants.command], subscribed: [FlockFinderBLEConstants.detection, FlockFinderBLEConstants.stream],
             name: "FlockFinder-S3", mtu: 185, interval: .milliseconds(30), properties: [[.notify], [.write], [.notify]]),
        Case(profile: .meshCore, peripheral: { MeshCoreEmulator.makePeripheral(behavior: MeshCoreEmulator(radio: CompanionRadio(name: "Test", publicKey: Data(count: 32), timeline: Timeline(ManualClock()), startEpoch: 0))) },
             required: [MeshCoreBLE.writeCharacteristic, MeshCoreBLE.notifyCharacteristic], subscribed: [MeshCoreBLE.notifyCharacteristic],
             name: "MeshCore-Test", mtu: 247, interval: .milliseconds(30), properties: [[.write, .writeWithoutResponse], [.notify]]),
    ]

    @Test(arguments: cases)
    func theClientsConfigurationIsTheProfiles(_ device: Case) {
        let configuration = device.profile.connectionConfiguration()
        #expect(configuration.services == device.profile.services.map(\.uuid))
        #expect(configuration.requiredCharacteristics == device.required)
        #expect(configuration.notifyCharacteristics == device.subscribed)
    }

    @Test(arguments: cases)
    @SimulationActor func theEmulatorServesTheProfile(_ device: Case) {
        let peripheral = device.peripheral()
        let served = peripheral.services.map { service in
            DeviceProfile.Service(uuid: service.uuid, characteristics: service.characteristics.map {
                let path = CharacteristicPath(service: service.uuid, characteristic: $0.uuid)
                let declared = device.profile.characteristic(path)
                return DeviceProfile.Characteristic(uuid: $0.uuid, properties: $0.properties,
                                                    required: declared?.required ?? false, subscribed: declared?.subscribed ?? false)
            })
        }
        #expect(served == device.profile.services)
        // What the emulator served before the profile existed, written out.
        #expect(peripheral.name == device.name)
        #expect(peripheral.advertisement.localName == device.name)
        #expect(peripheral.services.flatMap(\.characteristics).map(\.properties) == device.properties)
        #expect(peripheral.linkParameters.preferredMTU == device.mtu)
        #expect(peripheral.linkParameters.connectionInterval == device.interval)
        // Every characteristic the client needs is there, with what the client does to it.
        for path in device.required + device.subscribed {
            #expect(peripheral.characteristic(path) != nil, "\(path)")
        }
        for path in device.subscribed {
            #expect(peripheral.characteristic(path)?.properties.contains(.notify) == true, "\(path)")
        }
        #expect(peripheral.advertisement.serviceUUIDs == device.profile.advertisedServices)
        #expect(peripheral.linkParameters.preferredMTU == device.profile.link.preferredMTU)
        #expect(peripheral.linkParameters.connectionInterval == device.profile.link.connectionInterval)
        // A scan with the profile's filter finds what the emulator advertises.
        let discovered = DiscoveredPeripheral(id: peripheral.id, name: peripheral.name, advertisement: peripheral.advertisement, rssi: -50)
        #expect(device.profile.scanFilter.matches(discovered))
    }

    @Test @SimulationActor func readsStartWithTheValuesGivenAndTheLinkCanBeReplaced() {
        let profile = DeviceProfile(name: "Thermometer", advertisedName: "THERMO", services: [
            .init(uuid: "FFF0", characteristics: [
                .init(uuid: "FFF1", properties: [.read, .notify], subscribed: true),
                .init(uuid: "FFF2", properties: [.write], required: true),
            ]),
        ])
        let reading = CharacteristicPath(service: "FFF0", characteristic: "FFF1")
        let peripheral = VirtualPeripheral(profile: profile, name: "THERMO-2", behavior: nil, values: [reading: Data([21])],
                                           linkParameters: LinkParameters(preferredMTU: 23))
        #expect(peripheral.name == "THERMO-2")
        #expect(peripheral.advertisement.localName == "THERMO-2")
        #expect(peripheral.advertisement.serviceUUIDs == ["FFF0"])
        #expect(peripheral.characteristic(reading)?.value == Data([21]))
        #expect(peripheral.characteristic(CharacteristicPath(service: "FFF0", characteristic: "FFF2"))?.value == Data())
        #expect(peripheral.linkParameters.preferredMTU == 23)
        #expect(profile.requiredCharacteristics == [CharacteristicPath(service: "FFF0", characteristic: "FFF2")])
        #expect(profile.notifyCharacteristics == [reading])
        #expect(profile.scanFilter == ScanFilter(services: ["FFF0"]))
    }
}
