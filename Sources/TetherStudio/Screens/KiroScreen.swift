#if os(macOS) || os(Linux)
import Foundation
import Kiro
import KiroEmulator
import Observation
import TetherCore
import TetherSimulator

/// The Kiro app's screen: the desk companion's four E-ink pages as the device shows them (the
/// emulator's own panel on the simulator; on a real device the same renderer drawing the day
/// the app pushed), the day being pushed (edited as JSON and pushed), and the event log with
/// focus sessions and focus time. It follows a ``KiroViewModel`` on a ``KiroSession``.
@Observable
@MainActor
public final class KiroScreen: StudioScreen {
    public let device = "kiro"
    /// The view model of the current connection (nil before the first).
    public private(set) var model: KiroViewModel?
    /// The four pages as drawn now, and the one the panel shows (nil: not known).
    public private(set) var pages: [PageState] = []
    /// The page the panel shows (the simulator's), if known.
    public private(set) var shownPage: String?
    /// The day the app pushes, as pretty JSON.
    public private(set) var dayJSON = ""
    /// Why the last edit of the day was refused.
    public private(set) var dayError: String?
    /// Whether a connection is being made.
    public private(set) var connecting = false
    /// Why the last connection failed (nil once one worked).
    public private(set) var connectionError: String?

    /// A page of the panel.
    public struct PageState: Encodable, Sendable, Equatable {
        var name: String
        var title: String
        var lines: [String]
    }

    /// The longest day accepted, in characters of JSON.
    public static let dayLimit = 32 * 1024
    /// The panel's width in characters.
    public nonisolated static let panelWidth = 40

    @ObservationIgnored private let central: Central
    @ObservationIgnored private let dataSource: InMemoryKiroDataSource
    @ObservationIgnored private let focusStore: (any FocusSessionStore)?
    @ObservationIgnored private let emulator: KiroEmulator?
    @ObservationIgnored private let clock: any Clock<Duration>
    @ObservationIgnored private var session: KiroSession?
    @ObservationIgnored private var follower: Task<Void, Never>?
    @ObservationIgnored private var panelWatcher: Task<Void, Never>?
    @ObservationIgnored private var minuteTicker: Task<Void, Never>?
    @ObservationIgnored private let work = ScreenWork()

    /// A screen on `central` pushing `day`, keeping focus sessions in `focusStore`; `emulator`
    /// (the simulator's Kiro) shows its own panel and adds its buttons.
    public init(central: Central, day: DayPack, focusStore: (any FocusSessionStore)? = nil, emulator: KiroEmulator? = nil,
                clock: any Clock<Duration> = ContinuousClock()) {
        self.central = central
        self.dataSource = InMemoryKiroDataSource(day: day)
        self.focusStore = focusStore
        self.emulator = emulator
        self.clock = clock
        self.dayJSON = Self.json(day)
    }

    public func start() async {
        // The watchers are in place before the first await: a stop() while this draws ends them.
        if let emulator, panelWatcher == nil {
            // The simulator's panel changes with no event of ours (its buttons, its mode): the
            // emulator says when; the minute its clock shows turns by itself.
            panelWatcher = Task { [weak self] in
                let changes = await { @SimulationActor in emulator.changes() }()
                // What changed before the subscription.
                await self?.redraw()
                for await _ in changes {
                    guard let self else { return }
                    await self.redraw()
                    // The device clock may have been set: the next minute is counted from now.
                    if self.minuteTicker != nil {
                        self.minuteTicker?.cancel()
                        self.minuteTicker = self.tickMinutes(of: emulator)
                    }
                }
            }
            minuteTicker = tickMinutes(of: emulator)
        }
        await redraw()
    }

    /// Redraws the panel each time the minute of `emulator`'s clock turns.
    private func tickMinutes(of emulator: KiroEmulator) -> Task<Void, Never> {
        let clock = self.clock
        return Task { [weak self] in
            while !Task.isCancelled {
                let second = await { @SimulationActor in emulator.unixTime % 60 }()
                do { try await clock.sleep(for: .seconds(60 - Int(second))) } catch { return }
                guard let self else { return }
                await self.redraw()
            }
        }
    }

    /// Stops following the device and disconnects it.
    public func stop() async {
        panelWatcher?.cancel()
        panelWatcher = nil
        minuteTicker?.cancel()
        minuteTicker = nil
        work.cancel()
        follower?.cancel()
        model?.stop()
        await session?.stop()
        await work.finish()
    }

    // MARK: State

    /// A line of the event log.
    public struct LogState: Encodable, Sendable, Equatable {
        var id: Int
        var time: Date
        var text: String
    }

    /// A focus session.
    public struct FocusState: Encodable, Sendable, Equatable {
        var taskId: String
        var title: String?
        var start: Date
        var end: Date?
        var outcome: String
        var seconds: Double?
    }

