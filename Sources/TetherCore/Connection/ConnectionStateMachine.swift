import Foundation
import Logging

/// One peripheral's connection: explicit phases, timeouts, a FIFO write queue, reconnection
/// and per-characteristic notification streams, over any ``BLEDriver``.
///
/// Create one with ``Central/connection(to:configuration:)``. All time comes from the clock the
/// ``Central`` was given, so tests drive timeouts and backoff deterministically.
public actor ConnectionStateMachine {
    /// The peripheral this machine connects to.
    public nonisolated let peripheral: PeripheralID
    /// The configuration the current (or next) connection uses; see ``adopt(_:)``.
    public private(set) var configuration: ConnectionConfiguration
    /// A configuration asked for while a link was up or being brought up: the next
    /// `connect()` (or `restore()`) starts with it.
    public private(set) var pendingConfiguration: ConnectionConfiguration?

    let driver: any BLEDriver
    let clock: any Clock<Duration>
    let logger: Logger

    // MARK: Phase and its resources

    /// A phase with the resources it owns; `transition(to:)` releases what the next phase does
    /// not take over.
    enum PhaseState {
        case idle
        case waitingForBluetooth(timer: Task<Void, Never>)
        case connecting(timer: Task<Void, Never>)
        case discoveringServices(timer: Task<Void, Never>)
        case discoveringCharacteristics(timer: Task<Void, Never>, pending: Set<BluetoothUUID>)
        case subscribingToNotifications(timer: Task<Void, Never>, pending: Set<CharacteristicPath>)
        case discoveryComplete
        case connected
        case autoReconnecting(attempt: Int, osManaged: Bool, timer: Task<Void, Never>?)
        case restoringState
        case disconnecting(timer: Task<Void, Never>, waiters: [CheckedContinuation<Void, Never>])

        var timer: Task<Void, Never>? {
            switch self {
            case .waitingForBluetooth(let t), .connecting(let t), .discoveringServices(let t),
                 .discoveringCharacteristics(let t, _), .subscribingToNotifications(let t, _),
                 .disconnecting(let t, _):
                return t
            case .autoReconnecting(_, _, let t):
                return t
            case .idle, .discoveryComplete, .connected, .restoringState:
                return nil
            }
        }
    }

    /// Why the current connection attempt was started; decides what a failure does.
    enum AttemptKind: Equatable {
        /// `connect()` was called: a failure goes idle and throws to the caller.
        case initial
        /// Reconnecting after a drop: a failure schedules the next attempt.
        case reconnect(attempt: Int)
        /// The services of a ready link changed: rediscovering on the same link. A failure is
        /// the link's loss (a drop, then the reconnect policy).
        case refresh
    }

    var state: PhaseState = .idle
    var attemptKind: AttemptKind = .initial
    /// Bumped whenever a link attempt starts or ends, so late timers and late events from an
    /// old link cannot act on a new one.
    var generation = 0
    var centralState: CentralState
    /// The user wants to be connected (set by `connect()`, cleared by `disconnect()`); lets a
    /// Bluetooth power cycle bring the connection back.
    var wantsConnection = false
    var connectWaiters: [CheckedContinuation<Void, Error>] = []
    var characteristics: [CharacteristicPath: GATTCharacteristic] = [:]
    var services: [GATTService] = []
    /// The services a refresh (``AttemptKind/refresh``) found invalidated: their notifying
    /// characteristics are subscribed again.
    var invalidatedServices: Set<BluetoothUUID> = []
    /// The peripheral's services changed during this discovery: a required service or
    /// characteristic missing now may be on its way back (removed, then added again), so
    /// discovery waits for the next change, within its timeout, rather than failing.
    var servicesChanging = false
    /// What such a discovery is waiting for: the error if its timeout ends the wait.
    var missingAfterChange: BLEError?
    /// Reads, writes and RSSI reads asked for during a refresh, resumed when it ends.
    var refreshWaiters: [CheckedContinuation<Void, Error>] = []
    /// Discovery requests whose answers have not come yet (drivers answer a link's requests in
    /// order, as its ATT bearer does).
    var servicesRequested = 0
    var characteristicsRequested: [BluetoothUUID: Int] = [:]
    /// Answers still to come for the requests of a discovery that started over: they describe
    /// the database before the change, so they are dropped.
    var staleServiceAnswers = 0
    var staleCharacteristicAnswers: [BluetoothUUID: Int] = [:]
    /// Tells a discovery's timeout apart from one of an earlier discovery on the same link (a
    /// refresh keeps the link's generation).
    var discoveryRound = 0
    var everConnected = false
    /// Retries of the first connection so far (``ConnectionConfiguration/firstConnectionRetry``).
    var firstConnectionRetries = 0
    /// Set by ``linkLost(reason:)`` until the driver confirms the disconnection.
    var declaredLost: BLEError?
    /// Set when a failed attempt cancelled its link (or its connection request), until the
    /// driver confirms it is gone (its disconnection event) or ``teardownBound`` passes: a new
    /// attempt waits for it, so that late event cannot end the new link. The value tells its
    /// bound's timer apart from a later one's.
    var teardownPending: Int?
    var teardownTimer: Task<Void, Never>?
    var teardownCount = 0
    /// An attempt in `.connecting` whose driver connect waits for ``teardownPending``.
    var connectDeferred = false
    /// How long a new attempt waits for a cancelled link's disconnection event.
    static let teardownBound: Duration = .seconds(2)
    /// The error that ended the last attempt or link, if any.
    public internal(set) var lastError: BLEError?

    // MARK: Operation queue (writes, reads)

    var operationInProgress = false
    var operationWaiters: [CheckedContinuation<Void, Never>] = []
    var pendingRequest: PendingRequest?
    var flowControlWaiters: [CheckedContinuation<Void, Error>] = []
    var pendingRSSI: [CheckedContinuation<Int, Error>] = []

    /// The one outstanding ATT request (writes and reads are serialized).
    struct PendingRequest {
        enum Kind { case write, read }
        let kind: Kind
        let path: CharacteristicPath
        let token: Int
        let continuation: CheckedContinuation<Data, Error>
        let timer: Task<Void, Never>
    }
    var nextToken = 0
    /// Counts readiness events so a wait cannot miss one that arrived during the driver query.
    var flowControlEpoch = 0
    /// Driver commands issued from synchronous handlers run in order through this queue.
    let commands: AsyncStream<@Sendable () async -> Void>.Continuation

    // MARK: Observers

    var notificationBroadcasters: [CharacteristicPath: Broadcaster<Data>] = [:]
    var eventBroadcaster = Broadcaster<ConnectionEvent>(bufferSize: 256)
    var disconnectionHandler: (@Sendable (PeripheralID, BLEError?) -> Void)?
    var reconnectionHandler: (@Sendable (PeripheralID) -> Void)?
    var autoReconnectingHandler: (@Sendable (PeripheralID) -> Void)?
    var bluetoothStateChangeHandler: (@Sendable (CentralState) -> Void)?
    var bluetoothPoweredOnHandler: (@Sendable () -> Void)?

    init(
        peripheral: PeripheralID,
        configuration: ConnectionConfiguration,
        driver: any BLEDriver,
        clock: any Clock<Duration>,
        centralState: CentralState,
        logger: Logger
    ) {
        self.peripheral = peripheral
        self.configuration = configuration
        self.driver = driver
        self.clock = clock
        self.centralState = centralState
        var logger = logger
        logger[metadataKey: "peripheral"] = "\(peripheral)"
        self.logger = logger
        let (stream, continuation) = AsyncStream.makeStream(of: (@Sendable () async -> Void).self)
        self.commands = continuation
        Task {
            for await command in stream { await command() }
        }
    }

    deinit {
        commands.finish()
    }

    /// Queues a driver command behind the ones issued before it.
    func command(_ operation: @escaping @Sendable () async -> Void) {
        commands.yield(operation)
    }

    // MARK: Public state

    /// The current phase.
    public var phase: BLEPhase {
        switch state {
        case .idle: .idle
        case .waitingForBluetooth: .waitingForBluetooth
        case .connecting: .connecting(peripheral)
        case .discoveringServices: .discoveringServices(peripheral)
        case .discoveringCharacteristics: .discoveringCharacteristics(peripheral)
        case .subscribingToNotifications: .subscribingToNotifications(peripheral)
        case .discoveryComplete: .discoveryComplete(peripheral)
        case .connected: .connected(peripheral)
        case .autoReconnecting: .autoReconnecting(peripheral)
        case .restoringState: .restoringState(peripheral)
        case .disconnecting: .disconnecting(peripheral)
        }
    }

    /// True when reads, writes and notifications can flow.
    public var isConnected: Bool { phase.isConnected }

    /// True while a ready link is up: connected, or rediscovering its changed services
    /// (``ConnectionEvent/servicesChanged(_:)``), when reads and writes wait for it rather than
    /// fail.
    public var isLinkUp: Bool { isConnected || isRefreshing }

    /// A ready link is rediscovering its changed services (``ConnectionEvent/servicesChanged(_:)``).
    var isRefreshing: Bool {
        guard attemptKind == .refresh else { return false }
        switch state {
        case .discoveringServices, .discoveringCharacteristics, .subscribingToNotifications, .discoveryComplete: return true
        default: return false
        }
    }

    /// The services found at the last discovery.
    public var discoveredServices: [GATTService] { services }

    /// The characteristics found at the last discovery.
    public var discoveredCharacteristics: [GATTCharacteristic] {
        characteristics.values.sorted { ($0.path.service, $0.path.characteristic) < ($1.path.service, $1.path.characteristic) }
    }

    /// A stream of phase changes, connections, drops and failures. Subscribe before `connect()`
    /// to see every step.
    public func events() -> AsyncStream<ConnectionEvent> {
        eventBroadcaster.subscribe { [weak self] token in
            Task { await self?.removeEventSubscriber(token) }
        }
    }

    private func removeEventSubscriber(_ token: Int) { eventBroadcaster.remove(token) }

    // MARK: Handlers (the transport guide's hooks)

    /// Called when the link drops unexpectedly.
    public func setDisconnectionHandler(_ handler: @escaping @Sendable (PeripheralID, BLEError?) -> Void) {
        disconnectionHandler = handler
    }

    /// Called when an automatic reconnection has completed (notification streams keep flowing).
    public func setReconnectionHandler(_ handler: @escaping @Sendable (PeripheralID) -> Void) {
        reconnectionHandler = handler
    }

    /// Called when the link dropped and automatic reconnection begins.
    public func setAutoReconnectingHandler(_ handler: @escaping @Sendable (PeripheralID) -> Void) {
        autoReconnectingHandler = handler
    }

    /// Called on every Bluetooth state change.
    public func setBluetoothStateChangeHandler(_ handler: @escaping @Sendable (CentralState) -> Void) {
        bluetoothStateChangeHandler = handler
    }

    /// Called when Bluetooth powers on.
    public func setBluetoothPoweredOnHandler(_ handler: @escaping @Sendable () -> Void) {
        bluetoothPoweredOnHandler = handler
    }

    // MARK: Connect and disconnect

    /// Connects, discovers, subscribes, and returns once the connection is ready.
    ///
    /// Joins an attempt already under way. Throws ``BLEError`` (`connectionTimeout`,
    /// `serviceNotFound`, `characteristicNotFound`, `pairingFailed`, `bluetoothUnavailable`, ...).
    public func connect() async throws {
        switch state {
        case .connected:
            return
        case .idle:
            applyPendingConfiguration()
            wantsConnection = true
            attemptKind = .initial
            firstConnectionRetries = 0
            lastError = nil
            try await withCheckedThrowingContinuation { continuation in
                connectWaiters.append(continuation)
                startAttempt()
            }
        case .disconnecting:
            // Let the requested disconnection finish, then start afresh.
            await withCheckedContinuation { continuation in
                if case .disconnecting(let timer, let waiters) = state {
                    state = .disconnecting(timer: timer, waiters: waiters + [continuation])
                } else {
                    continuation.resume()
                }
            }
            try await connect()
        default:
            wantsConnection = true
            try await withCheckedThrowingContinuation { connectWaiters.append($0) }
        }
    }

    /// Disconnects and stops any reconnection. Pending operations fail with `cancelled`;
    /// notification streams end.
    public func disconnect() async {
        wantsConnection = false
        failWaiters(.cancelled)
        failOperations(.cancelled)
        // Ended now, not once the driver confirms: a stream armed meanwhile for a new
        // connection (connect() waits behind this disconnection) belongs to that one.
        finishNotificationStreams()
        switch state {
        case .idle:
            break
        case .disconnecting:
            await withCheckedContinuation { continuation in
                if case .disconnecting(let timer, let waiters) = state {
                    state = .disconnecting(timer: timer, waiters: waiters + [continuation])
                } else {
                    continuation.resume()
                }
            }
        case .waitingForBluetooth, .restoringState:
            transition(to: .idle)
        case .autoReconnecting, .connecting, .discoveringServices, .discoveringCharacteristics,
             .subscribingToNotifications, .discoveryComplete, .connected:
            generation += 1
            // The driver confirms with a disconnection event; don't wait forever if it never does.
            let timer = makeTimer(after: .seconds(2), .disconnect)
            let driver = self.driver, peripheral = self.peripheral
            await withCheckedContinuation { continuation in
                transition(to: .disconnecting(timer: timer, waiters: [continuation]))
                command { await driver.cancelConnection(peripheral) }
            }
        }
    }

    /// Declares the connected link dead although the driver still holds it: the device stopped
    /// answering (a client's liveness check failed, such as GripFit's `PING`).
    ///
    /// The connection goes on exactly as after an unexpected disconnection: pending operations
    /// fail with `reason`, ``ConnectionEvent/disconnected(_:_:)`` is emitted with it, the link
    /// is cancelled at the driver, and reconnection follows the ``ReconnectPolicy`` (a policy
    /// without attempts makes the drop final). Does nothing unless connected.
    public func linkLost(reason: BLEError) async {
        guard isConnected || isRefreshing else { return }
        logger.warning("Link declared lost", metadata: ["reason": "\(reason)"])
        generation += 1
        resetLink(reason)
        lastError = reason
        emit(.disconnected(peripheral, reason))
        disconnectionHandler?(peripheral, reason)
        // Reconnection starts once the driver confirms the old link is gone (or after 2 s
        // without a word), so its disconnection event does not meet the new attempt.
        declaredLost = reason
        let timer = makeTimer(after: .seconds(2), .disconnect)
        transition(to: .disconnecting(timer: timer, waiters: []))
        let driver = self.driver, peripheral = self.peripheral
        command { await driver.cancelConnection(peripheral) }
    }

    /// The driver confirmed a requested disconnection (or never did): idle, or on to the
    /// reconnection a ``linkLost(reason:)`` asked for.
    func finishDisconnecting() {
        generation += 1
        guard let reason = declaredLost else {
            resetLink(.cancelled)
            transition(to: .idle)
            return
        }
        declaredLost = nil
        guard wantsConnection else {
            transition(to: .idle)
            finishNotificationStreams()
            return
        }
        attemptKind = .initial
        continueReconnecting(error: reason, isReconnecting: false, firstDrop: true)
    }

    /// Takes `configuration` for this peripheral's connection: at once when idle, otherwise for
    /// the next `connect()` (a link that is up keeps the services, subscriptions and policy it was
    /// made with). ``Central/connection(to:configuration:)`` calls it when asked for an
    /// existing connection with another configuration.
    public func adopt(_ configuration: ConnectionConfiguration) {
        guard configuration != self.configuration else {
            pendingConfiguration = nil
            return
        }
        if case .idle = state {
            self.configuration = configuration
            pendingConfiguration = nil
            logger.notice("The connection takes a new configuration")
        } else {
            pendingConfiguration = configuration
            logger.notice("A new configuration was asked for while the link is in use: it applies from the next connect()")
        }
    }

    private func applyPendingConfiguration() {
        guard let pending = pendingConfiguration else { return }
        configuration = pending
        pendingConfiguration = nil
    }

    /// Starts reconnecting to a peripheral the OS handed back at relaunch (state restoration).
    public func restore() {
        guard case .idle = state else { return }
        applyPendingConfiguration()
        wantsConnection = true
        transition(to: .restoringState)
        if centralState == .poweredOn { beginReconnect(attempt: 1, delay: nil) }
    }

    // MARK: Attempts

    func startAttempt() {
        generation += 1
        switch centralState {
        case .poweredOn:
            beginConnecting()
        case .unknown, .resetting:
            transition(to: .waitingForBluetooth(timer: makeTimer(after: configuration.connectionTimeout, .connect)))
        case .poweredOff, .unauthorized, .unsupported:
            failAttempt(.bluetoothUnavailable(centralState))
        }
    }

    func beginConnecting() {
        // A wait for the last link's teardown does not eat into this attempt's time.
        let wait = teardownPending == nil ? Duration.zero : Self.teardownBound
        transition(to: .connecting(timer: makeTimer(after: configuration.connectionTimeout + wait, .connect)))
        if teardownPending != nil {
            logger.debug("Waiting for the last link's disconnection before connecting")
            connectDeferred = true
            return
        }
        issueConnect()
    }

    private func issueConnect() {
        let options = ConnectOptions(
            enableAutoReconnect: configuration.reconnectPolicy.useOSAutoReconnect && driver.supportsAutoReconnect)
        let driver = self.driver, peripheral = self.peripheral
        command { await driver.connect(peripheral, options: options) }
    }

    /// Ends the current attempt with `error`: an initial attempt goes idle and throws, a
    /// reconnection schedules the next try.
    /// `linkDown`: the failure is the driver's own report that the link (or the request) is
    /// gone, with no OS reconnection behind it: there is nothing to cancel.
    func failAttempt(_ error: BLEError, linkDown: Bool = false) {
        if attemptKind == .refresh {
            refreshFailed(error)
            return
        }
        logger.warning("Connection attempt failed", metadata: ["error": "\(error)"])
        let linkMayBeUp: Bool
        switch state {
        case .idle, .waitingForBluetooth, .restoringState: linkMayBeUp = false
        default: linkMayBeUp = !linkDown
        }
        generation += 1
        if linkMayBeUp {
            let driver = self.driver, peripheral = self.peripheral
            command { await driver.cancelConnection(peripheral) }
            // Drivers confirm a cancel with a disconnection event, which must not meet the next
            // attempt.
            awaitTeardown()
        }
        resetLink(error)
        if case .reconnect(let attempt) = attemptKind, wantsConnection,
           !isTerminal(error) {
            scheduleReconnect(after: attempt, lastError: error)
            return
        }
        if case .initial = attemptKind, wantsConnection, isLinkFailure(error),
           let delay = configuration.firstConnectionRetry.delay(beforeAttempt: firstConnectionRetries + 1) {
            firstConnectionRetries += 1
            logger.notice("Trying the first connection again", metadata: ["retry": "\(firstConnectionRetries)", "after": "\(delay)"])
            transition(to: .autoReconnecting(attempt: firstConnectionRetries, osManaged: false, timer: makeTimer(after: delay, .backoff)))
            emit(.reconnectScheduled(attempt: firstConnectionRetries, delay: delay))
            return
        }
        finishFailed(error)
    }

    /// The ready link could not be brought back after its services changed: to the client it
    /// is lost, as a dropped link is, and the reconnect policy (a fresh link, a fresh
    /// discovery) takes over.
    private func refreshFailed(_ error: BLEError) {
        logger.warning("Rediscovery after a services change failed; dropping the link", metadata: ["error": "\(error)"])
        // The link is still up at the driver: cancel it, and hold the next attempt until it is gone.
        let driver = self.driver, peripheral = self.peripheral
        command { await driver.cancelConnection(peripheral) }
        awaitTeardown()
        readyLinkDropped(error, isReconnecting: false)
    }

    /// Holds new attempts back until the link just cancelled is reported gone (or
    /// ``teardownBound`` passes).
    private func awaitTeardown() {
        teardownCount += 1
        let token = teardownCount
        teardownPending = token
        teardownTimer?.cancel()
        let clock = self.clock
        teardownTimer = Task { [weak self] in
            do { try await clock.sleep(for: Self.teardownBound) } catch { return }
            await self?.teardownEnded(token)
        }
    }

    /// The cancelled link is gone (or no longer waited for): an attempt held back goes ahead.
    func teardownEnded(_ token: Int) {
        guard teardownPending == token else { return }
        teardownPending = nil
        teardownTimer?.cancel()
        teardownTimer = nil
        if connectDeferred {
            connectDeferred = false
            issueConnect()
        }
    }

    /// Failures of the link itself, which another attempt may not meet.
    func isLinkFailure(_ error: BLEError) -> Bool {
        switch error {
        case .connectionTimeout, .connectionFailed, .disconnected: true
        default: false
        }
    }

    /// Errors that no amount of retrying fixes without the user.
    func isTerminal(_ error: BLEError) -> Bool {
        switch error {
        case .bluetoothUnavailable(.unauthorized), .bluetoothUnavailable(.unsupported): true
        default: false
        }
    }

    func finishFailed(_ error: BLEError) {
        lastError = error
        transition(to: .idle)
        failWaiters(error)
        emit(.failed(error))
        if case .reconnect = attemptKind {
            // Nobody will reconnect this link now: end the streams so consumers learn it.
            finishNotificationStreams()
        }
        wantsConnection = false
        attemptKind = .initial
    }

    func scheduleReconnect(after attempt: Int, lastError: BLEError?) {
        let next = attempt + 1
        guard let delay = configuration.reconnectPolicy.delay(beforeAttempt: next) else {
            logger.error("Reconnection gave up", metadata: ["attempts": "\(attempt)"])
            attemptKind = .reconnect(attempt: attempt)
            finishFailed(attempt == 0 ? (lastError ?? .disconnected(nil)) : .reconnectFailed(attempts: attempt))
            return
        }
        beginReconnect(attempt: next, delay: delay)
    }

    func beginReconnect(attempt: Int, delay: Duration?) {
        attemptKind = .reconnect(attempt: attempt)
        generation += 1
        if let delay {
            emit(.reconnectScheduled(attempt: attempt, delay: delay))
            logger.info("Reconnecting", metadata: ["attempt": "\(attempt)", "delay": "\(delay)"])
            transition(to: .autoReconnecting(attempt: attempt, osManaged: false, timer: makeTimer(after: delay, .backoff)))
        } else {
            transition(to: .autoReconnecting(attempt: attempt, osManaged: false, timer: nil))
            beginConnecting()
        }
    }

    func linkBecameReady() {
        let wasReconnect: Bool
        if case .reconnect = attemptKind { wasReconnect = true } else { wasReconnect = false }
        let wasRefresh = attemptKind == .refresh
        transition(to: .discoveryComplete)
        transition(to: .connected)
        attemptKind = .initial
        invalidatedServices = []
        servicesChanging = false
        missingAfterChange = nil
        lastError = nil
        let waiters = connectWaiters + refreshWaiters
        connectWaiters.removeAll()
        refreshWaiters.removeAll()
        for waiter in waiters { waiter.resume() }
        if wasRefresh {
            logger.info("Services discovered again after their change")
        } else if wasReconnect || everConnected {
            logger.info("Reconnected")
            emit(.reconnected(peripheral))
            reconnectionHandler?(peripheral)
        } else {
            logger.info("Connected")
            emit(.connected(peripheral))
        }
        everConnected = true
    }

    // MARK: Transitions

    func transition(to next: PhaseState) {
        let old = state
        if case .connecting = next {} else { connectDeferred = false }
        if let timer = old.timer, timer != next.timer { timer.cancel() }
        if case .disconnecting(_, let waiters) = old, !isDisconnecting(next) {
            for waiter in waiters { waiter.resume() }
        }
        state = next
        if case .idle = next { declaredLost = nil }
        switch next {
        case .discoveringServices, .discoveringCharacteristics, .subscribingToNotifications, .discoveryComplete:
            break
        default:
            // A refresh ends in one of the discovery phases or not at all.
            if attemptKind == .refresh { attemptKind = .initial }
        }
        let oldPhase = project(old), newPhase = phase
        if oldPhase != newPhase {
            logger.debug("Phase \(oldPhase.name) → \(newPhase.name)")
            emit(.phaseChanged(newPhase))
        }
    }

    private func isDisconnecting(_ state: PhaseState) -> Bool {
        if case .disconnecting = state { return true }
        return false
    }

    private func project(_ s: PhaseState) -> BLEPhase {
        let saved = state
        state = s
        defer { state = saved }
        return phase
    }

    func emit(_ event: ConnectionEvent) {
        eventBroadcaster.yield(event, logger: logger)
    }

    func failWaiters(_ error: BLEError) {
        let waiters = connectWaiters
        connectWaiters.removeAll()
        for waiter in waiters { waiter.resume(throwing: error) }
    }

    /// Drops what belonged to the link that just went away.
    func resetLink(_ error: BLEError = .disconnected(nil)) {
        characteristics.removeAll()
        services.removeAll()
        invalidatedServices = []
        servicesChanging = false
        missingAfterChange = nil
        servicesRequested = 0
        characteristicsRequested = [:]
        staleServiceAnswers = 0
        staleCharacteristicAnswers = [:]
        failOperations(error)
    }

    // MARK: Timers

    enum TimerKind { case connect, discovery, backoff, disconnect }

    func makeTimer(after delay: Duration, _ kind: TimerKind) -> Task<Void, Never> {
        let generation = self.generation
        if kind == .discovery { discoveryRound += 1 }
        let round = discoveryRound
        let clock = self.clock
        return Task { [weak self] in
            do { try await clock.sleep(for: delay) } catch { return }
            await self?.timerFired(kind, generation: generation, round: round)
        }
    }

    func timerFired(_ kind: TimerKind, generation: Int, round: Int) {
        guard generation == self.generation, kind != .discovery || round == discoveryRound else { return }
        switch (kind, state) {
        case (.connect, .waitingForBluetooth), (.connect, .connecting):
            logger.warning("Connection timed out")
            failAttempt(.connectionTimeout)
        case (.discovery, .discoveringServices), (.discovery, .discoveringCharacteristics),
             (.discovery, .subscribingToNotifications):
            logger.warning("Discovery timed out")
            failAttempt(missingAfterChange ?? .connectionTimeout)
        case (.backoff, .autoReconnecting):
            // A first connection tried again starts as a first attempt does: Bluetooth may
            // have gone away meanwhile.
            if case .initial = attemptKind { startAttempt() } else { beginConnecting() }
        case (.disconnect, .disconnecting):
            logger.warning("No disconnection event from the driver; going on anyway")
            finishDisconnecting()
        default:
            break
        }
    }
}
