import ArgumentParser
import Foundation
import Logging

/// The `tether` command line: talk to BLE devices, or to their emulators, from a terminal.
@main
struct Tether: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tether",
        abstract: "Talk to Bluetooth LE devices — or to their faithful emulators.",
        discussion: """
            The driver is chosen by --driver (anywhere on the command line), else $TETHER_DRIVER, \
            else auto: BlueZ when bluetoothd is running with an adapter, otherwise the simulator — \
            a virtual radio hosting every device emulator Tether has, so every command works \
            without hardware. auto says on standard error which one it chose and why.
            """,
        version: "0.1.0",
        subcommands: [
            ScanCommand.self, AdaptersCommand.self, DemoCommand.self, BenchCommand.self, GripFitCommands.self, KiroCommands.self,
            TybeCommands.self, FlockCommands.self, MeshCommands.self, EmulateCommand.self,
        ]
    )

    /// Shown in the root help; the values are taken out of the command line before parsing.
    @OptionGroup var global: GlobalOptions

    static func main() async {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = ProcessInfo.processInfo.environment["TETHER_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .error
            return handler
        }
        let arguments: [String]
        do {
            let (selection, rest) = try DriverSelection.extract(
                from: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
            DriverSelection.current = selection
            arguments = rest
        } catch {
            fail(CLIError.from(error))
        }
        do {
            var command = try parseAsRoot(arguments)
            if var async = command as? AsyncParsableCommand {
                try await async.run()
            } else {
                try command.run()
            }
        } catch let error as CLIError {
            await ExitCleanup.shared.run()
            fail(error)
        } catch {
            await ExitCleanup.shared.run()
            exit(withError: error)
        }
        // Disconnect what the command left connected (BlueZ keeps links after its client dies).
        await ExitCleanup.shared.run()
    }

    /// Prints the error as one line on standard error and exits with 1.
    private static func fail(_ error: CLIError) -> Never {
        fflush(nil)
        FileHandle.standardError.write(Data("tether: \(terminalSafe(error.message))\n".utf8))
        Foundation.exit(1)
    }
}

/// A failure the CLI reports as one line and a non-zero exit.
struct CLIError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

extension CLIError {
    /// Wraps any error as one readable line.
    static func from(_ error: any Error) -> CLIError {
        if let cli = error as? CLIError { return cli }
        if let localized = error as? LocalizedError, let text = localized.errorDescription { return CLIError(text) }
        return CLIError("\(error)")
    }
}

/// The driver options. They are accepted anywhere on the command line, before or after any
/// subcommand: `Tether.main` takes them out before parsing (see ``DriverSelection``), so these
/// properties are never set and exist for the help; read ``DriverSelection/current``.
struct GlobalOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The Bluetooth driver (default: $TETHER_DRIVER, else auto).",
        discussion: "auto is BlueZ when bluetoothd runs with an adapter, else the simulator; corebluetooth on Linux is the CoreBluetooth look-alike over the simulator.",
        valueName: "driver"))
    var driver: DriverChoice?

    @Option(help: ArgumentHelp("The BlueZ adapter, e.g. hci1 (default: the first powered one). Ignored by other drivers.", valueName: "hciN"))
    var adapter: String?
}

/// Flushes standard output so a timeline shows up as it happens, even through a pipe.
func flushOutput() {
    fflush(nil)
}

/// Fails with `message` if `operation` takes longer than `seconds` (wall clock: the CLI runs in
/// real time). The operation is cancelled then, and not waited for.
func within<T: Sendable>(_ seconds: Double, _ message: String, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    let outcome = await resultWithin(seconds) { () -> Result<T, any Error> in
        do { return .success(try await operation()) } catch { return .failure(error) }
    }
    guard let outcome else { throw CLIError("\(message) (no result after \(seconds) s)") }
    return try outcome.get()
}
