import ArgumentParser
import Foundation
import GripFit
import TetherCore
import GripFitStorage

/// `tether gripfit …`: the grip-strength dynamometer.
struct GripFitCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gripfit",
        abstract: "Stream, record and decode GripFit grip-strength readings.",
        subcommands: [Stream.self, Sessions.self, Parse.self])
}

extension GripFitCommands {
    /// `tether gripfit stream`: connect, stream readings, save the session.
    struct Stream: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Scan, connect, stream live readings, then save the session and print its summary.")

        @OptionGroup var global: GlobalOptions

        @Option(parsing: .unconditional, help: "How long to record, in seconds (at most a day).")
        var seconds: Double = 10

        @Option(help: "Sample interval in ms (20–1000).")
        var rate: Int?

        @Flag(help: "Zero the scale before recording.")
        var tare = false

        @OptionGroup var output: JSONOption
        var json: Bool { output.json }

        @OptionGroup var store: DatabaseOption
        var database: String? { store.database }

        func validate() throws {
            try Seconds.validate(seconds)
            if let rate, !GripFitCommand.rateRange.contains(rate) {
                throw ValidationError("--rate must be between 20 and 1000 ms (got \(rate))")
            }
        }

        func run() async throws {
            // The destination first: an unwritable --database must not cost a recording.
            let store: SQLiteGripSessionStore
            do {
                store = try SQLiteGripSessionStore(path: database ?? SQLiteGripSessionStore.defaultPath())
            } catch {
                throw CLIError.from(error)
            }
            let environment = try await Environment.make(json: json)
            let manager = BLEManager(central: environment.central)
            do {
                let device = try await GripFitFlow.findAndConnect(manager)
                if !json { print("Connected to \(terminalSafe(device.name)) (\(device.id)); firmware \(terminalSafe(await manager.deviceInfo?.firmwareVersion ?? "?"))") }
                if let rate { try await manager.changeSampleRate(ms: rate) }
                if tare { try await manager.tare() }
                // Ctrl-C or SIGTERM ends the recording early, and what was recorded is saved
                // (before and after it they end the command as usual).
                let termination = Termination(stdin: false)
                let record = try await GripFitFlow.record(manager, seconds: seconds, output: json ? .json : .live, until: termination)
                termination.restore()
                await manager.disconnect()
                do {
                    try await store.save(record)
                } catch {
                    // Never lost: the session goes to standard output as JSON, to be kept by hand.
                    print(jsonLine(SessionLine(record)))
                    throw CLIError("the session could not be saved (\(CLIError.from(error).message)); it was printed above as JSON")
                }
                if json {
                    print(jsonLine(SessionLine(record.summary)))
                } else {
                    print(GripFitFlow.describe(record.summary))
                }
                if record.samples.count < record.summary.sampleCount {
                    // The statistics count every reading; the stored curve keeps the first ones.
                    FileHandle.standardError.write(Data("tether: the curve keeps the first \(record.samples.count) of \(record.summary.sampleCount) readings (GripSession keeps at most \(GripSession.defaultMaxSamples))\n".utf8))
                }
            } catch {
                await manager.disconnect()
                throw CLIError.from(error)
            }
        }
    }

    /// `tether gripfit sessions`: the saved sessions.
    struct Sessions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the saved grip sessions, newest first.")

        @OptionGroup var output: JSONOption
        var json: Bool { output.json }

        @OptionGroup var store: DatabaseOption
        var database: String? { store.database }

        func run() async throws {
            do {
                let store = try openForReading(explicit: database, defaultPath: SQLiteGripSessionStore.defaultPath()) {
                    try SQLiteGripSessionStore(path: $0, access: $1)
                }
                let sessions = try await store?.allSessions() ?? []
                for summary in sessions {
                    print(json ? jsonLine(SessionLine(summary)) : GripFitFlow.describe(summary))
                }
                if !json { print("\(sessions.count) session(s)") }
            } catch {
                throw CLIError.from(error)
            }
        }
    }

    /// `tether gripfit parse`: decode raw notification bytes from standard input.
    struct Parse: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Decode raw GripFit notification bytes from standard input, one message per line.",
            discussion: """
                Input: what the device notifies on the Nordic UART TX characteristic, as text; \
                lines end in a newline and may arrive split or several per chunk. R:<value> is a \
                reading (signed, 24-bit), S:<word> a status (READY, NOT_READY, TARED, PONG, \
                RATE:<ms>), D:GRIPFIT,<version> the firmware. A line longer than 256 bytes is \
                reported invalid, never buffered whole. Example: printf 'R:834572\\nS:TARED\\n' | \
                tether gripfit parse --json
                """)

        @OptionGroup var output: JSONOption
        var json: Bool { output.json }

        func run() async throws {
            var framer = NewlineFramer(maxLineLength: Self.maximumLineLength)
            let parser = BLEMessageParser()
            let input = FileHandle.standardInput
            while true {
                let chunk = input.availableData
                if chunk.isEmpty { break }
                for piece in framer.pushPieces(chunk) { emit(piece, parser) }
            }
            // A final line without its newline is still a message to report.
            if framer.pendingByteCount > 0 {
                for piece in framer.pushPieces(Data("\n".utf8)) { emit(piece, parser) }
            }
        }

        /// Longer lines are no GripFit message (the firmware's are a few dozen bytes): each is
        /// reported as `invalid`, not decoded, and never buffered beyond this.
        static let maximumLineLength = 256

        private func emit(_ piece: NewlineFramer.Piece, _ parser: BLEMessageParser) {
            switch piece {
            case .line(let bytes):
                let line = String(decoding: bytes, as: UTF8.self)
                emit(Result { () throws(BLEMessageParser.ParseFailure) in try parser.decode(line) }, raw: line)
            case .overlongLine(let seen):
                let reason = "line longer than \(Self.maximumLineLength) bytes (\(seen) or more): not decoded"
                if json {
                    print(jsonLine(GripFitParseReport(overlong: reason)))
                } else {
                    print("invalid", reason)
                }
            }
        }

        private func emit(_ result: Result<GripFitMessage, BLEMessageParser.ParseFailure>, raw: String) {
            let record = GripFitParseReport(result, raw: raw)
            if json {
                print(jsonLine(record))
            } else {
                switch result {
                case .success(let message): print(record.type, terminalSafe(record.raw.map(String.init) ?? record.status ?? record.version ?? ""), terminalSafe(message.line))
                case .failure(let failure): print("invalid", terminalSafe("\(failure)"))
                }
            }
        }
    }
}

