import ArgumentParser
import Foundation
import TetherCore
import TetherCoreBluetooth
import TetherSimulator
import TetherWorld

/// The drivers the CLI can run on.
enum DriverChoice: String, ExpressibleByArgument, CaseIterable {
    case simulator
    /// CoreBluetooth: the real framework on Apple platforms; on Linux the CoreBluetooth
    /// look-alike over the same virtual world as `simulator`.
    case corebluetooth

    static var allValueStrings: [String] { allCases.map(\.rawValue) }
}

/// A central on the chosen driver, plus the virtual world when it is the simulator.
struct Environment {
    let central: Central
    let radio: VirtualRadio?
    let emulators: DefaultWorld.Emulators?

    static func make(_ choice: DriverChoice) async -> Environment {
        switch choice {
        case .simulator:
            let (radio, emulators) = await DefaultWorld.make(clock: ContinuousClock())
            let driver = await SimulatedDriver(radio: radio)
            return Environment(central: Central(driver: driver), radio: radio, emulators: emulators)
        case .corebluetooth:
            #if canImport(CoreBluetooth)
            // Real radios: no virtual world to inject faults into.
            return Environment(central: Central(driver: CoreBluetoothDriver()), radio: nil, emulators: nil)
            #else
            let (radio, emulators) = await DefaultWorld.make(clock: ContinuousClock())
            let driver = await SimulatorBackedDriver.make(radio: radio, kind: .corebluetooth)
            return Environment(central: Central(driver: driver), radio: radio, emulators: emulators)
            #endif
        }
    }
}
