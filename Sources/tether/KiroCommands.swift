import ArgumentParser
import Foundation
import Kiro
import TetherCore
import TetherSimulator
import TetherWorld
import KiroStorage

/// `tether kiro …`: the E-ink desk companion.
struct KiroCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kiro",
        abstract: "Encode Kiro commands, decode its events, push a day to it and read focus time.",
        subcommands: [Encode.self, DecodeEvent.self, Push.self, Focus.self])
}

extension KiroCommands {
    /// The command names `encode` accepts.
    enum CommandName: String, ExpressibleByArgument, CaseIterable {
        case petStatus = "pet-status", taskList = "task-list", schedule, weather, time
        case dayPack = "day-pack", taskInPage = "task-in-page", deviceMode = "device-mode"

        static var allValueStrings: [String] { allCases.map(\.rawValue) }

        func command(from json: Data) throws -> KiroCommand {
            let decoder = JSONDecoder()
            switch self {
            case .petStatus: return .petStatus(try decoder.decode(PetStatus.self, from: json))
            case .taskList: return .taskList(try decoder.decode(TaskList.self, from: json))
            case .schedule: return .schedule(try decoder.decode(Schedule.self, from: json))
            case .weather: return .weather(try decoder.decode(Weather.self, from: json))
            case .time: return .time(try decoder.decode(TimeSync.self, from: json))
            case .dayPack: return .dayPack(try decoder.decode(DayPack.self, from: json))
            case .taskInPage: return .taskInPage(try decoder.decode(TaskInPage.self, from: json))
            case .deviceMode: return .deviceMode(try decoder.decode(DeviceModeCommand.self, from: json).mode)
            }
        }
    }

    /// `tether kiro encode <command> [<json> | @FILE | -]`, `--example` for a model to start from.
    struct Encode: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a command's packet as hex.",
            discussion: """
                The model is JSON with the field names of the Kiro protocol's models (dates \
                "YYYY-MM-DD", times "YYYY-MM-DDTHH:mm:ss"), given inline, as @FILE, or as - to \
                read standard input. `tether kiro encode --example day-pack` prints a complete \
                example of each command's model, ready to edit.
                """)

        @Argument(help: "pet-status, task-list, schedule, weather, time, day-pack, task-in-page or device-mode.")
        var command: CommandName

        @Argument(help: ArgumentHelp("The model as JSON, @FILE to read a file, or - for standard input.", valueName: "model"))
        var model: String?

        @Option(name: .customLong("json"), help: .hidden)
        var legacyModel: String?

        @Flag(help: "Print an example model of the command as JSON instead of encoding one.")
        var example = false

        @Flag(help: "Append the CRC-16/CCITT-FALSE of the payload (later protocol versions).")
        var checksum = false

        func validate() throws {
            if model != nil, legacyModel != nil { throw ValidationError("give the model once (as an argument; --json is its old spelling)") }
            if example, model ?? legacyModel != nil { throw ValidationError("--example prints a model; it takes none") }
            if !example, model ?? legacyModel == nil {
                throw ValidationError("give the model as JSON, @FILE or - (see `tether kiro encode --example \(command.rawValue)`)")
            }
        }

        func run() async throws {
            if example {
                print(command.example)
                return
            }
            do {
                let data = try Self.read(model ?? legacyModel ?? "")
                let packet = try command.command(from: data).packet(checksum: checksum)
                print(Data(packet).hexString(separator: " ", uppercase: true))
            } catch let error as DecodingError {
                throw CLIError("invalid \(command.rawValue) JSON: \(describe(error)) (see `tether kiro encode --example \(command.rawValue)`)")
            } catch {
                throw CLIError.from(error)
            }
        }

        /// The largest model read from a file or standard input (a day pack is a few KiB).
        static let maximumModelBytes = 1 << 20

        /// The model's bytes: inline JSON, `@FILE`, or `-` for standard input (bounded).
        static func read(_ argument: String) throws -> Data {
            let data: Data?
            if argument == "-" {
                data = try readBounded(.standardInput, limit: maximumModelBytes)
            } else if argument.hasPrefix("@") {
                let path = String(argument.dropFirst())
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
                    throw CLIError("\(terminalSafe(path)) is a directory, not a file")
                }
                guard let handle = FileHandle(forReadingAtPath: path) else { throw CLIError("cannot read \(terminalSafe(path))") }
                defer { try? handle.close() }
                do {
                    data = try readBounded(handle, limit: maximumModelBytes)
                } catch {
                    throw CLIError("cannot read \(terminalSafe(path)): \(terminalSafe(error.localizedDescription))")
                }
            } else {
                data = Data(argument.utf8)
            }
            guard let data, data.count <= maximumModelBytes else { throw CLIError("the model is larger than \(maximumModelBytes / 1024) KiB") }
            return data
        }
    }

    /// `tether kiro decode-event <hex>`.
    struct DecodeEvent: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "decode-event", abstract: "Print a device event packet as JSON.")

        @Argument(help: "The packet as hex (spaces allowed), e.g. \"20 00\".")
        var hex: [String]

        func run() async throws {
            let text = hex.joined().replacingOccurrences(of: " ", with: "")
            guard !text.isEmpty, let bytes = Data(hexString: text) else {
                throw CLIError("the packet must be hex digits, two per byte (got \(terminalSafe(String(text.prefix(64)))))")
            }
            switch Result(catching: { () throws(KiroEventDecodeError) in try KiroEventDecoder().decode(bytes) }) {
            case .success(let event): print(jsonLine(KiroEventReport(event)))
            case .failure(let error): throw CLIError("cannot decode the event: \(error)")
            }
        }
    }

    /// `tether kiro push <day.json>`.
    struct Push: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Connect, sync the time, send the day, show the device's pages, then follow its events live.",
            discussion: """
                The day is a DayPack as JSON (a file path); `tether kiro encode --example \
                day-pack` prints one to start from. Without a file the built-in sample day is sent.
                """)

        @OptionGroup var global: GlobalOptions

        @Argument(help: ArgumentHelp("A file holding the day as JSON (a DayPack), or - for standard input; omit for the built-in sample day.", valueName: "day.json"))
        var day: String?

        @Option(parsing: .unconditional, help: "How long to follow events, in seconds (0: do not follow; at most a day).")
        var seconds: Double = 12

        @Flag(help: "On the simulator, do not script a user pressing the wheel.")
        var noScript = false

        func validate() throws {
            try Seconds.validate(seconds, allowingZero: true)
        }

        func run() async throws {
            do {
                // Read as `encode` reads a model: bounded, a file or - for standard input.
                let dayPack = try day.map { try JSONDecoder().decode(DayPack.self, from: Encode.read($0 == "-" ? "-" : "@" + $0)) } ?? KiroSampleDay.dayPack()
                let environment = try await Environment.make()
                let store = try SQLiteFocusSessionStore(path: SQLiteFocusSessionStore.defaultPath())
                try await KiroStory(central: environment.central, radio: environment.radio, emulator: environment.emulators?.kiro,
                                    timeline: DemoTimeline(), focusStore: store)
                    .push(dayPack, follow: seconds, script: !noScript)
            } catch let error as DecodingError {
                throw CLIError("invalid day JSON: \(describe(error))")
            } catch {
                throw CLIError.from(error)
            }
        }
    }

    /// `tether kiro focus`.
    struct Focus: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stored focus sessions and their focus time.")

        @OptionGroup var output: JSONOption
        var json: Bool { output.json }

        func run() async throws {
            do {
                let store = try openForReading(explicit: nil, defaultPath: SQLiteFocusSessionStore.defaultPath()) {
                    try SQLiteFocusSessionStore(path: $0, access: $1)
                }
                let calculator = FocusTimeCalculator()
                // No Screen Time on this platform: no unlocks are known.
                let source = StaticScreenActivitySource([])
                var total: TimeInterval = 0
                let sessions = try await store?.allSessions() ?? []
                for session in sessions {
                    let focus = try await calculator.focusTime(for: session, source: source)
                    total += focus
                    if json {
                        print(jsonLine(FocusLine(session, focus: focus)))
                    } else {
                        let minutes = (session.duration ?? 0) / 60
                        print(String(format: "%@  %@  %-9@ %6.1f min  focus %6.1f min", ISO8601DateFormatter().string(from: session.start), session.taskId, session.outcome.rawValue, minutes, focus / 60))
                    }
                }
                if !json { print(String(format: "%d session(s), %.1f min of focus", sessions.count, total / 60)) }
            } catch {
                throw CLIError.from(error)
            }
        }
    }
}

