import ArgumentParser
import FlockFinder
import Foundation
import GripFit
import Kiro
import MeshCore
import TetherCore
import TetherSimulator
import Tybe
import FlockFinderEmulator
import GripFitEmulator
import KiroEmulator
import MeshCoreEmulator
import TybeEmulator

/// The emulators `tether emulate` can serve.
enum EmulatedDevice: String, CaseIterable, ExpressibleByArgument, Sendable {
    case gripfit, kiro, tybe, flock, mesh, echo

    static var allValueStrings: [String] { allCases.map(\.rawValue) }

    /// What it is, in a few words.
    var summary: String {
        switch self {
        case .gripfit: "GripFit grip-strength dynamometer (streams readings once subscribed)"
        case .kiro: "Kiro E-ink desk companion"
        case .tybe: "Tybe keyboard bridge (its USB dongle types into a simulated host)"
        case .flock: "FlockFinder surveillance-camera detector (a drive past three cameras per connection)"
        case .mesh: "MeshCore companion radio \"\(MeshNetwork.demoRadioName)\" in a small simulated mesh"
        case .echo: "Tether's echo peripheral (notifies back what is written)"
        }
    }
}

/// One emulator on a virtual radio of its own (the host is that radio's only central), ready
/// to be served over the air.
struct EmulatedSetup: Sendable {
    let device: EmulatedDevice
    let radio: VirtualRadio
    let peripheral: PeripheralID
    /// The advertised name.
    let name: String?
    /// The advertised services.
    let services: [BluetoothUUID]
    /// Runs when a central connects (the FlockFinder drive starts over).
    let centralConnected: @Sendable () async -> Void
    /// Stops what the emulator runs in the background.
    let shutdown: @Sendable () async -> Void

    /// Builds `device` on a new radio that runs in real time. `log` receives what the
    /// emulator's world does besides GATT traffic (the mesh's radio traffic, what the Tybe
    /// host typed).
    @SimulationActor
    static func make(_ device: EmulatedDevice, log: @escaping @Sendable (String) -> Void) -> EmulatedSetup {
        let radio = VirtualRadio(clock: ContinuousClock())
        let id = PeripheralID(UUID())
        var centralConnected: @Sendable () async -> Void = {}
        var shutdown: @Sendable () async -> Void = {}
        let peripheral: VirtualPeripheral
        switch device {
        case .gripfit:
            peripheral = GripFitEmulator().makePeripheral(id: id)
        case .kiro:
            peripheral = KiroEmulator().makePeripheral(id: id)
        case .tybe:
            let bridge = TybeBridgeEmulator()
            peripheral = bridge.makePeripheral(id: id)
            let watcher = Task { @SimulationActor in
                var shown = bridge.dongle.host.text
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(250))
                    let text = bridge.dongle.host.text
                    guard text != shown else { continue }
                    if text.hasPrefix(shown) {
                        log("host typed: \"\(terminalSafe(String(text.dropFirst(shown.count))))\"")
                    } else {
                        log("host text is now: \"\(terminalSafe(String(text.suffix(40))))\"")
                    }
                    shown = text
                }
            }
            shutdown = { watcher.cancel() }
        case .flock:
            let emulator = FlockFinderEmulator()
            peripheral = emulator.makePeripheral(id: id)
            FlockScenario.drive(emulator)
            centralConnected = { @SimulationActor in
                FlockScenario.drive(emulator)
                log("flock: the drive past a Flock Safety camera, a Penguin camera and a Raven sensor starts over")
            }
        case .mesh:
            let network = MeshNetwork.demo(clock: ContinuousClock(), startEpoch: UInt32(clamping: Int64(Date().timeIntervalSince1970)))
            network.observer = { _, event in log("mesh: \(terminalSafe(event.description))") }
            peripheral = MeshCoreEmulator(radio: network.radios[0]).makePeripheral(id: id)
            shutdown = { @SimulationActor in network.shutdown() }
        case .echo:
            peripheral = EchoPeripheral.makePeripheral(id: id)
        }
        radio.add(peripheral)
        return EmulatedSetup(
            device: device, radio: radio, peripheral: id,
            name: peripheral.advertisement.localName ?? peripheral.name,
            services: peripheral.advertisement.serviceUUIDs,
            centralConnected: centralConnected, shutdown: shutdown)
    }
}
