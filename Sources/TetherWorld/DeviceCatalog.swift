import FlockFinder
import FlockFinderEmulator
import Foundation
import GripFit
import GripFitEmulator
import Kiro
import KiroEmulator
import MeshCore
import MeshCoreEmulator
import TetherCore
import TetherSimulator
import Tybe
import TybeEmulator

/// Every device Tether knows, in one list: what it is, its `DeviceProfile`, where it sits in
/// the ``DefaultWorld``, and how to run its emulator on its own.
///
/// The CLI's `scan` labels, `emulate` and `emulate --list` come from it (and its device
/// commands and demo chapters are registered against its ids); a sixth device adds one entry
/// here.
public enum DeviceCatalog {
    /// Every device, in the order commands list them (the core's echo peripheral last).
    public static let all: [DeviceEntry] = [gripFit, kiro, tybe, flock, mesh, echo]

    /// The entry with this id (`gripfit`, `kiro`, `tybe`, `flock`, `mesh`, `echo`).
    public static func entry(id: String) -> DeviceEntry? {
        all.first { $0.id == id }
    }

    /// The device a discovered peripheral is, by its profile's scan filter (nil: none of ours).
    public static func entry(matching peripheral: DiscoveredPeripheral) -> DeviceEntry? {
        all.first { $0.scanFilter.matches(peripheral) }
    }

    /// The GripFit dynamometer.
    public static let gripFit = DeviceEntry(
        id: "gripfit", name: "GripFit", summary: "GripFit grip-strength dynamometer (streams readings once subscribed)",
        profile: .gripFit, worldIDs: [DefaultWorld.IDs.gripFit]
    ) { id, _ in
        DeviceEntry.Standalone(peripheral: GripFitEmulator().makePeripheral(id: id))
    }

    /// The Kiro desk companion.
    public static let kiro = DeviceEntry(
        id: "kiro", name: "Kiro", summary: "Kiro E-ink desk companion",
        profile: .kiro, worldIDs: [DefaultWorld.IDs.kiro]
    ) { id, _ in
        DeviceEntry.Standalone(peripheral: KiroEmulator().makePeripheral(id: id))
    }

    /// The Tybe keyboard bridge; its activity is what the host typed.
    public static let tybe = DeviceEntry(
        id: "tybe", name: "Tybe", summary: "Tybe keyboard bridge (its USB dongle types into a simulated host)",
        profile: .tybe, worldIDs: [DefaultWorld.IDs.tybe]
    ) { id, activity in
        let bridge = TybeBridgeEmulator()
        let watcher = Task { @SimulationActor in
            var shown = bridge.dongle.host.text
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                let text = bridge.dongle.host.text
                guard text != shown else { continue }
                if text.hasPrefix(shown) {
                    activity("host typed: \"\(text.dropFirst(shown.count))\"")
                } else {
                    activity("host text is now: \"\(text.suffix(40))\"")
                }
                shown = text
            }
        }
        return DeviceEntry.Standalone(peripheral: bridge.makePeripheral(id: id), shutdown: { watcher.cancel() })
    }

    /// The FlockFinder detector; every connection starts the drive past cameras over.
    public static let flock = DeviceEntry(
        id: "flock", name: "FlockFinder",
        summary: "FlockFinder surveillance-camera detector (a drive past three cameras per connection)",
        profile: .flockFinder, worldIDs: [DefaultWorld.IDs.flock]
    ) { id, activity in
        let emulator = FlockFinderEmulator()
        FlockScenario.drive(emulator)
        return DeviceEntry.Standalone(peripheral: emulator.makePeripheral(id: id), centralConnected: { @SimulationActor in
            FlockScenario.drive(emulator)
            activity("flock: the drive past a Flock Safety camera, a Penguin camera and a Raven sensor starts over")
        })
    }

    /// A MeshCore companion radio in a small mesh; its activity is the mesh's radio traffic.
    public static let mesh = DeviceEntry(
        id: "mesh", name: "MeshCore",
        summary: "MeshCore companion radio \"\(MeshNetwork.demoRadioName)\" in a small simulated mesh",
        // Recognised by name: its discovery filter (NUS service or a MeshCore name) also
        // accepts every other Nordic UART device, a GripFit among them.
        profile: .meshCore, scanFilter: ScanFilter(name: .prefix(MeshCoreBLE.namePrefix)),
        worldIDs: [DefaultWorld.IDs.meshBase, DefaultWorld.IDs.meshBuddy]
    ) { id, activity in
        let network = MeshNetwork.demo(clock: ContinuousClock(), startEpoch: UInt32(clamping: Int64(Date().timeIntervalSince1970)))
        network.observer = { _, event in activity("mesh: \(event.description)") }
        return DeviceEntry.Standalone(
            peripheral: MeshCoreEmulator(radio: network.radios[0]).makePeripheral(id: id),
            shutdown: { @SimulationActor in network.shutdown() })
    }

    /// The core's echo peripheral (no device module: the demo's and benchmarks' partner).
    public static let echo = DeviceEntry(
        id: "echo", name: "Echo", summary: "Tether's echo peripheral (notifies back what is written)",
        profile: nil, scanFilter: ScanFilter(services: [EchoPeripheral.service]), worldIDs: [SimulatedWorld.IDs.echo]
    ) { id, _ in
        DeviceEntry.Standalone(peripheral: EchoPeripheral.makePeripheral(id: id))
    }
}