/// An `event` record (`kiro decode-event`): the event's type as the firmware names it, its id
/// under the name the spec gives it, and the device's timestamp (Unix seconds) as ISO 8601.
struct KiroEventReport: Encodable {
    let type = "event"
    let eventType: String
    var taskId: String?
    var itemId: String?
    var eventId: String?
    var timestamp: String?
    var batteryLevel: UInt8?

    init(_ event: KiroEvent) {
        eventType = event.type.rawValue
        switch event.type {
        case .wheelSelect: itemId = event.id
        case .viewEventDetail: eventId = event.id
        default: taskId = event.id
        }
        timestamp = event.timestamp.map(Timestamp.string(unixSeconds:))
        batteryLevel = event.batteryLevel
    }
}

/// A `focusSession` record (`kiro focus --json`).
struct FocusLine: Encodable {
    let type = "focusSession"
    let id: String
    let taskId: String
    let start: String
    let end: String?
    let outcome: String
    let duration: Double?
    let focusTime: Double

    init(_ session: FocusSession, focus: TimeInterval) {
        id = session.id.uuidString
        taskId = session.taskId
        start = Timestamp.string(from: session.start)
        end = session.end.map(Timestamp.string(from:))
        outcome = session.outcome.rawValue
        duration = session.duration
        focusTime = focus
    }
}

/// One line for a JSON decoding error: where and what.
func describe(_ error: DecodingError) -> String {
    func path(_ context: DecodingError.Context) -> String {
        let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        return keys.isEmpty ? "" : " at \(keys)"
    }
    switch error {
    case .keyNotFound(let key, let context): return "missing \"\(key.stringValue)\"\(path(context))"
    case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
        return "\(context.debugDescription)\(path(context))"
    @unknown default: return "\(error)"
    }
}
