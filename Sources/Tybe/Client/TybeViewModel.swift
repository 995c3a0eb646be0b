import Foundation
import Observation

/// Settings of §2.4, persisted across launches.
public struct TybeSettings: Codable, Sendable, Hashable {
    /// The bridge's advertised name.
    public var bridgeName = TybeGATT.defaultBridgeName
    /// Whether the log pane starts visible.
    public var showLogByDefault = false
    /// Drop the BLE link whenever the app comes to the foreground.
    public var resetBLEOnForeground = false
    /// Default settings.
    public init() {}
}

/// Where settings live between launches.
public protocol TybeSettingsStore: Sendable {
    /// The saved settings (defaults when none were saved).
    func load() -> TybeSettings
    /// Saves settings.
    func save(_ settings: TybeSettings) throws
}

/// Settings in a JSON file (the CLI's store; apps may use UserDefaults the same way).
public struct FileTybeSettingsStore: TybeSettingsStore {
    /// The file's path.
    public let path: String
    /// Creates a store at `path`.
    public init(path: String) { self.path = path }

    public func load() -> TybeSettings {
        guard let data = FileManager.default.contents(atPath: path),
              let settings = try? JSONDecoder().decode(TybeSettings.self, from: data) else { return TybeSettings() }
        return settings
    }

    public func save(_ settings: TybeSettings) throws {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(settings).write(to: url, options: .atomic)
    }
}

/// One log pane entry.
public struct TybeLogEntry: Sendable, Hashable, Identifiable {
    /// Severity, colour-coded in the UI.
    public enum Level: String, Sendable, Hashable { case info = "INFO", ok = "OK", warn = "WARN", error = "ERROR" }
    /// A running number.
    public let id: Int
    /// When it was logged.
    public let time: Date
    /// Its severity.
    public let level: Level
    /// What happened.
    public let message: String
}

/// The bridge pill of §2.1.
public enum TybeBridgePill: Sendable, Hashable {
    /// No traffic yet: "Bridge: —".
    case unknown
    /// "Bridge: OK".
    case ok
    /// "Bridge: <error>".
    case error(String)

    /// The pill's text.
    public var text: String {
        switch self {
        case .unknown: "Bridge: —"
        case .ok: "Bridge: OK"
        case .error(let what): "Bridge: \(what)"
        }
    }
}

/// The dongle pill of §2.1.
public enum TybeDonglePill: String, Sendable, Hashable {
    /// "Dongle: —".
    case unknown = "Dongle: —"
    /// "Dongle: linked".
    case linked = "Dongle: linked"
    /// "Dongle: no ACK".
    case noAck = "Dongle: no ACK"
}

/// The platform-neutral UX state of the mobile spec's §2: pills, counters, last key, recent
/// keys, log and settings. Bind a SwiftUI view to it, or print it from a terminal.
@MainActor
@Observable
public final class TybeViewModel {
    /// Entries kept in the log pane.
    public static let logLimit = 600
    /// Keys kept in the recent-keys strip.
    public static let recentLimit = 20

    /// The BLE link pill.
    public private(set) var link: TybeLinkState = .idle
    /// The bridge pill.
    public private(set) var bridge: TybeBridgePill = .unknown
    /// The dongle pill.
    public private(set) var dongle: TybeDonglePill = .unknown
    /// Keys sent.
    public private(set) var keyCount = 0
    /// Frames sent.
    public private(set) var frameCount = 0
    /// Bridge errors seen.
    public private(set) var errorCount = 0
    /// The big last-key glyph.
    public private(set) var lastKey: String?
    /// The recent-keys strip, oldest first.
    public private(set) var recentKeys: [String] = []
    /// The log pane, oldest first.
    public private(set) var log: [TybeLogEntry] = []
    /// Settings (saved on every change; a failure is logged and kept in ``settingsSaveError``).
    public var settings: TybeSettings {
        didSet {
            do {
                try store.save(settings)
                settingsSaveError = nil
            } catch {
                settingsSaveError = error.localizedDescription
                append(.error, "settings could not be saved: \(error.localizedDescription)")
            }
        }
    }
    /// Why the settings could not be saved the last time (nil once they were).
    public private(set) var settingsSaveError: String?
    /// Whether the log pane is showing.
    public var showLog: Bool

    private let store: any TybeSettingsStore
    private let now: @Sendable () -> Date
    private var nextLogID = 0

    /// Creates the view model, loading settings from `store`.
    public init(store: any TybeSettingsStore, now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.now = now
        let settings = store.load()
        self.settings = settings
        self.showLog = settings.showLogByDefault
    }

    /// Applies one client event.
    public func apply(_ event: TybeClientEvent) {
        switch event {
        case .link(let state):
            link = state
            append(state == .failed ? .error : .info, "BLE: \(state.rawValue)")
        case .status(let status):
            dongle = status.dongleLinked ? .linked : .noAck
            if let error = status.errorDescription {
                errorCount += 1
                bridge = .error(status.error?.name ?? String(format: "0x%02X", status.errorCode))
                append(.warn, "frame \(status.seq): \(error)")
            } else {
                bridge = .ok
                if status.ackReceived { append(.ok, "frame \(status.seq) acknowledged") }
            }
        case .statusRepeated(let status):
            // A heartbeat: the pills follow it (spec §7, item 7), the log is not flooded with
            // what it already says (item 8), and an error already counted is not counted again.
            dongle = status.dongleLinked ? .linked : .noAck
            if status.errorCode == 0 { bridge = .ok }
        case .frameSent(let seq, let keys):
            frameCount += 1
            append(.info, "frame \(seq) sent (\(keys) key\(keys == 1 ? "" : "s"))")
        case .progress(let sent, let acknowledged, let total):
            append(.info, "compose: \(sent)/\(total) sent, \(acknowledged) acknowledged")
        case .untypeable(let characters):
            append(.warn, "cannot type: " + characters.map { "\"\($0.character)\" at \($0.offset)" }.joined(separator: ", "))
        case .problem(let what):
            append(.error, what)
        }
    }

    /// Records keys the user typed (for the last-key glyph, the strip and the counter).
    public func typed(_ strokes: [KeyStroke]) {
        keyCount += strokes.count
        for stroke in strokes {
            lastKey = stroke.label
            recentKeys.append(stroke.label)
        }
        if recentKeys.count > Self.recentLimit { recentKeys.removeFirst(recentKeys.count - Self.recentLimit) }
    }

    /// Empties the log pane.
    public func clearLog() { log.removeAll() }

    /// The counters as the status bar shows them.
    public var countersText: String { "keys \(keyCount) · frames \(frameCount) · errors \(errorCount)" }

    /// One status line: the three pills and the counters.
    public var statusLine: String { "BLE: \(link.rawValue) | \(bridge.text) | \(dongle.rawValue) | \(countersText)" }

    private func append(_ level: TybeLogEntry.Level, _ message: String) {
        log.append(TybeLogEntry(id: nextLogID, time: now(), level: level, message: message))
        nextLogID += 1
        if log.count > Self.logLimit { log.removeFirst(log.count - Self.logLimit) }
    }
}
