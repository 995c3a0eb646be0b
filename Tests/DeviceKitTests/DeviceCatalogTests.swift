import Foundation
import Testing
import TetherTesting
import TetherCore
import TetherSimulator
import TetherWorld

/// The catalog every command and the demo derive from: each device recognised by its own
/// advertisement and by no other entry's filter, its profile's advertisement the emulator's.
@Suite struct DeviceCatalogTests {
    @Test func everyEmulatorIsRecognisedAsItselfAndOnlyItself() async {
        for entry in DeviceCatalog.all {
            let (advertisement, name) = await { @SimulationActor in
                let standalone = entry.makeStandalone()
                defer { Task { await standalone.shutdown() } }
                return (standalone.peripheral.advertisement, standalone.peripheral.name)
            }()
            let discovered = DiscoveredPeripheral(id: PeripheralID(UUID()), name: name, advertisement: advertisement, rssi: -50)
            let matching = DeviceCatalog.all.filter { $0.scanFilter.matches(discovered) }.map(\.id)
            #expect(matching == [entry.id], "\(entry.id)'s emulator is recognised as \(matching)")
            if let profile = entry.profile {
                #expect(Set(profile.advertisedServices).isSubset(of: Set(advertisement.serviceUUIDs)), "\(entry.id)")
            }
        }
    }

    @Test func idsAreUniqueAndLookUpTheirEntries() {
        let ids = DeviceCatalog.all.map(\.id)
        #expect(Set(ids).count == ids.count)
        for id in ids { #expect(DeviceCatalog.entry(id: id)?.id == id) }
        #expect(DeviceCatalog.entry(id: "toaster") == nil)
    }

    @Test func theDefaultWorldHoldsEveryEntrysPeripherals() async {
        let ids = await { @SimulationActor in
            let (radio, emulators) = DefaultWorld.make(clock: ManualClock())
            defer { emulators.mesh.shutdown() }
            return Set(radio.peripherals.map(\.id))
        }()
        for entry in DeviceCatalog.all {
            #expect(Set(entry.worldIDs).isSubset(of: ids), "\(entry.id)")
        }
    }
}
