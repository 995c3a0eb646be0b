import Foundation
import FlockFinder
import GripFit
import Kiro
import Tybe
import TetherCore
import TetherSimulator

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
    }

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
    }

    /// Builds the world on a new radio.
    @SimulationActor
    public static func make(clock: some Clock<Duration>, seed: UInt64 = 1) -> (VirtualRadio, Emulators) {
        let radio = SimulatedWorld.makeDefault(clock: clock, seed: seed)
        let gripFit = GripFitEmulator()
        radio.add(gripFit.makePeripheral(id: IDs.gripFit, distance: 0.8))
        let kiro = KiroEmulator()
        radio.add(kiro.makePeripheral(id: IDs.kiro, distance: 1.2))
        let tybe = TybeBridgeEmulator()
        radio.add(tybe.makePeripheral(id: IDs.tybe, distance: 2.0))
        let flock = FlockFinderEmulator()
        radio.add(flock.makePeripheral(id: IDs.flock, distance: 0.5))
        return (radio, Emulators(gripFit: gripFit, kiro: kiro, tybe: tybe, flock: flock))
    }
}