    /// What the page draws.
    public struct State: Encodable, Sendable {
        var phase: String
        var dot: String
        var connecting: Bool
        var error: String?
        var syncError: String?
        var sendFailure: String?
        var lowBattery: Int?
        var selectedTaskId: String?
        var pages: [PageState]
        var shownPage: String?
        var day: String
        var dayError: String?
        var log: [LogState]
        var focusSessions: [FocusState]
        /// Focus time as §9 counts it: periods of 30 minutes or more without the phone. The
        /// studio knows nothing of the phone's screen, so a session counts whole when it lasted
        /// 30 minutes.
        var focusSeconds: Double
        /// Every session's time, counted or not.
        var sessionSeconds: Double
        var simulated: Bool
    }

    public func state() -> State {
        let phase = model?.phase ?? .idle
        let titles = Dictionary((try? JSONDecoder().decode(DayPack.self, from: Data(dayJSON.utf8)))?.topTasks.map { ($0.taskId, $0.title) } ?? [],
                                uniquingKeysWith: { first, _ in first })
        return State(
            phase: phase.name,
            dot: StudioDot(phase).rawValue,
            connecting: connecting,
            error: connectionError,
            syncError: model?.syncError,
            sendFailure: model?.sendFailure,
            lowBattery: model?.lowBatteryLevel.map(Int.init),
            selectedTaskId: model?.selectedTaskId,
            pages: pages,
            shownPage: shownPage,
            day: dayJSON,
            dayError: dayError,
            log: (model?.log ?? []).map { LogState(id: $0.id, time: $0.time, text: Self.describe($0.event, titles: titles)) },
            focusSessions: (model?.focusSessions ?? []).map {
                FocusState(taskId: $0.taskId, title: titles[$0.taskId], start: $0.start, end: $0.end, outcome: $0.outcome.rawValue, seconds: $0.duration)
            },
            focusSeconds: (model?.focusSessions ?? []).reduce(0) { total, session in
                guard let end = session.end else { return total }
                return total + FocusTimeCalculator().focusTime(sessionStart: session.start, sessionEnd: end, activity: [])
            },
            sessionSeconds: model?.focusTime ?? 0,
            simulated: emulator != nil)
    }

    // MARK: Actions

    public func perform(_ action: StudioAction) async throws(StudioProtocolError) {
        switch action.name {
        case "connect":
            guard !connecting else { return }
            // In the background: Disconnect must not wait behind the scan (with its retries).
            let started = work.run({ [weak self] in await self?.connect() }, finally: { [weak self] in
                // Also when a Disconnect cancelled it before it began.
                self?.connecting = false
            })
            guard started else { throw StudioProtocolError("the Kiro screen is busy: wait, or Disconnect") }
            connecting = true
            connectionError = nil
        case "disconnect":
            work.cancel()
            await session?.stop()
        case "push":
            let text = try action.string("day", maximumLength: Self.dayLimit)
            let day: DayPack
            do {
                day = try JSONDecoder().decode(DayPack.self, from: Data(text.utf8))
            } catch {
                dayError = "not a day: \(Self.explain(error))"
                throw StudioProtocolError(dayError!)
            }
            dayError = nil
            await dataSource.replaceDay(day)
            dayJSON = Self.json(day)
            if let model, model.phase.isConnected { await model.sync() }
            await redraw()
        case "sync":
            guard let model, model.phase.isConnected else { throw StudioProtocolError("connect to the Kiro first") }
            await model.sync()
        case "clearLog":
            model?.clearLog()
        case "simulate":
            guard let emulator else { throw StudioProtocolError("a real Kiro is used by hand") }
            let button = try action.string("button", maximumLength: 16)
            let next: Int? = if case .number(let value)? = action.arguments["index"], value.rounded() == value, (0...63).contains(value) { Int(value) } else { nil }
            let done: Bool = await { @SimulationActor in
                switch button {
                case "select": emulator.selectTask(at: next ?? ((emulator.selectedIndex + 1) % max(1, emulator.dayPack?.topTasks.count ?? 1)))
                case "wheel": emulator.pressWheel()
                case "enter": emulator.enterTask()
                case "complete": emulator.completeTask()
                case "skip": emulator.skipTask()
                case "sleep": emulator.sleep()
                case "wake": emulator.wake()
                case "lowBattery": emulator.lowBattery(15)
                case "refresh": emulator.requestRefresh()
                default: return false
                }
                return true
            }()
            guard done else {
                throw StudioProtocolError("\"button\" must be select, wheel, enter, complete, skip, sleep, wake, lowBattery or refresh")
            }
            await redraw()
        case "showPage":
            guard let emulator else { throw StudioProtocolError("a real Kiro's page is turned on the device") }
            let name = try action.string("page", maximumLength: 16)
            guard let page = KiroEmulator.Page(rawValue: name) else { throw StudioProtocolError("\"page\" must be startOfDay, overview, taskIn or settlement") }
            await { @SimulationActor in emulator.show(page) }()
            await redraw()
        default:
            throw action.unknown
        }
    }

