#if os(macOS) || os(Linux)
import ArgumentParser
import FlockFinderStorage
import Foundation
import GripFitStorage
import Kiro
import KiroStorage
import MeshCoreStorage
import Tybe
import TetherStudio

/// `tether studio`: the devices' app screens in a browser, live, on any driver.
struct StudioCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "studio",
        abstract: "Serve Tether Studio: the devices' screens in a browser (http://127.0.0.1:8080/ by default).")

    @OptionGroup var global: GlobalOptions

    @Option(help: "The port to serve on (0: any free port).")
    var port: Int = 8080

    @Option(help: "The address to listen on. Loopback unless --allow-remote.")
    var host: String = "127.0.0.1"

    @Flag(help: "Allow an address other than loopback: whoever reaches it controls your Bluetooth devices.")
    var allowRemote = false

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0…65535") }
        guard !host.isEmpty, host.count <= 255, host.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
            throw ValidationError("--host must be an address or host name")
        }
        if !StudioHosts.isLoopback(host), !allowRemote {
            throw ValidationError("--host \(terminalSafe(host)) is not loopback: the studio controls your devices, so add --allow-remote to serve it there")
        }
    }

    /// Every device's screen, on the environment's central; the stores are the ones the CLI
    /// uses (Tether's data directory), so a session recorded here is listed by `tether gripfit`.
    @MainActor
    static func screens(_ environment: Environment, hub: StudioHub) async throws -> StudioScreens {
        let gripFitStore: SQLiteGripSessionStore
        let detectionStore: DetectionStore
        let meshStore: MeshStore
        let focusStore: SQLiteFocusSessionStore
        let day: DayPack
        do {
            gripFitStore = try SQLiteGripSessionStore(path: SQLiteGripSessionStore.defaultPath())
            detectionStore = try DetectionStore(path: DetectionStore.defaultPath(), locationProvider: environment.emulators == nil ? nil : drive)
            meshStore = try MeshStore(path: MeshStore.defaultPath())
            focusStore = try SQLiteFocusSessionStore(path: SQLiteFocusSessionStore.defaultPath())
            day = try KiroSampleDay.dayPack()
        } catch {
            throw CLIError("the studio could not open its stores: \(error)")
        }
        let emulators = environment.emulators
        return StudioScreens([
            GripFitScreen(central: environment.central, store: gripFitStore, emulator: emulators?.gripFit),
            FlockFinderScreen(central: environment.central, store: detectionStore, emulator: emulators?.flock,
                              drive: emulators == nil ? nil : drive),
            TybeScreen(central: environment.central, settings: FileTybeSettingsStore(path: TybeSetup.settingsPath), emulator: emulators?.tybe),
            MeshCoreScreen(central: environment.central, store: meshStore, network: emulators?.mesh),
            KiroScreen(central: environment.central, day: day, focusStore: focusStore, emulator: emulators?.kiro),
        ], hub: hub)
    }

    /// The simulated car's position (the simulator's detections get places on the map).
    private static let drive = SimulatedDrive()

    func run() async throws {
        let environment = try await Environment.make()
        let hub = StudioHub(central: environment.central, driverName: environment.driver.rawValue)
        await hub.start()
        let screens = try await Self.screens(environment, hub: hub)
        await screens.start()
        // Bound without brackets; shown with them.
        let host = self.host.hasPrefix("[") && self.host.hasSuffix("]") ? String(self.host.dropFirst().dropLast()) : self.host
        if !StudioHosts.isLoopback(host) {
            FileHandle.standardError.write(Data("warning: Tether Studio listens on \(terminalSafe(host)) and answers to any host name: anyone who can reach it, or a web page whose name is rebound to it, can scan, connect to and control your devices.\n".utf8))
        }
        let app = StudioServer.makeApplication(host: host, port: port, hub: hub) { port in
            let shown = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
            // Written through at once: a script reading the URL from a pipe must not wait for it.
            FileHandle.standardOutput.write(Data("Tether Studio: http://\(terminalSafe(shown)):\(port)/  (driver: \(environment.driver.rawValue); Ctrl-C stops it)\n".utf8))
        }
        do {
            try await app.runService()
        } catch {
            await screens.stop()
            await hub.stop()
            throw CLIError("the studio could not serve on \(terminalSafe(host)):\(port): \(error)")
        }
        // Ctrl-C: a session being recorded is saved and the links are closed.
        await screens.stop()
        await hub.stop()
    }
}
#endif
