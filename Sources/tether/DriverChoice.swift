import ArgumentParser
import Foundation
import TetherCore
import TetherCoreBluetooth
import TetherSimulator
import TetherWorld
#if os(Linux)
import TetherBlueZ
#endif

/// The drivers the CLI can run on.
enum DriverChoice: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// The virtual radio with every device emulator.
    case simulator
    /// BlueZ (Linux): the machine's Bluetooth adapter through bluetoothd.
    case bluez
    /// CoreBluetooth: the real framework on Apple platforms; on Linux the CoreBluetooth
    /// look-alike over the same virtual world as `simulator`.
    case corebluetooth
    /// BlueZ when bluetoothd is running with an adapter, else the simulator.
    case auto

    static var allValueStrings: [String] { allCases.map(\.rawValue) }

    /// `simulator, bluez, corebluetooth, auto`.
    static var validList: String { allValueStrings.joined(separator: ", ") }
}

/// A central on the chosen driver, plus the virtual world when it is the simulator.
struct Environment {
    let central: Central
    let radio: VirtualRadio?
    let emulators: DefaultWorld.Emulators?
    /// The driver in use (never `auto`).
    let driver: DriverChoice

    /// A central on the driver of ``DriverSelection/current``.
    ///
    /// `auto` probes bluetoothd (at most 2 s) and says on standard error which driver it chose
    /// and why, unless `json`. On BlueZ, a radio that cannot be used fails here with the
    /// reason, and the driver is shut down (its links disconnected) when the process exits,
    /// Ctrl-C included. `pin` is the passkey BlueZ gives when a device asks to pair.
    static func make(json: Bool = false, pin: String? = nil) async throws -> Environment {
        let selection = DriverSelection.current
        switch selection.driver {
        case .simulator:
            noteIgnored(selection, pin: pin, by: "simulator")
            return await simulator()
        case .corebluetooth:
            noteIgnored(selection, pin: pin, by: "corebluetooth")
            return await coreBluetooth()
        case .bluez:
            return try await bluez(selection, pin: pin)
        case .auto:
            return try await automatic(selection, json: json, pin: pin)
        }
    }

    /// The simulator for commands that inject faults into the virtual radio (`demo`):
    /// `auto` means the simulator, BlueZ is refused with `purpose` as the reason.
    static func makeSimulated(_ purpose: String) async throws -> Environment {
        let selection = DriverSelection.current
        switch selection.driver {
        case .simulator, .auto: return await simulator()
        case .corebluetooth: return await coreBluetooth()
        case .bluez: throw CLIError("\(purpose); it cannot run on \(selection.origin) (use --driver simulator)")
        }
    }

    private static func simulator() async -> Environment {
        let (radio, emulators) = await DefaultWorld.make(clock: ContinuousClock())
        let driver = await SimulatedDriver(radio: radio)
        return Environment(central: Central(driver: driver), radio: radio, emulators: emulators, driver: .simulator)
    }

    private static func coreBluetooth() async -> Environment {
        #if canImport(CoreBluetooth)
        // Real radios: no virtual world to inject faults into.
        return Environment(central: Central(driver: CoreBluetoothDriver()), radio: nil, emulators: nil, driver: .corebluetooth)
        #else
        let (radio, emulators) = await DefaultWorld.make(clock: ContinuousClock())
        let driver = await CoreBluetoothDriver.onLookalike(of: radio, restoreIdentifier: "tether.simulator-backed")
        return Environment(central: Central(driver: driver), radio: radio, emulators: emulators, driver: .corebluetooth)
        #endif
    }

    private static func bluez(_ selection: DriverSelection, pin: String?) async throws -> Environment {
        #if os(Linux)
        let driver = BlueZSupport.makeDriver(adapter: selection.adapter, pin: pin)
        // Connecting to the bus has its own 10 s bound; reading bluetoothd's tree follows.
        guard let status = await resultWithin(15, { await driver.status() }) else {
            throw CLIError("Bluetooth unavailable: bluetoothd did not answer within 15 s")
        }
        try BlueZSupport.requireUsable(status, hint: nil)
        return Environment(central: Central(driver: driver), radio: nil, emulators: nil, driver: .bluez)
        #else
        throw CLIError("the bluez driver needs Linux (BlueZ); here use --driver corebluetooth or simulator")
        #endif
    }

    private static func automatic(_ selection: DriverSelection, json: Bool, pin: String?) async throws -> Environment {
        #if os(Linux)
        switch await BlueZSupport.probe(adapter: selection.adapter, pin: pin) {
        case .bluez(let driver, let status):
            announce("driver auto → bluez (\(status.adapter ?? "?")\(status.address.map { " " + $0 } ?? ""))", json: json)
            try BlueZSupport.requireUsable(status, hint: "or use --driver simulator")
            return Environment(central: Central(driver: driver), radio: nil, emulators: nil, driver: .bluez)
        case .unavailable(let reason):
            announce("driver auto → simulator (\(reason))", json: json)
            noteIgnored(DriverSelection(driver: .simulator, source: .defaulted, adapter: nil), pin: pin, by: "simulator")
            return await simulator()
        }
        #else
        announce("driver auto → simulator (BlueZ is Linux-only; --driver corebluetooth uses this machine's radio)", json: json)
        noteIgnored(DriverSelection(driver: .simulator, source: .defaulted, adapter: nil), pin: pin, by: "simulator")
        return await simulator()
        #endif
    }

    /// The one line `auto` prints (kept off standard error under `--json`).
    private static func announce(_ text: String, json: Bool) {
        guard !json else { return }
        FileHandle.standardError.write(Data("tether: \(terminalSafe(text))\n".utf8))
    }

    /// Says so when BlueZ-only options are given to another driver.
    private static func noteIgnored(_ selection: DriverSelection, pin: String?, by driver: String) {
        var ignored: [String] = []
        if pin != nil { ignored.append("--pin") }
        if selection.isExplicit, selection.adapter != nil { ignored.append("--adapter") }
        guard !ignored.isEmpty else { return }
        FileHandle.standardError.write(Data("tether: \(ignored.joined(separator: " and ")) \(ignored.count > 1 ? "are" : "is") ignored by the \(driver) driver (only BlueZ uses \(ignored.count > 1 ? "them" : "it"))\n".utf8))
    }
}
