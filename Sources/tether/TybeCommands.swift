import ArgumentParser
import Foundation
import TetherCore
import TetherSimulator
import TetherWorld
import Tybe
import TybeEmulator

/// `tether tybe …`: the phone-as-keyboard bridge.
struct TybeCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tybe",
        abstract: "Plan keystrokes, type text through a Tybe bridge, or use the terminal as a live keyboard.",
        subcommands: [Plan.self, TypeText.self, Keyboard.self])
}

/// Options shared by the commands that talk to a bridge.
struct BridgeOptions: ParsableArguments {
    @Option(help: "The bridge's advertised name.")
    var bridge: String = TybeGATT.defaultBridgeName

    @Option(help: "On the simulator: the host's input source (english or korean).")
    var host: String?
}

extension TybeCommands {
    /// `tether tybe plan <text>`.
    struct Plan: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the opcodes and frames for a text, and what cannot be typed.")

        @Argument(help: "The text to plan.")
        var text: String

        @Option(name: .customLong("start-seq"), help: "The first frame's sequence number.")
        var startSeq: Int = 0

        @Option(name: .customLong("max-frame"), help: "Largest frame in bytes (the link's max write length; 5…255).")
        var maxFrame: Int = 255

        @OptionGroup var output: JSONOption
        var json: Bool { output.json }

        func validate() throws {
            guard (0...255).contains(startSeq) else { throw ValidationError("--start-seq must be 0…255") }
            guard (5...255).contains(maxFrame) else { throw ValidationError("--max-frame must be 5…255 (one KEY opcode needs 5 bytes)") }
        }

        func run() async throws {
            let plan = TybePlanner.plan(text)
            let frames = TybeFrameBuilder.chunk(opcodes: plan.opcodes, startingSeq: UInt8(startSeq), maxFrameBytes: maxFrame)
            if json {
                struct Output: Encodable { var type = "frames"; let opcodes: String; let frames: [String]; let untypeable: [UntypeableCharacter] }
                print(jsonLine(Output(opcodes: plan.opcodes.hexString, frames: frames.map { $0.bytes.hexString }, untypeable: plan.untypeable)))
                return
            }
            print("keys (\(plan.keystrokes.count)): " + plan.keystrokes.map(\.label).joined(separator: " "))
            print("opcodes: " + plan.opcodes.hexString(separator: " "))
            for frame in frames { print("frame seq \(frame.seq): " + frame.bytes.hexString(separator: " ")) }
            if !plan.untypeable.isEmpty {
                print("cannot type: " + plan.untypeable.map { "\"\($0.character)\" at \($0.offset)" }.joined(separator: ", "))
            }
        }
    }

    /// `tether tybe type <text>`.
    struct TypeText: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "type", abstract: "Compose mode: send a text through the bridge and print each frame's status.")

        @OptionGroup var global: GlobalOptions
        @OptionGroup var options: BridgeOptions

        @Argument(help: "The text to type, or - to type what standard input holds (at most 64 KiB).")
        var text: String

        /// The most text `-` reads (a page of prose is a few KiB; every key is a frame).
        static let maximumInputBytes = 64 * 1024

        /// The text to type: the argument, or standard input for `-` (bounded, never buffered whole).
        static func input(_ argument: String, from handle: FileHandle = .standardInput) throws -> String {
            guard argument == "-" else { return argument }
            guard let data = try readBounded(handle, limit: maximumInputBytes) else { throw CLIError("standard input holds more than \(maximumInputBytes / 1024) KiB; type it in parts") }
            guard let text = String(data: data, encoding: .utf8) else { throw CLIError("standard input is not UTF-8 text") }
            return text
        }

        func run() async throws {
            let text = try Self.input(text)
            let environment = try await Environment.make()
            try await TybeSetup.selectHost(options.host, in: environment)
            let client = TybeClient(central: environment.central, bridgeName: options.bridge)
            let events = await client.events()
            let printer = Task {
                for await event in events {
                    switch event {
                    case .status(let status):
                        print("status seq \(status.seq): \(status.errorDescription ?? "OK")\(status.ackReceived ? " · ACK" : "")\(status.dongleLinked ? " · dongle linked" : " · dongle not linked")")
                    case .untypeable(let characters):
                        print("cannot type: " + characters.map { "\"\(terminalSafe(String($0.character)))\"" }.joined(separator: ", "))
                    case .problem(let what):
                        print("problem: \(terminalSafe(what))")
                    default:
                        break
                    }
                    flushOutput()
                }
            }
            do {
                try await client.connect()
                let (plan, statuses) = try await client.compose(text)
                try await Task.sleep(for: .milliseconds(300))
                print("sent \(plan.keystrokes.count) keys in \(statuses.count) frame(s); \(statuses.filter { $0.errorCode != 0 }.count) with errors")
                if let dongle = environment.emulators?.tybe.dongle {
                    try await Task.sleep(for: .milliseconds(Int(plan.keystrokes.count) * 10 + 200))
                    print("the host typed: \(terminalSafe(await dongle.host.text))")
                }
                await client.reset()
                printer.cancel()
            } catch {
                printer.cancel()
                throw CLIError.from(error)
            }
        }
    }

    /// `tether tybe keyboard`.
    struct Keyboard: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Live keyboard: every key press in this terminal becomes a frame (Ctrl-] quits).")

        @OptionGroup var global: GlobalOptions
        @OptionGroup var options: BridgeOptions

        func run() async throws {
            guard isatty(STDIN_FILENO) != 0 else { throw CLIError("the live keyboard needs a terminal (pipe text to `tether tybe type -` instead)") }
            let environment = try await Environment.make()
            try await TybeSetup.selectHost(options.host, in: environment)
            let client = TybeClient(central: environment.central, bridgeName: options.bridge)
            let model = await TybeViewModel(store: FileTybeSettingsStore(path: TybeSetup.settingsPath))
            let events = await client.events()
            let host = environment.emulators?.tybe.dongle.host
            let renderer = Task { @MainActor in
                for await event in events {
                    model.apply(event)
                    var line = terminalSafe(model.statusLine) + "  last: \(terminalSafe(model.lastKey ?? "—"))"
                    if let host { line += "  host: \(terminalSafe(String((await host.text).suffix(24)).replacingOccurrences(of: "\n", with: "⏎")))" }
                    // One line, redrawn in place: cut to the terminal's width (asked each time,
                    // so a resize is followed), never wrapped onto the lines above.
                    let columns = (terminalWidth() ?? 80) - 1
                    print("\r\u{1B}[2K" + fitToColumns(line, columns: columns), terminator: "")
                    flushOutput()
                }
            }
            print("Connecting to \(options.bridge)… type to send keys, Ctrl-] to quit.")
            try await client.connect()
            let terminal = RawTerminal()
            defer { terminal.restore() }
            var decoder = TerminalKeyDecoder()
            loop: while true {
                let bytes = try await terminal.read()
                var outputs = decoder.push(bytes)
                if bytes == [0x1B] { outputs += decoder.flush() }
                for output in outputs {
                    switch output {
                    case .quit: break loop
                    case .key(let stroke):
                        await MainActor.run { model.typed([stroke]) }
                        do { try await client.send(stroke) } catch { await MainActor.run { model.apply(.problem(CLIError.describe(error))) } }
                    case .ignored(let sequence):
                        // Not typed, and not in silence: the log says which keys have no HID key.
                        let shown = terminalSafe(String(decoding: sequence.prefix(16), as: UTF8.self))
                        await MainActor.run { model.apply(.problem("not sent: \(shown) is no key the bridge can type")) }
                    }
                }
            }
            terminal.restore()
            await client.reset()
            renderer.cancel()
            print("")
        }
    }
}

