import Foundation
import FlockFinder
import GripFit
import Kiro
import MeshCore
import Tybe
import TetherCore
import TetherSimulator
import FlockFinderEmulator
import GripFitEmulator
import KiroEmulator
import MeshCoreEmulator
import TybeEmulator

/// The default simulated world of the CLI (and any app that wants every emulator): the core's
/// echo peripheral and bystanders plus one emulator per device module, at plausible distances.
public enum DefaultWorld {
    /// Fixed identifiers of the device emulators.
    public enum IDs {
        /// The GripFit dynamometer on the desk.
        public static let gripFit = PeripheralID(UUID(uuidString: "7E7E7E7E-0000-4000-8000-000000000010")!)
        /// The Kiro E-ink companion.
        public static let kiro = PeripheralID(UUID(uuidString: "7E7E7E7E-0000-4000-8000-000000000020")!)
        /// The Tybe keyboard bridge.
        public static let tybe = PeripheralID(UUID(uuidString: "7E7E7E7E-0000-4000-8000-000000000030")!)
        /// The FlockFinder detector on the dashboard.
        public static let flock = PeripheralID(UUID(uuidString: "7E7E7E7E-0000-4000-8000-000000000040")!)
        /// The MeshCore companion radio "Tether Base" (`MeshCore-Tether Base`).
        public static let meshBase = PeripheralID(UUID(uuidString: "7E7E7E7E-0000-4000-8000-000000000050")!)
        /// A second MeshCore companion radio, "Trail Buddy", on the same mesh.
        public static let meshBuddy = PeripheralID(UUID(uuidString: "7E7E7E7E-0000-4000-8000-000000000051")!)
    }

    /// The second MeshCore radio's name.
    public static let meshBuddyName = "Trail Buddy"

    /// The emulators running in a world, for scripts and demos that drive them.
    public struct Emulators: Sendable {
        /// The GripFit firmware.
        public let gripFit: GripFitEmulator
        /// The Kiro firmware.
        public let kiro: KiroEmulator
        /// The Tybe bridge (with its dongle and target host).
        public let tybe: TybeBridgeEmulator
        /// The FlockFinder firmware (its world of cameras is scripted by the caller).
        public let flock: FlockFinderEmulator
        /// The simulated LoRa mesh both MeshCore radios belong to (with Alice, Bob, Echo and a
        /// repeater, chatting on a script).
        public let mesh: MeshNetwork
        /// The MeshCore radio the CLI connects to by default.
        public let meshBase: MeshCoreEmulator
        /// The second MeshCore radio.
        public let meshBuddy: MeshCoreEmulator
    }

    /// Builds the world on a new radio; the mesh's clocks start at `epoch` (now by default).
    @SimulationActor
    public static func make(clock: some Clock<Duration>, seed: UInt64 = 1, epoch: UInt32? = nil) -> (VirtualRadio, Emulators) {
        let radio = SimulatedWorld.makeDefault(clock: clock, seed: seed)
        let gripFit = GripFitEmulator()
        radio.add(gripFit.makePeripheral(id: IDs.gripFit, distance: 0.8))
        let kiro = KiroEmulator()
        radio.add(kiro.makePeripheral(id: IDs.kiro, distance: 1.2))
        let tybe = TybeBridgeEmulator()
        radio.add(tybe.makePeripheral(id: IDs.tybe, distance: 2.0))
        let flock = FlockFinderEmulator()
        radio.add(flock.makePeripheral(id: IDs.flock, distance: 0.5))
        let mesh = MeshNetwork.demo(
            clock: clock, seed: seed, startEpoch: epoch ?? UInt32(clamping: Int64(Date().timeIntervalSince1970)),
            radioNames: [MeshNetwork.demoRadioName, meshBuddyName])
        let meshBase = MeshCoreEmulator(radio: mesh.radios[0])
        radio.add(meshBase.makePeripheral(id: IDs.meshBase, distance: 1.0))
        let meshBuddy = MeshCoreEmulator(radio: mesh.radios[1])
        radio.add(meshBuddy.makePeripheral(id: IDs.meshBuddy, distance: 3.0))
        return (radio, Emulators(gripFit: gripFit, kiro: kiro, tybe: tybe, flock: flock, mesh: mesh, meshBase: meshBase, meshBuddy: meshBuddy))
    }
}
