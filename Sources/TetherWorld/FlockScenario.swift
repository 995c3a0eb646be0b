import FlockFinderEmulator
import TetherSimulator

/// A drive past surveillance gear, scripted on the FlockFinder emulator (the simulator's story
/// for `tether flock watch`, the demo and `tether emulate flock`).
public enum FlockScenario {
    /// A Flock Safety camera, a Penguin camera and a Raven gunshot sensor passed at 3, 5 and
    /// 7 s, plus a home router that must not be reported.
    @SimulationActor
    public static func drive(_ emulator: FlockFinderEmulator) {
        emulator.removeAll()
        emulator.add(.flockCamera(path: FlockEmitter.driveBy(closest: 12, at: .seconds(3))))
        emulator.add(.penguin(path: FlockEmitter.driveBy(closest: 25, at: .seconds(5))))
        emulator.add(.raven(path: FlockEmitter.driveBy(closest: 15, at: .seconds(7))))
        emulator.add(.ordinaryAccessPoint(path: FlockEmitter.driveBy(closest: 8, at: .seconds(4))))
    }
}
