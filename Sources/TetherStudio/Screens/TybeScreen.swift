#if os(macOS) || os(Linux)
import Foundation
import Observation
import TetherCore
import TetherSimulator
import Tybe
import TybeEmulator

/// The Tybe app's screen, the mobile spec's §2 as written: the header (mode picker, bridge
/// name persisted, Connect, Reset, Show-Log), the status bar (link, bridge and dongle pills,
/// counters), keyboard mode (each browser key event becomes one frame; a toolbar for Tab, Esc
/// and the arrows; the last-key glyph and the recent-key strip), compose mode (a multi-line
/// text sent with per-frame progress) and the log pane (600 entries, levels coloured,
/// clearable). On the simulator it also shows what the emulated host typed.
///
/// It follows a ``TybeViewModel`` fed by a ``TybeClient``'s events, as an app would.
@Observable
@MainActor
public final class TybeScreen: StudioScreen {
    public let device = "tybe"
    /// The view model the screen shows.
    public let model: TybeViewModel
    /// `keyboard` or `compose` (§2.1's mode picker; keyboard by default).
    public private(set) var mode = "keyboard"
    /// Whether a compose is being sent.
    public private(set) var composing = false
    /// The compose under way: frames sent, acknowledged, in all.
    public private(set) var progress: (sent: Int, acknowledged: Int, total: Int)?
    /// On the simulator: what the emulated host shows (the end of it), its input source, and
    /// how many keys it received.
    public private(set) var host: HostState?

    /// What the emulated host shows.
    public struct HostState: Encodable, Sendable, Equatable {
        var text: String
        var inputSource: String
        var keystrokes: Int
    }

    /// The longest text a compose sends.
    public static let composeLimit = 10_000
    /// The most characters one `text` action types (an input method's commit, a paste).
    public static let textLimit = 256
    /// How much of the emulated host's text is shown (its end).
    public static let hostTextShown = 2_000

    @ObservationIgnored private let client: TybeClient
    @ObservationIgnored private let emulator: TybeBridgeEmulator?
    @ObservationIgnored private var follower: Task<Void, Never>?
    @ObservationIgnored private let work = ScreenWork()
    @ObservationIgnored private var pendingKeys: [[KeyStroke]] = []
    @ObservationIgnored private var keySender: Task<Void, Never>?

    /// Key events that may wait for the bridge; more are refused with a word.
    public static let pendingKeyLimit = 256
    @ObservationIgnored private var hostWatcher: Task<Void, Never>?
    @ObservationIgnored private var isStarting = false
    /// Counts stop()s, so a start() they overtook leaves nothing running.
    @ObservationIgnored private var stops = 0

    /// A screen on `central` with settings kept in `settings`; `emulator` (the simulator's
    /// bridge) adds the emulated host's view and controls.
    public init(central: Central, settings: any TybeSettingsStore, emulator: TybeBridgeEmulator? = nil,
                clock: any Clock<Duration> = ContinuousClock()) {
        let model = TybeViewModel(store: settings)
        self.model = model
        self.client = TybeClient(central: central, bridgeName: model.settings.bridgeName, clock: clock)
        self.emulator = emulator
    }

