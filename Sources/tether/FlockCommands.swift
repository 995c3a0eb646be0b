import ArgumentParser
import FlockFinder
import Foundation
import Logging
import TetherCore
import TetherWorld
import TetherSimulator
import FlockFinderStorage

/// `tether flock …`: the FlockFinder surveillance-camera detector.
struct FlockCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flock",
        abstract: "Watch FlockFinder detections live, browse and export them, or decode raw notifications.",
        subcommands: [Watch.self, History.self, Export.self, Parse.self])
}

extension FlockCommands {
    /// `tether flock watch`.
    struct Watch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Connect to a detector and show detections live, storing them.")

        @OptionGroup var global: GlobalOptions

        @Option(parsing: .unconditional, help: "How long to watch, in seconds (at most a day).")
        var seconds: Double = 20

        @Flag(help: "Also show the live scan stream (stream_on).")
        var stream = false

        @OptionGroup var output: JSONOption
        var json: Bool { output.json }

        @OptionGroup var store: DatabaseOption
        var database: String? { store.database }

        func validate() throws {
            try Seconds.validate(seconds)
        }

        func run() async throws {
            do {
                let environment = try await Environment.make(json: json)
                let store = try DetectionStore(path: database ?? DetectionStore.defaultPath())
                if let emulator = environment.emulators?.flock {
                    await FlockScenario.drive(emulator)
                    if !json { print("Simulator: driving past a Flock Safety camera, a Penguin camera and a Raven sensor.") }
                }
                let story = FlockStory(central: environment.central, store: store, json: json)
                try await story.watch(seconds: seconds, stream: stream)
            } catch {
                throw CLIError.from(error)
            }
        }
    }

    /// `tether flock history`.
    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stored detections, newest first.")

        @Option(help: "Only this detection type (e.g. \"Flock Safety\").")
        var type: String?

        @Option(help: "Only detections received since this date (YYYY-MM-DD or ISO 8601).")
        var since: String?

        @OptionGroup var output: JSONOption
        var json: Bool { output.json }

        @OptionGroup var store: DatabaseOption
        var database: String? { store.database }

        func run() async throws {
            do {
                let sinceDate = try since.map(FlockStory.parseDate)
                // Nothing recorded yet (no default database): an empty store, and nothing created.
                let store = try openForReading(explicit: database, defaultPath: DetectionStore.defaultPath()) {
                    try DetectionStore(path: $0, access: $1)
                } ?? DetectionStore.inMemory()
                let detections = try await store.detections(type: type.map(DetectionType.init(name:)), since: sinceDate)
                for stored in detections {
                    print(json ? jsonLine(DetectionRecord(stored)) : FlockStory.describe(stored.detection, at: stored.receivedAt))
                }
                if !json {
                    let counts = try await store.countsByType().sorted { $0.value > $1.value }
                    print("\(detections.count) detection(s)" + (counts.isEmpty ? "" : "; by type: " + counts.map { "\(terminalSafe($0.key.name)) \($0.value)" }.joined(separator: ", ")))
                }
            } catch {
                throw CLIError.from(error)
            }
        }
    }

    /// `tether flock export`.
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Export stored detections as CSV or JSON.")

        enum Format: String, ExpressibleByArgument, CaseIterable { case csv, json }

        @Option(help: "csv or json.")
        var format: Format

        @Option(help: "Write to this file instead of standard output.")
        var output: String?

        @OptionGroup var store: DatabaseOption
        var database: String? { store.database }

        func run() async throws {
            do {
                // Nothing recorded yet (no default database): an empty store, and nothing created.
                let store = try openForReading(explicit: database, defaultPath: DetectionStore.defaultPath()) {
                    try DetectionStore(path: $0, access: $1)
                } ?? DetectionStore.inMemory()
                let data: Data = switch format {
                case .csv: Data(try await store.exportCSV().utf8)
                case .json: try await store.exportJSON()
                }
                if let output {
                    try data.write(to: URL(fileURLWithPath: output), options: .atomic)
                    FileHandle.standardError.write(Data("wrote \(data.count) bytes to \(output)\n".utf8))
                } else {
                    FileHandle.standardOutput.write(data)
                    if format == .json { print("") }
                }
            } catch {
                throw CLIError.from(error)
            }
        }
    }

    /// `tether flock parse`.
    struct Parse: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Decode notifications (one per line on standard input) into normalized JSON.",
            discussion: """
                Input: one payload per line, as the detector notifies it: a detection \
                ({"type":"Flock Safety","rssi":-62,"confidence":0.95,"mac":"…","ssid":"…","ts":123}) \
                or a stream event ({"evt":"wifi_scan",…}, "ble_scan", "status", "channel"). A \
                line longer than 1,024 bytes (the largest payload) is reported invalid. Output: \
                the detection, stream and invalid records of docs/json-lines.md.
                """)

        @OptionGroup var output: JSONOption
        var json: Bool { output.json }

        func run() async throws {
            let parser = FlockMessageParser()
            // Lines are framed with a bound (readLine grew with the line: 219 MB for a 100 MB
            // line); longer ones are reported as invalid, never buffered whole.
            var framer = NewlineFramer(maxLineLength: Self.maximumLineLength)
            let input = FileHandle.standardInput
            var ended = false
            while !ended {
                var chunk = input.availableData
                if chunk.isEmpty {
                    ended = true
                    guard framer.pendingByteCount > 0 else { break }
                    chunk = Data("\n".utf8)
                }
                for piece in framer.pushPieces(chunk) {
                    switch piece {
                    case .line(let bytes) where bytes.isEmpty: continue
                    case .line(let bytes): try report(parser.decode(bytes))
                    // Too long to be a payload: reported as the parser reports one, not kept.
                    case .overlongLine(let seen): try report(.invalid(raw: "", reason: .tooLarge(seen)))
                    }
                }
            }
        }

        /// No payload is longer (the parser refuses longer ones too).
        static let maximumLineLength = FlockFinderBLEConstants.maxPayloadBytes

        private func report(_ message: FlockMessage) throws {
            if json {
                    print(jsonLine(FlockParseReport(message)))
                } else {
                    switch message {
                    case .detection(let detection): print(FlockStory.describe(detection, at: nil))
                    case .stream(let event): print("stream \(terminalSafe(event.evt)): \(terminalSafe(String(decoding: event.firmwareJSON(), as: UTF8.self)))")
                    case .invalid(let raw, let reason): print("invalid (\(terminalSafe("\(reason)"))): \(terminalSafe(raw))")
                    }
                }
                flushOutput()
        }
    }
}