    /// A page as SVG, like the panel: `page-<name>.svg`.
    public func export(_ name: String) async throws(StudioProtocolError) -> StudioExport {
        guard name.hasPrefix("page-"), name.hasSuffix(".svg"), let page = KiroEmulator.Page(rawValue: String(name.dropFirst(5).dropLast(4))) else {
            throw StudioProtocolError("Kiro exports page-<startOfDay|overview|taskIn|settlement>.svg")
        }
        let svg: String
        if let emulator {
            svg = await { @SimulationActor in emulator.renderSVG(page, width: Self.panelWidth) }()
        } else {
            let (day, task, selected, status) = await clientView()
            svg = KiroPageRenderer(width: Self.panelWidth).svg(page, day: day, task: task, selected: selected, status: status)
        }
        return StudioExport(fileName: "kiro-\(page.rawValue).svg", contentType: "image/svg+xml", body: Data(svg.utf8))
    }

    // MARK: Connecting

    private func connect() async {
        do {
            let found = try await KiroConnector.find(on: central, clock: clock)
            try Task.checkCancellation()
            follower?.cancel()
            model?.stop()
            await session?.stop()
            let connection = await central.connection(to: found.id, configuration: KiroConnector.configuration)
            let session = KiroSession(transport: connection, dataSource: dataSource, clock: clock, focusStore: focusStore)
            let model = KiroViewModel(session: session, connection: connection)
            self.session = session
            self.model = model
            await model.start()
            // The panel changes when the device reports (and on a real one, only then).
            let events = await session.events()
            follower = Task { [weak self] in
                for await _ in events { await self?.redraw() }
            }
            try Task.checkCancellation()
            try await session.start()
            // A Disconnect that came while the session started, before it could be stopped.
            if Task.isCancelled { await session.stop() }
            await redraw()
        } catch is CancellationError {
            return
        } catch {
            connectionError = userFacingText(error)
        }
    }

    // MARK: Drawing

    /// Draws the four pages: the simulator's panel from its own data, a real device's from
    /// the day pushed (and the selection it reported).
    private func redraw() async {
        let width = Self.panelWidth
        let drawn: (pages: [PageState], shown: String?)
        if let emulator {
            drawn = await { @SimulationActor in
                let renderer = KiroPageRenderer(width: width)
                return (KiroEmulator.Page.allCases.map { page in
                    PageState(name: page.rawValue, title: KiroPageRenderer.title(page),
                              lines: renderer.lines(page, day: emulator.dayPack, task: emulator.taskInPage, selected: emulator.selectedIndex, status: emulator.status))
                }, emulator.isAsleep ? nil : emulator.page.rawValue)
            }()
        } else {
            let (day, task, selected, status) = await clientView()
            let renderer = KiroPageRenderer(width: width)
            drawn = (KiroEmulator.Page.allCases.map { page in
                PageState(name: page.rawValue, title: KiroPageRenderer.title(page),
                          lines: renderer.lines(page, day: day, task: task, selected: selected, status: status))
            }, nil)
        }
        if pages != drawn.pages { pages = drawn.pages }
        if shownPage != drawn.shown { shownPage = drawn.shown }
        // The day as the app holds it now: the device completes tasks in it.
        let day = Self.json(await dataSource.dayPack())
        if dayJSON != day { dayJSON = day }
    }

    /// What a real device shows, as far as the app knows: the day it pushed and the selection
    /// the device reported.
    private func clientView() async -> (DayPack, TaskInPage?, Int, KiroPageRenderer.Status) {
        let day = await dataSource.dayPack()
        let selectedID = await dataSource.selectedTaskId
        let selected = day.topTasks.firstIndex { $0.taskId == selectedID } ?? 0
        var task: TaskInPage?
        if let selectedID { task = await dataSource.taskInPage(for: selectedID) }
        let status = KiroPageRenderer.Status(unixTime: UInt32(clamping: Int64(Date().timeIntervalSince1970)),
                                             batteryLevel: model?.lowBatteryLevel ?? 100, mode: day.deviceMode)
        return (day, task, selected, status)
    }

    // MARK: Helpers

    static func json(_ day: DayPack) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(day)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    static func describe(_ event: KiroSessionEvent, titles: [String: String]) -> String {
        switch event {
        case .received(let event):
            let task = event.id.map { id in titles[id].map { "\"\($0)\"" } ?? id }
            return "← \(event.type)" + (task.map { " \($0)" } ?? "") + (event.batteryLevel.map { " battery \($0)%" } ?? "")
        case .sent(let type): return "→ \(type)"
        case .lowBattery(let level): return "low battery: \(level)%"
        case .focusSessionClosed(let focus):
            return "focus on \(titles[focus.taskId].map { "\"\($0)\"" } ?? focus.taskId): \(focus.outcome.rawValue)"
                + (focus.duration.map { String(format: ", %.0f s", $0) } ?? "")
        case .sendFailed(let type, let why): return "✗ \(type) not sent: \(why)"
        }
    }

    static func explain(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .keyNotFound(let key, _)?: "\"\(key.stringValue)\" is missing"
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?:
            "\"\(context.codingPath.map(\.stringValue).joined(separator: "."))\" has the wrong type"
        case .dataCorrupted(let context)?:
            context.codingPath.isEmpty ? "not JSON" : "\"\(context.codingPath.map(\.stringValue).joined(separator: "."))\": \(context.debugDescription)"
        default: (error as? LocalizedError)?.errorDescription ?? "\(error)"
        }
    }

}

#endif
