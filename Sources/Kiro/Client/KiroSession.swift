import Foundation
import Logging
import TetherCore

/// What the app provides so the session can answer the device (§5 "App Response").
public protocol KiroDataSource: Sendable {
    /// Today's DayPack, as it stands now.
    func dayPack() async -> DayPack
    /// The detail page for a task, or nil if the id is not a task (for example an event).
    func taskInPage(for taskId: String) async -> TaskInPage?
    /// The user finished a task on the device: update app state (and points).
    func taskEnded(_ taskId: String, outcome: FocusSession.Outcome) async
    /// The user moved the device's selection.
    func selectionChanged(to taskId: String) async
}

/// What the session tells the UI.
public enum KiroSessionEvent: Sendable, Hashable {
    /// An event arrived from the device.
    case received(KiroEvent)
    /// The session sent a command in response (or to sync).
    case sent(BLEDataType)
    /// The battery is low: show the user a notification.
    case lowBattery(level: UInt8)
    /// A focus session ended (EnterTaskIn → CompleteTask/SkipTask).
    case focusSessionClosed(FocusSession)
    /// A command could not be sent after its retries.
    case sendFailed(BLEDataType, String)
}

/// Keeps a Kiro in sync and answers its events through the app's ``KiroDataSource``.
///
/// EnterTaskIn / WheelSelect on a task → TaskInPage; RequestRefresh → DayPack; DeviceWake →
/// Time and DayPack; CompleteTask / SkipTask → the data source, and the focus session closes;
/// SelectedTaskChanged → the data source; LowBattery → a ``KiroSessionEvent/lowBattery(level:)``
/// alert; DeviceSleep and ViewEventDetail need nothing. Every event is also published on
/// ``events()``.
public actor KiroSession {
    private let transport: any DeviceTransport
    private let dataSource: any KiroDataSource
    private let clock: any Clock<Duration>
    private let now: @Sendable () -> Date
    private let timeZone: TimeZone
    private let checksum: Bool
    private let focusStore: (any FocusSessionStore)?
    private let decoder: KiroEventDecoder
    private let logger: Logger
    private var tracker = FocusTracker()
    private var broadcaster = Broadcaster<KiroSessionEvent>(bufferSize: 1024)
    private var listener: Task<Void, Never>?
    /// The task the device has selected, as last reported.
    public private(set) var selectedTaskId: String?
    /// Events that arrived but could not be decoded.
    public private(set) var discardedEvents = 0

    /// Creates a session over `transport` (a Kiro connection or a mock).
    public init(
        transport: any DeviceTransport,
        dataSource: any KiroDataSource,
        clock: any Clock<Duration> = ContinuousClock(),
        now: @escaping @Sendable () -> Date = { Date() },
        timeZone: TimeZone = .current,
        checksum: Bool = false,
        focusStore: (any FocusSessionStore)? = nil,
        logger: Logger = Logger(label: "tether.kiro")
    ) {
        self.transport = transport
        self.dataSource = dataSource
        self.clock = clock
        self.now = now
        self.timeZone = timeZone
        self.checksum = checksum
        self.focusStore = focusStore
        self.decoder = KiroEventDecoder()
        self.logger = logger
    }

    /// Events for the UI.
    public func events() -> AsyncStream<KiroSessionEvent> { broadcaster.subscribe() }

    /// Connects, starts listening, syncs the time and sends today's DayPack.
    public func start() async throws {
        // Listen before the first write so no event is missed.
        let notifications = await transport.notifications(for: KiroBLEConstants.notifyCharacteristic)
        listener?.cancel()
        listener = Task { [weak self] in
            for await packet in notifications { await self?.received(packet) }
        }
        try await transport.connect()
        try await sync()
    }

    /// Sends the time and the DayPack (after a reconnection, or whenever the app's data changed).
    public func sync() async throws {
        try await send(.time(TimeSync(date: now(), timeZone: timeZone)))
        try await send(.dayPack(await dataSource.dayPack()))
    }

    /// Stops listening, disconnects and ends the ``events()`` streams.
    public func stop() async {
        listener?.cancel()
        listener = nil
        await transport.disconnect()
        broadcaster.finish()
    }

    /// Sends one command, retrying failed writes per §8.3 (500 ms, then 1 s); a write that the
    /// app's own disconnect cancelled (`BLEError.cancelled`) is not retried.
    public func send(_ command: KiroCommand) async throws {
        let packet = try command.packet(checksum: checksum)
        var delays = KiroBLEConstants.writeRetryDelays[...]
        while true {
            do {
                // The connection splits packets longer than one write into consecutive writes
                // with response; the device reassembles them by the header length.
                try await transport.write(packet, to: KiroBLEConstants.writeCharacteristic, type: .withResponse)
                broadcaster.yield(.sent(command.type), logger: logger)
                return
            } catch {
                // The app's own disconnect (or the caller giving up) is not a failed write.
                if Task.isCancelled || error is CancellationError || error as? BLEError == .cancelled { throw error }
                guard let delay = delays.popFirst() else {
                    broadcaster.yield(.sendFailed(command.type, "\(error)"), logger: logger)
                    throw error
                }
                logger.warning("Write of \(command.type) failed (\(error)); retrying in \(delay)")
                try await clock.sleep(for: delay)
            }
        }
    }

    private func received(_ packet: Data) async {
        var events: [KiroEvent] = []
        for result in decoder.decodeAll(packet) {
            switch result {
            case .success(let event): events.append(event)
            // Types from newer firmware are ignored by design (§8.2); a malformed one is news.
            case .failure(let error) where error.isExpected: logger.debug("Ignoring a Kiro notification: \(error)")
            case .failure(let error): logger.warning("Discarding a Kiro notification: \(error)")
            }
        }
        if events.isEmpty { discardedEvents += 1 }
        for event in events { await handle(event) }
    }

    private func handle(_ event: KiroEvent) async {
        broadcaster.yield(.received(event), logger: logger)
        do {
            switch event.type {
            case .enterTaskIn:
                guard let id = event.id else { return }
                _ = tracker.taskEntered(id, at: date(event.timestamp))
                if let page = await dataSource.taskInPage(for: id) { try await send(.taskInPage(page)) }
            case .wheelSelect:
                // A task gets its detail page; an event's detail has no command in v1.1.
                guard let id = event.id, let page = await dataSource.taskInPage(for: id) else { return }
                try await send(.taskInPage(page))
            case .completeTask, .skipTask:
                guard let id = event.id else { return }
                let outcome: FocusSession.Outcome = event.type == .completeTask ? .completed : .skipped
                await dataSource.taskEnded(id, outcome: outcome)
                if let session = tracker.taskEnded(id, at: date(event.timestamp), outcome: outcome) {
                    try? await focusStore?.save(session)
                    broadcaster.yield(.focusSessionClosed(session), logger: logger)
                }
            case .selectedTaskChanged:
                guard let id = event.id else { return }
                selectedTaskId = id
                await dataSource.selectionChanged(to: id)
            case .requestRefresh:
                try await send(.dayPack(await dataSource.dayPack()))
            case .deviceWake:
                try await sync()
            case .lowBattery:
                broadcaster.yield(.lowBattery(level: event.batteryLevel ?? 0), logger: logger)
            case .deviceSleep, .viewEventDetail:
                break
            }
        } catch {
            logger.error("Could not answer \(event.type.rawValue): \(error)")
        }
    }

    /// The event's device timestamp, or the phone's time when the legacy form carried none.
    private func date(_ timestamp: UInt32?) -> Date {
        timestamp.map { Date(timeIntervalSince1970: TimeInterval($0)) } ?? now()
    }
}
