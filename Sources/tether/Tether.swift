import ArgumentParser
import Foundation
import Logging

/// The `tether` command line: talk to BLE devices, or to their emulators, from a terminal.
@main
struct Tether: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tether",
        abstract: "Talk to Bluetooth LE devices — or to their faithful emulators.",
        discussion: "The default driver is the simulator: a virtual radio hosting every device emulator Tether has, so every command works without hardware.",
        version: "0.1.0",
        subcommands: [ScanCommand.self, DemoCommand.self, BenchCommand.self, GripFitCommands.self, KiroCommands.self, TybeCommands.self, FlockCommands.self, MeshCommands.self]
    )

    static func main() async {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = ProcessInfo.processInfo.environment["TETHER_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .error
            return handler
        }
        do {
            var command = try parseAsRoot(hoistingGlobalOptions(Array(CommandLine.arguments.dropFirst())))
            if var async = command as? AsyncParsableCommand {
                try await async.run()
            } else {
                try command.run()
            }
        } catch let error as CLIError {
            FileHandle.standardError.write(Data("tether: \(error.message)\n".utf8))
            Foundation.exit(1)
        } catch {
            exit(withError: error)
        }
    }
}

/// Moves `--driver X` written before the subcommand to after it, so the global option works
/// in either place (`tether --driver simulator scan` and `tether scan --driver simulator`).
func hoistingGlobalOptions(_ arguments: [String]) -> [String] {
    var globals: [String] = []
    var rest: [String] = []
    var index = 0
    var seenSubcommand = false
    while index < arguments.count {
        let argument = arguments[index]
        if !seenSubcommand, argument == "--driver", index + 1 < arguments.count {
            globals += [argument, arguments[index + 1]]
            index += 2
            continue
        }
        if !seenSubcommand, argument.hasPrefix("--driver=") {
            globals.append(argument)
            index += 1
            continue
        }
        if !argument.hasPrefix("-") { seenSubcommand = true }
        rest.append(argument)
        index += 1
    }
    guard let subcommand = rest.firstIndex(where: { !$0.hasPrefix("-") }) else { return rest + globals }
    return Array(rest[...subcommand]) + globals + Array(rest[(subcommand + 1)...])
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

/// Options every subcommand takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "The Bluetooth driver: simulator (default) or corebluetooth (on Linux: the CoreBluetooth look-alike over the simulator).")
    var driver: DriverChoice = .simulator
}

/// Flushes standard output so a timeline shows up as it happens, even through a pipe.
func flushOutput() {
    fflush(nil)
}

/// Fails with `message` if `operation` takes longer than `seconds` (wall clock: the CLI runs in
/// real time).
func within<T: Sendable>(_ seconds: Double, _ message: String, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw CLIError("\(message) (no result after \(seconds) s)")
        }
        return value
    }
}
