import ArgumentParser
import Foundation
import TetherCore
import TetherSimulator
import TetherWorld

/// The drivers the CLI can run on.
enum DriverChoice: String, ExpressibleByArgument, CaseIterable {
    case simulator

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
        }
    }
}
