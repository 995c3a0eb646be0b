import ArgumentParser
import Foundation
import Logging
import MeshCore
import NIOCore
import NIOPosix

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
        subcommands: [ScanCommand.self, AdaptersCommand.self, DemoCommand.self, BenchCommand.self]
            + CLIDevices.commandGroups + [EmulateCommand.self, StudioCommand.self]
    )

    /// Shown in the root help; the values are taken out of the command line before parsing.
    @OptionGroup var global: GlobalOptions

    static func main() async {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            // Errors reach the user as the command's one line; the libraries' own log lines
            // are for TETHER_LOG=debug|info|warning|error.
            handler.logLevel = ProcessInfo.processInfo.environment["TETHER_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .critical
            return handler
        }
        let arguments: [String]
        do {
            let (selection, rest) = try DriverSelection.extract(
                from: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
            DriverSelection.current = selection
            arguments = rest
        } catch {
            let given = Array(CommandLine.arguments.dropFirst())
            if given.contains(where: { ["--help", "-h", "--version"].contains($0) }) || given.first == "help",
               let (selection, rest) = try? DriverSelection.extract(
                   from: given.filter { !$0.hasPrefix("--driver") && !$0.hasPrefix("--adapter") }, environment: [:]) {
                // Help and the version need no driver: a bad TETHER_DRIVER must not hide them.
                DriverSelection.current = selection
                arguments = rest
            } else {
                // A mistyped --driver/--adapter is a usage mistake like any other: exit 64.
                exit(withError: ValidationError(CLIError.from(error).message))
            }
        }
        var command: any ParsableCommand
        do {
            command = try parseAsRoot(arguments)
        } catch {
            // Usage mistakes: ArgumentParser's message, usage and exit code 64.
            exit(withError: error)
        }
        do {
            if var async = command as? AsyncParsableCommand {
                try await async.run()
            } else {
                try command.run()
            }
        } catch let error as CLIError {
            await ExitCleanup.shared.run()
            fail(error)
        } catch let error where error is ExitCode || exitCode(for: error) != .failure {
            // Help, validation and exit codes: ArgumentParser says what it means.
            await ExitCleanup.shared.run()
            exit(withError: error)
        } catch {
            // Anything else is one line and exit 1, whatever library it came from.
            await ExitCleanup.shared.run()
            fail(CLIError.from(error))
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
    /// Wraps any error as one readable line: the error's own description when it has one,
    /// the operating system's reason for a failed system call (from NIO or Foundation), never
    /// a type name or an `NSError` dump.
    static func from(_ error: any Error) -> CLIError {
        if let cli = error as? CLIError { return cli }
        return CLIError(describe(error))
    }

    /// One line for `error`.
    static func describe(_ error: any Error) -> String {
        switch error {
        case is IOError, is NIOConnectionError, is ChannelError:
            return MeshTransportError.describe(error)
        case is CancellationError:
            return "cancelled"
        case let error as DecodingError:
            switch error {
            case .dataCorrupted(let context), .keyNotFound(_, let context), .typeMismatch(_, let context), .valueNotFound(_, let context):
                let path = context.codingPath.map(\.stringValue).joined(separator: ".")
                return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
            @unknown default:
                return "the data could not be read"
            }
        case let error as CocoaError:
            return fileError(error as NSError)
        default:
            if !(type(of: error) is NSError.Type), let text = (error as? any LocalizedError)?.errorDescription { return text }
            let bridged = error as NSError
            if bridged.domain == NSCocoaErrorDomain || bridged.domain == NSPOSIXErrorDomain { return fileError(bridged) }
            return "\(error)"
        }
    }

    /// Foundation's file errors as the path and the system's reason, not "Code=512 (null)".
    private static func fileError(_ error: NSError) -> String {
        let path = (error.userInfo[NSFilePathErrorKey] as? String) ?? (error.userInfo[NSURLErrorKey] as? URL)?.path
        let posix = error.domain == NSPOSIXErrorDomain ? error : error.userInfo[NSUnderlyingErrorKey] as? NSError
        let reason = posix.map { String(cString: strerror(Int32($0.code))) } ?? error.localizedDescription
        return path.map { "\($0): \(reason)" } ?? reason
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