/// One device of the ``DeviceCatalog``.
public struct DeviceEntry: Sendable, Identifiable {
    /// Receives what a standalone emulator's world does besides GATT traffic (text from the
    /// emulated world: a caller shows it safely).
    public typealias ActivityLog = @Sendable (String) -> Void

    /// An emulator on its own, ready to be added to a radio and served.
    @SimulationActor
    public struct Standalone {
        /// The emulated peripheral.
        public let peripheral: VirtualPeripheral
        /// Runs when a central connects.
        public let centralConnected: @Sendable () async -> Void
        /// Stops what the emulator runs in the background.
        public let shutdown: @Sendable () async -> Void

        init(peripheral: VirtualPeripheral, centralConnected: @escaping @Sendable () async -> Void = {}, shutdown: @escaping @Sendable () async -> Void = {}) {
            self.peripheral = peripheral
            self.centralConnected = centralConnected
            self.shutdown = shutdown
        }
    }

    /// The short name commands take (`tether emulate gripfit`).
    public let id: String
    /// The device's name.
    public let name: String
    /// What it is, in a few words.
    public let summary: String
    /// Its GATT layout and advertisement (nil for the echo peripheral, which has no module).
    public let profile: DeviceProfile?
    /// How a scan recognises it (the profile's filter unless that also accepts other devices).
    public let scanFilter: ScanFilter
    /// Its peripherals in the ``DefaultWorld``.
    public let worldIDs: [PeripheralID]
    private let make: @SimulationActor @Sendable (PeripheralID, @escaping ActivityLog) -> Standalone

    init(
        id: String, name: String, summary: String, profile: DeviceProfile?, scanFilter: ScanFilter? = nil,
        worldIDs: [PeripheralID], make: @escaping @SimulationActor @Sendable (PeripheralID, @escaping ActivityLog) -> Standalone
    ) {
        self.id = id
        self.name = name
        self.summary = summary
        self.profile = profile
        self.scanFilter = scanFilter ?? profile?.scanFilter ?? .any
        self.worldIDs = worldIDs
        self.make = make
    }

    /// Its emulator on its own (a new mesh, a new drive…), with `id` as the peripheral's.
    @SimulationActor
    public func makeStandalone(id: PeripheralID = PeripheralID(UUID()), activity: @escaping ActivityLog = { _ in }) -> Standalone {
        make(id, activity)
    }
}