/// Steps shared by the stream command and the demo.
enum GripFitFlow {
    /// Scans for a GripFit and connects to the first one; throws the manager's error state.
    static func findAndConnect(_ manager: BLEManager) async throws -> GripFitDevice {
        let statuses = await manager.statuses()
        let device = try await manager.connectToFirstDevice()
        // The device introduces itself (D: then S:READY) right after the subscription; the
        // firmware line printed next comes from it.
        _ = try? await within(2, "device introduction") {
            for await status in statuses where status == .ready || status == .notReady { return true }
            return false
        }
        return device
    }

    /// How `record` shows readings as they arrive.
    enum ReadingOutput { case live, json, none }

    /// Records readings for `seconds`, showing them as asked, and returns the session.
    /// Records for `seconds`, or until `termination` (Ctrl-C, SIGTERM) comes first.
    static func record(_ manager: BLEManager, seconds: Double, output: ReadingOutput, until termination: Termination? = nil) async throws -> GripSessionRecord {
        let readings = await manager.readings()
        let startedAt = Date()
        let collector = Task { () -> GripSession in
            var session = GripSession(startedAt: startedAt)
            let live = isatty(STDOUT_FILENO) != 0
            var lastLine = Date.distantPast
            for await reading in readings {
                session.record(reading)
                switch output {
                case .none:
                    continue
                case .json:
                    print(jsonLine(ReadingLine(reading)))
                case .live:
                    let summary = session.summary()
                    let text = String(format: "raw %9d   peak %9.0f   avg %9.0f   n=%d", reading.raw, summary.maxForce, summary.averageForce, summary.sampleCount)
                    if live {
                        print("\r" + text, terminator: "")
                    } else if reading.receivedAt.timeIntervalSince(lastLine) >= 1 {
                        print(text)
                        lastLine = reading.receivedAt
                    }
                }
                flushOutput()
            }
            if live && output == .live { print("") }
            return session
        }
        let ended: String? = await withTaskGroup(of: String?.self) { group in
            group.addTask {
                try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                return nil
            }
            if let termination { group.addTask { await termination.wait() } }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        if let ended {
            FileHandle.standardError.write(Data("\n\(ended): saving what was recorded\n".utf8))
        }
        collector.cancel()
        let session = await collector.value
        guard session.count > 0 else { throw CLIError("no readings arrived") }
        return session.record(endedAt: Date())
    }

    static func describe(_ summary: GripSessionSummary) -> String {
        let date = ISO8601DateFormatter().string(from: summary.startedAt)
        return String(format: "%@  %@  %6.1f s  peak %9.0f  avg %9.0f  %5d samples",
                      summary.id.uuidString.prefix(8).description, date, summary.duration, summary.maxForce, summary.averageForce, summary.sampleCount)
    }
}

/// A `reading` record (`gripfit stream --json`); `gripfit parse` prints
/// the same type with `raw` only.
struct ReadingLine: Encodable {
    let type = "reading"
    let raw: Int32
    let force: Double
    let receivedAt: String
    init(_ reading: GripReading) {
        raw = reading.raw
        force = reading.force
        receivedAt = Timestamp.string(from: reading.receivedAt)
    }
}

/// A `session` record (`gripfit stream --json`, `gripfit sessions --json`); `samples` only when
/// a recorded session could not be saved and is printed whole so it is not lost.
struct SessionLine: Encodable {
    let type = "session"
    let id: String
    let startedAt: String
    let duration: Double
    let maxForce: Double
    let averageForce: Double
    let sampleCount: Int
    var samples: [GripSample]?
    init(_ summary: GripSessionSummary) {
        id = summary.id.uuidString
        startedAt = Timestamp.string(from: summary.startedAt)
        duration = summary.duration
        maxForce = summary.maxForce
        averageForce = summary.averageForce
        sampleCount = summary.sampleCount
    }

    init(_ record: GripSessionRecord) {
        self.init(record.summary)
        samples = record.samples
    }
}