/// Shared helpers of the Tybe commands and the demo.
enum TybeSetup {
    /// Where the Tybe settings persist.
    static var settingsPath: String { DataDirectory.path(for: "tybe-settings.json") }

    /// Switches the simulated host's input source.
    static func selectHost(_ name: String?, in environment: Environment) async throws {
        guard let name else { return }
        guard let source = TybeHost.InputSource(rawValue: name) else { throw CLIError("--host must be english or korean") }
        guard let host = environment.emulators?.tybe.dongle.host else { throw CLIError("--host needs the simulator") }
        await { @SimulationActor in host.inputSource = source }()
    }
}

/// The terminal in raw mode for the live keyboard; restored on exit.
final class RawTerminal: @unchecked Sendable {
    private var original = termios()
    private var active = false

    private var saved = false

    init() {
        guard tcgetattr(STDIN_FILENO, &original) == 0 else { return }
        saved = true
        makeRaw()
        // Restored also when the process ends on SIGTERM or SIGHUP (Ctrl-C is a key in raw mode).
        if active { ExitCleanup.shared.add(handlingSignals: true) { [self] in restore() } }
    }

    /// Raw mode (again, after ``restore()``).
    func makeRaw() {
        guard saved, !active else { return }
        var raw = original
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL)
        active = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0
    }

    /// Reads what the terminal has (blocking off the cooperative pool).
    func read() async throws -> [UInt8] {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                var buffer = [UInt8](repeating: 0, count: 64)
                let count = Foundation.read(STDIN_FILENO, &buffer, buffer.count)
                if count <= 0 { continuation.resume(throwing: CLIError("standard input closed")) } else { continuation.resume(returning: Array(buffer.prefix(count))) }
            }
        }
    }

    func restore() {
        guard active else { return }
        var saved = original
        tcsetattr(STDIN_FILENO, TCSANOW, &saved)
        active = false
    }
}