    public func start() async {
        guard follower == nil, !isStarting else { return }
        isStarting = true
        let generation = stops
        let events = await client.events()
        isStarting = false
        guard stops == generation else { return }
        follower = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                self.model.apply(event)
                if case .progress(let sent, let acknowledged, let total) = event { self.progress = (sent, acknowledged, total) }
            }
        }
        if let host = emulator?.dongle.host {
            // The dongle types each key a few milliseconds after the bridge acknowledged its
            // frame: the host says when its text changed. (In place before the first await: a
            // stop() while this starts ends it.)
            hostWatcher = Task { [weak self] in
                let changes = await { @SimulationActor in host.changes() }()
                // What changed before the subscription.
                await self?.refreshHost()
                for await _ in changes {
                    guard let self else { return }
                    await self.refreshHost()
                }
            }
        }
        await refreshHost()
    }

    public func stop() async {
        stops += 1
        follower?.cancel()
        follower = nil
        hostWatcher?.cancel()
        hostWatcher = nil
        await reset()
        await work.finish()
    }

    // MARK: State

    /// A log entry.
    public struct LogState: Encodable, Sendable, Equatable {
        var id: Int
        var time: Date
        var level: String
        var message: String
    }

    /// A pill: its text and colour (`green`, `red`, `grey`, `yellow`).
    public struct Pill: Encodable, Sendable, Equatable {
        var text: String
        var colour: String
    }

    /// What the page draws.
    public struct State: Encodable, Sendable {
        var mode: String
        var bridgeName: String
        var showLog: Bool
        var showLogByDefault: Bool
        var resetBLEOnForeground: Bool
        var link: Pill
        var bridge: Pill
        var dongle: Pill
        var keys: Int
        var frames: Int
        var errors: Int
        var lastKey: String?
        var recentKeys: [String]
        var log: [LogState]
        var composing: Bool
        var progress: [String: Int]?
        var simulated: Bool
        var host: HostState?
    }

    public func state() -> State {
        State(
            mode: mode,
            bridgeName: model.settings.bridgeName,
            showLog: model.showLog,
            showLogByDefault: model.settings.showLogByDefault,
            resetBLEOnForeground: model.settings.resetBLEOnForeground,
            link: Pill(text: "BLE: \(model.link.rawValue)", colour: Self.colour(model.link)),
            bridge: Pill(text: model.bridge.text, colour: Self.colour(model.bridge)),
            dongle: Pill(text: model.dongle.rawValue, colour: Self.colour(model.dongle)),
            keys: model.keyCount,
            frames: model.frameCount,
            errors: model.errorCount,
            lastKey: model.lastKey,
            recentKeys: model.recentKeys,
            log: model.log.map { LogState(id: $0.id, time: $0.time, level: $0.level.rawValue, message: $0.message) },
            composing: composing,
            progress: progress.map { ["sent": $0.sent, "acknowledged": $0.acknowledged, "total": $0.total] },
            simulated: emulator != nil,
            host: host)
    }

    // MARK: Actions

    public func perform(_ action: StudioAction) async throws(StudioProtocolError) {
        switch action.name {
        case "mode":
            let mode = try action.string("mode", maximumLength: 16)
            guard mode == "keyboard" || mode == "compose" else { throw StudioProtocolError("\"mode\" must be keyboard or compose") }
            self.mode = mode
        case "bridgeName":
            let name = try action.string("name", maximumLength: 64).trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, name.unicodeScalars.allSatisfy({ !$0.properties.isDefaultIgnorableCodePoint && $0.value >= 0x20 && $0 != "\u{7F}" }) else {
                throw StudioProtocolError("a bridge name is 1 to 64 printable characters")
            }
            model.settings.bridgeName = name
            await client.setBridgeName(name)
        case "settings":
            if case .bool(let on)? = action.arguments["showLogByDefault"] { model.settings.showLogByDefault = on }
            if case .bool(let on)? = action.arguments["resetBLEOnForeground"] { model.settings.resetBLEOnForeground = on }
        case "showLog":
            model.showLog = try action.flag("on")
        case "clearLog":
            model.clearLog()
        case "connect":
            // In the background: Reset must not wait behind a scan for the bridge.
            let started = work.run { [weak self] in
                guard let self else { return }
                do { try await self.client.connect() } catch { self.model.apply(.problem(userFacingText(error))) }
            }
            guard started else { throw StudioProtocolError("the Tybe screen is busy: wait, or Reset") }
        case "reset":
            await reset()
        case "foreground":
            // The page came back into view: §2.4's "Reset BLE on app foreground".
            if model.settings.resetBLEOnForeground { await reset() }
        case "key":
            let strokes = try Self.keystrokes(for: action)
            guard let strokes else {
                model.apply(.problem("not sent: \(try action.string("key", maximumLength: 32)) is no key the bridge can type"))
                return
            }
            queueKeys([strokes])
        case "text":
            // An input method's commit (a Hangul syllable) or a paste: one frame per character.
            let text = try action.string("text", maximumLength: Self.textLimit)
            var frames: [[KeyStroke]] = []
            var untypeable: [UntypeableCharacter] = []
            for (offset, character) in text.enumerated() {
                if let strokes = TybePlanner.keystrokes(for: character) { frames.append(strokes) } else {
                    untypeable.append(UntypeableCharacter(character: String(character), offset: offset))
                }
            }
            if !untypeable.isEmpty { model.apply(.untypeable(untypeable)) }
            queueKeys(frames)
        case "compose":
            let text = try action.string("text", maximumLength: Self.composeLimit)
            guard !composing else { throw StudioProtocolError("a compose is being sent: wait for it, or Reset") }
            let started = work.run { [weak self] in
                guard let self else { return }
                do {
                    let (plan, _) = try await self.client.compose(text)
                    // The status bar's key counter counts every key sent, composed ones too.
                    self.model.typed(plan.keystrokes)
                } catch {
                    self.model.apply(.problem(userFacingText(error)))
                }
                await self.refreshHost()
            } finally: { [weak self] in
                // Also when Reset cancelled it before it began.
                self?.composing = false
            }
            guard started else { throw StudioProtocolError("the Tybe screen is busy: wait, or Reset") }
            composing = true
            progress = nil
        case "hostInputSource":
            guard let host = emulator?.dongle.host else { throw StudioProtocolError("a real host's input source is set on the host") }
            let name = try action.string("source", maximumLength: 16)
            guard let source = TybeHost.InputSource(rawValue: name) else { throw StudioProtocolError("\"source\" must be english or korean") }
            await { @SimulationActor in host.inputSource = source }()
            await refreshHost()
        case "hostClear":
            guard let host = emulator?.dongle.host else { throw StudioProtocolError("only the simulator's host can be cleared") }
            await { @SimulationActor in host.clear() }()
            await refreshHost()
        default:
            throw action.unknown
        }
    }

    // MARK: Helpers

    /// Queues key events (each a frame) for the key sender: the action returns at once, so
    /// Reset and the mode picker are never queued behind a reconnection.
    private func queueKeys(_ frames: [[KeyStroke]]) {
        guard !frames.isEmpty else { return }
        guard pendingKeys.count + frames.count <= Self.pendingKeyLimit else {
            model.apply(.problem("not sent: \(frames.count) key event(s); \(pendingKeys.count) wait for the bridge already"))
            return
        }
        pendingKeys += frames
        guard keySender == nil else { return }
        keySender = Task { [weak self] in
            await self?.sendKeys()
            self?.keySender = nil
        }
    }

    /// Sends the queued key events in order, each as one frame. A failure is logged (§3.5:
    /// surfaced, not a crash) and the keys typed meanwhile are dropped with a word: they were
    /// typed for a link that failed, and each would otherwise wait for a reconnection of its own.
    private func sendKeys() async {
        while !pendingKeys.isEmpty, !Task.isCancelled {
            let strokes = pendingKeys.removeFirst()
            model.typed(strokes)
            do {
                try await client.send(strokes)
            } catch {
                model.apply(.problem(userFacingText(error)))
                if !pendingKeys.isEmpty {
                    model.apply(.problem("\(pendingKeys.count) key event(s) typed meanwhile were not sent"))
                    pendingKeys.removeAll()
                }
            }
        }
    }

    /// Drops the link, and the work and keys waiting for it.
    private func reset() async {
        work.cancel()
        keySender?.cancel()
        if !pendingKeys.isEmpty {
            model.apply(.problem("\(pendingKeys.count) key event(s) waiting were not sent: reset"))
            pendingKeys.removeAll()
        }
        await client.reset()
    }

    private func refreshHost() async {
        guard let host = emulator?.dongle.host else { return }
        let shown = Self.hostTextShown
        let state = await { @SimulationActor in
            HostState(text: String(host.text.suffix(shown)), inputSource: host.inputSource.rawValue, keystrokes: host.keystrokeCount)
        }()
        if self.host != state { self.host = state }
    }

    /// The keys of a browser key event: `key` is the event's `key` (a character, or a name such
    /// as `Enter`), with `ctrl`, `alt`, `shift` and `meta` (⌘) as sent. Nil: no key the bridge has.
    static func keystrokes(for action: StudioAction) throws(StudioProtocolError) -> [KeyStroke]? {
        let key = try action.string("key", maximumLength: 32)
        var modifiers: HIDModifiers = []
        func on(_ name: String) -> Bool { if case .bool(true)? = action.arguments[name] { true } else { false } }
        if on("ctrl") { modifiers.insert(.leftCtrl) }
        if on("alt") { modifiers.insert(.leftAlt) }
        if on("meta") { modifiers.insert(.leftGUI) }
        if let named = namedKeys[key] {
            if on("shift") { modifiers.insert(.leftShift) }
            return [KeyStroke(named, modifiers)]
        }
        guard key.count == 1, let character = key.first else { return nil }
        if let stroke = AsciiKeymap.keystroke(for: character) {
            // The character already says whether Shift was down (`A`, `!`).
            return [KeyStroke(stroke.key, stroke.modifiers.union(modifiers))]
        }
        // A jamo or syllable typed at once: its run, as one frame, with no shortcut modifiers.
        guard modifiers.isEmpty else { return nil }
        return TybePlanner.keystrokes(for: character)
    }

    /// The browser's names of the keys that are not characters (§2.2's toolbar among them).
    static let namedKeys: [String: HIDKey] = [
        "Enter": .enter, "Backspace": .backspace, "Tab": .tab, "Escape": .escape, "Delete": .delete,
        "ArrowUp": .arrowUp, "ArrowDown": .arrowDown, "ArrowLeft": .arrowLeft, "ArrowRight": .arrowRight,
        "Home": .home, "End": .end, "PageUp": .pageUp, "PageDown": .pageDown, "Insert": .insert, "CapsLock": .capsLock,
        "F1": .f1, "F2": .f2, "F3": .f3, "F4": .f4, "F5": .f5, "F6": .f6, "F7": .f7, "F8": .f8, "F9": .f9, "F10": .f10,
        "F11": .f11, "F12": .f12,
    ]

    static func colour(_ link: TybeLinkState) -> String {
        switch link {
        case .idle: "grey"
        case .connecting: "yellow"
        case .connected: "green"
        case .failed: "red"
        }
    }

    static func colour(_ bridge: TybeBridgePill) -> String {
        switch bridge {
        case .unknown: "grey"
        case .ok: "green"
        case .error: "red"
        }
    }

    static func colour(_ dongle: TybeDonglePill) -> String {
        switch dongle {
        case .unknown: "grey"
        case .linked: "green"
        case .noAck: "red"
        }
    }

}
#endif
