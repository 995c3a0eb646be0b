import Foundation
import Observation
import TetherCore

/// One line of the Kiro screen's event log.
public struct KiroLogEntry: Sendable, Hashable, Identifiable {
    /// A running number.
    public let id: Int
    /// When it happened.
    public let time: Date
    /// What happened.
    public let event: KiroSessionEvent
}

/// The Kiro app's screen state for SwiftUI: the link's phase, the event log, the selected task,
/// the battery warning, the focus sessions closed since ``start()`` and their time, and send
/// failures as values, all following a ``KiroSession`` (and, when given, its
/// `ConnectionStateMachine`).
///
/// The log keeps at most ``logLimit`` entries, newest first; at most ``logLimit`` focus
/// sessions are kept.
@Observable
@MainActor
public final class KiroViewModel {
    /// The link's phase (idle when no connection was given).
    public private(set) var phase: BLEPhase = .idle
    /// The event log, newest first.
    public private(set) var log: [KiroLogEntry] = []
    /// The task the device has selected.
    public private(set) var selectedTaskId: String?
    /// The battery level of the last LowBattery event.
    public private(set) var lowBatteryLevel: UInt8?
    /// Focus sessions closed since ``start()``, oldest first.
    public private(set) var focusSessions: [FocusSession] = []
    /// The last command that could not be sent, and why.
    public private(set) var sendFailure: String?
    /// Why the last ``sync()`` failed.
    public private(set) var syncError: String?
    /// How many entries the log keeps.
    public let logLimit: Int

    /// The time spent in the closed focus sessions.
    public var focusTime: TimeInterval { focusSessions.compactMap(\.duration).reduce(0, +) }

    private let session: KiroSession
    private let connection: ConnectionStateMachine?
    private let now: @Sendable () -> Date
    @ObservationIgnored private nonisolated let tasks = TaskBag()
    @ObservationIgnored private var nextID = 0

    /// Creates a view model; call ``start()`` to follow the session.
    public init(session: KiroSession, connection: ConnectionStateMachine? = nil, logLimit: Int = 200,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.session = session
        self.connection = connection
        self.logLimit = max(1, logLimit)
        self.now = now
    }

    /// Follows the session (and the connection's phase) until ``stop()``; the streams are
    /// subscribed, and the current selection and phase read, before it returns. Idempotent.
    public func start() async {
        guard tasks.isEmpty else { return }
        // Subscribed before the current values are read: a later change is an event.
        let events = await session.events()
        let linkEvents = await connection?.events()
        let selected = await session.selectedTaskId
        let current = await connection?.phase
        // Another start() may have finished while this one waited.
        guard tasks.isEmpty else { return }
        selectedTaskId = selected
        if let current { phase = current }
        tasks.add(Task { [weak self] in
            for await event in events { await self?.apply(event) }
        })
        if let linkEvents {
            tasks.add(Task { [weak self] in
                for await event in linkEvents {
                    if case .phaseChanged(let phase) = event { self?.phase = phase }
                }
            })
        }
    }

    /// Stops following.
    public func stop() {
        tasks.cancelAll()
    }

    // A screen that goes away without stop() leaves no task listening behind it.
    deinit {
        tasks.cancelAll()
    }

    /// Sends the time and today's DayPack again.
    public func sync() async {
        do {
            try await session.sync()
            syncError = nil
        } catch {
            syncError = (error as? LocalizedError)?.errorDescription ?? "\(error)"
        }
    }

    /// Empties the log.
    public func clearLog() { log.removeAll() }

    private func apply(_ event: KiroSessionEvent) async {
        log.insert(KiroLogEntry(id: nextID, time: now(), event: event), at: 0)
        nextID += 1
        if log.count > logLimit { log.removeLast(log.count - logLimit) }
        switch event {
        case .lowBattery(let level): lowBatteryLevel = level
        case .focusSessionClosed(let focus):
            focusSessions.append(focus)
            if focusSessions.count > logLimit { focusSessions.removeFirst(focusSessions.count - logLimit) }
        case .sendFailed(let type, let why): sendFailure = "\(type): \(why)"
        case .sent: sendFailure = nil
        case .received: break
        }
        selectedTaskId = await session.selectedTaskId
    }
}
