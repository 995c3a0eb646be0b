import FlockFinder
import Foundation
import TetherCore
import TetherSimulator
import FlockFinderStorage

/// Watching a detector: `tether flock watch` and the demo's FlockFinder chapter.
struct FlockStory {
    let central: Central
    let store: DetectionStore
    let json: Bool

    /// What a watch saw.
    struct Outcome {
        var detections: [ReceivedDetection] = []
        var streamEvents = 0
    }

    @discardableResult
    func watch(seconds: Double, stream: Bool, timeline: DemoTimeline? = nil) async throws -> Outcome {
        let client = FlockFinderClient(central: central, store: store)
        let states = await client.connectionStates()
        let json = self.json
        let stateWatcher = Task {
            for await state in states {
                if let timeline { timeline.info("flock state → \(state.rawValue)") } else if !json { print("· \(state.rawValue)") }
            }
        }
        defer { stateWatcher.cancel() }
        let detections = await client.detections()
        let streamEvents = await client.streamUpdates()
        let collector = Task { () -> Outcome in
            var outcome = Outcome()
            for await received in detections {
                outcome.detections.append(received)
                let line = json ? jsonLine(watchRecord(received)) : Self.describe(received.detection, at: received.receivedAt) + Self.storageNote(received)
                if let timeline { timeline.info(line) } else { print(line) }
                flushOutput()
            }
            return outcome
        }
        let streamPrinter = Task { () -> Int in
            var count = 0
            for await event in streamEvents {
                count += 1
                if stream, !json { print("  stream \(terminalSafe(event.evt)): \(terminalSafe(String(decoding: event.firmwareJSON(), as: UTF8.self)))") }
            }
            return count
        }

        do {
            // The scan has its own 15 s; the whole search (connection and service discovery
            // included) is bounded as before.
            _ = try await within(30, "a detector to connect") { try await client.connectToFirstDetector() }
        } catch {
            collector.cancel()
            streamPrinter.cancel()
            await client.disconnect()
            throw error
        }
        if stream { try await client.setStreaming(true) }
        try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        if stream { try? await client.setStreaming(false) }
        await client.disconnect()
        collector.cancel()
        streamPrinter.cancel()
        var outcome = await collector.value
        outcome.streamEvents = await streamPrinter.value
        if !json, timeline == nil {
            let counts = try await store.countsByType().sorted { $0.value > $1.value }
            print("\(outcome.detections.count) detection(s) this session; stored by type: " + counts.map { "\(terminalSafe($0.key.name)) \($0.value)" }.joined(separator: ", "))
        }
        return outcome
    }

    /// One human line: type, proximity, RSSI, MAC/SSID.
    /// What became of a detection in the store, when it is not simply stored.
    static func storageNote(_ received: ReceivedDetection) -> String {
        if let failure = received.storageFailure { return "  (NOT STORED: \(terminalSafe(failure)))" }
        return received.stored == nil ? "  (below the confidence threshold: not stored)" : ""
    }

    static func describe(_ detection: Detection, at date: Date?) -> String {
        let time = date.map { ISO8601DateFormatter().string(from: $0) + "  " } ?? ""
        let who = [detection.mac, detection.ssid.map { "\"\($0)\"" }].compactMap { $0 }.joined(separator: " ")
        return time + pad(terminalSafe(detection.type.name), 26) + pad(detection.proximity.rawValue, 10) + pad("\(detection.rssi) dBm", 9) + String(format: "%.2f  ", detection.confidence) + terminalSafe(who)
    }

    /// Accepts `YYYY-MM-DD` or full ISO 8601.
    static func parseDate(_ text: String) throws -> Date {
        if let date = ISO8601DateFormatter().date(from: text) { return date }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        guard let date = formatter.date(from: text) else { throw CLIError("--since must be YYYY-MM-DD or ISO 8601 (got \(text))") }
        return date
    }
}

/// One detection under `watch --json`: the shared detection record, with whether it was stored.
func watchRecord(_ received: ReceivedDetection) -> DetectionRecord {
    var record = received.stored.map(DetectionRecord.init) ?? DetectionRecord(received.detection, receivedAt: received.receivedAt)
    record.stored = received.stored != nil
    record.storageFailure = received.storageFailure
    return record
}
