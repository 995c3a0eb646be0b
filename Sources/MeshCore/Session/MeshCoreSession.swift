import Foundation
import Logging
import TetherCore

/// A session with a MeshCore companion radio over any ``MeshTransport``.
///
/// ``start()`` connects the transport, sends APP_START and waits for SELF_INFO. Commands are
/// serialized (one in flight; the radio answers in order) and each is matched to its own reply
/// codes, with a timeout (5 s by default); ERR replies become ``MeshCoreError/commandFailed(command:code:)``.
/// Pushes and fetched messages arrive on ``events()``. On MSG_WAITING the session drains the
/// radio's queue with SYNC_NEXT_MESSAGE until NO_MORE_MESSAGES (when auto-fetch is on).
///
/// The receive loop is armed before the first frame is sent, so nothing the radio says after
/// ``start()`` begins is lost.
///
/// The protocol carries no sequence numbers: a reply that arrives after its command timed out is
/// dropped as unexpected while no command waits, but if the next command is already waiting and
/// accepts the same reply code (two OK-answered commands), the late reply is taken as its answer.
/// Timeouts are rare on a live link; a long silence usually means the link is gone, which the
/// link events report.
public actor MeshCoreSession {
    /// Session settings.
    public struct Configuration: Sendable {
        /// The name sent in APP_START.
        public var appName: String
        /// How long a command may wait for its reply (default 5 s). A multi-frame reply (a
        /// contact listing) restarts the wait at each frame.
        public var commandTimeout: Duration
        /// The message format asked for by ``deviceQuery()`` (3 = V3 codes with SNR).
        public var protocolVersion: UInt8
        /// Drain the radio's queue by itself on MSG_WAITING.
        public var autoFetchMessages: Bool
        /// How many events a slow subscriber may have waiting before the oldest are dropped.
        public var eventBufferSize: Int
        /// The most frames one reply may bring (a contact listing's contacts). Frames beyond it
        /// are counted, not kept (``ContactList/omittedCount``); a reply that goes on for
        /// four times as many fails with ``MeshCoreError/replyTooLong(command:frames:)``.
        public var maximumReplyFrames: Int
        /// How many commands of a pipelined batch (the `perform` forms that take several
        /// requests) may await their replies at once; nil (the default) takes the transport's
        /// ``MeshTransport/maximumCommandsInFlight``, which knows what the firmware's queues hold.
        public var maximumCommandsInFlight: Int?

        /// Creates a configuration.
        public init(
            appName: String = "Tether",
            commandTimeout: Duration = .seconds(5),
            protocolVersion: UInt8 = 3,
            autoFetchMessages: Bool = true,
            eventBufferSize: Int = 1024,
            maximumReplyFrames: Int = 10_000,
            maximumCommandsInFlight: Int? = nil
        ) {
            self.appName = appName
            self.commandTimeout = commandTimeout
            self.protocolVersion = protocolVersion
            self.autoFetchMessages = autoFetchMessages
            self.eventBufferSize = eventBufferSize
            self.maximumReplyFrames = max(1, maximumReplyFrames)
            self.maximumCommandsInFlight = maximumCommandsInFlight.map { max(1, $0) }
        }
    }

    /// The transport this session speaks over.
    public nonisolated let transport: any MeshTransport
    /// The session's settings.
    public nonisolated let configuration: Configuration

    /// The radio's identity, from the last APP_START.
    public private(set) var selfInfo: SelfInfo?
    /// The radio's firmware details, from the last ``deviceQuery()``.
    public private(set) var deviceInfo: DeviceInfo?
    /// True between a successful ``start()`` and a link loss or ``stop()``.
    public private(set) var isStarted = false
    /// Frames that could not be decoded (logged and skipped).
    public private(set) var malformedFrameCount = 0
    /// Replies no command was waiting for (logged and skipped).
    public private(set) var unexpectedReplyCount = 0

    let clock: any Clock<Duration>
    private let wallClock: @Sendable () -> Date
    private let logger: Logger
    private var eventBroadcaster = Broadcaster<MeshCoreEvent>()
    private var receiveTask: Task<Void, Never>?
    private var receiveGeneration = 0
    private var linkTask: Task<Void, Never>?

    // Command serialization: one command (or pipelined batch) at a time, the rest wait in order.
    private var busy = false
    private var turnWaiters: [CheckedContinuation<Void, Never>] = []
    /// The commands in flight and their replies (one batch at a time: `busy` serializes them).
    private let replies: RequestCorrelator<MeshCoreFrame>
    /// The name of each command in flight, for the errors that answer it.
    private var commandNames: [RequestCorrelator<MeshCoreFrame>.Ticket: String] = [:]

    // Acknowledgements of direct messages.
    private struct AckWaiter {
        let acks: Set<UInt32>
        let continuation: CheckedContinuation<SendConfirmation?, Never>
    }
    private var ackWaiters: [Int: AckWaiter] = [:]
    private var recentConfirmations: [SendConfirmation] = []
    private var nextAckWaiterID = 0

    // Pushes that answer remote requests (login, status, telemetry, binary, trace, …), numbered
    // so a request only takes answers that came after it was sent.
    private struct PushWaiter {
        let after: UInt64
        let matches: @Sendable (MeshCoreFrame) -> Bool
        let continuation: CheckedContinuation<MeshCoreFrame?, any Error>
    }
    /// Node discoveries listening: their control-data payloads so far (bounded).
    private var controlCollectors: [Int: [Data]] = [:]
    private var nextControlCollectorID = 0
    /// How many answers one node discovery keeps.
    static let controlCollectorCapacity = 256
    private var pushWaiters: [Int: PushWaiter] = [:]
    private var recentResponses: [(serial: UInt64, frame: MeshCoreFrame)] = []
    private var responseSerial: UInt64 = 0
    private var nextPushWaiterID = 0
    /// How many answering pushes are kept for requests that have not started waiting yet.
    static let recentResponseCapacity = 64

    // Sequences of commands that must not interleave with another sequence of the same kind
    // (signing and read-modify-write; remote requests, of which the radio awaits one at a time).
    private var gatesBusy: Set<Gate> = []
    private var gateWaiters: [Gate: [CheckedContinuation<Void, Never>]] = [:]

    /// What an exclusive sequence excludes.
    enum Gate: Hashable {
        /// Multi-command exchanges with the radio: signing, read-modify-write of settings.
        case sequence
        /// Requests the radio sends to another node and awaits the answer of (it tracks one).
        case remote
    }

    // Message drain.
    private var draining = false
    private var drainAgain = false
    private var missedWaiting = false
    private var autoFetch: Bool

    /// Creates a session; nothing is sent until ``start()``.
    ///
    /// - Parameters:
    ///   - transport: The link to the radio.
    ///   - configuration: Timeouts, app name, message format.
    ///   - clock: The clock timeouts run on (a test clock in tests).
    ///   - wallClock: The time stamped on messages sent.
    ///   - logger: Where the session logs.
    public init(
        transport: any MeshTransport,
        configuration: Configuration = Configuration(),
        clock: any Clock<Duration> = ContinuousClock(),
        wallClock: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = Logger(label: "tether.meshcore.session")
    ) {
        self.transport = transport
        self.configuration = configuration
        self.clock = clock
        self.wallClock = wallClock
        self.logger = logger
        self.autoFetch = configuration.autoFetchMessages
        self.eventBroadcaster = Broadcaster(bufferSize: configuration.eventBufferSize)
        self.replies = RequestCorrelator(clock: clock, maximumMessages: min(max(1, configuration.maximumReplyFrames), 1_000_000))
    }

    /// Pushes and fetched messages from now on.
    public func events() -> AsyncStream<MeshCoreEvent> {
        eventBroadcaster.subscribe { [weak self] token in Task { await self?.removeEventSubscriber(token) } }
    }

    // MARK: Lifecycle

    /// Connects the transport (if needed), sends APP_START and returns the radio's SELF_INFO.
    ///
    /// Call it again after the link came back (the radio forgets the app on disconnection).
    @discardableResult
    public func start() async throws -> SelfInfo {
        await armReceiving()
        if !(await transport.isConnected) {
            try await transport.connect()
        }
        let info = try await perform(.selfInfo(appName: configuration.appName))
        isStarted = true
        logger.info("Session started", metadata: ["radio": "\(info.name)"])
        return info
    }

    /// Asks the radio for its identity and settings again (`APP_START`, which it answers at any
    /// time) and updates ``selfInfo``.
    @discardableResult
    public func refreshSelfInfo() async throws -> SelfInfo {
        try await perform(.selfInfo(appName: configuration.appName))
    }

    func cacheSelfInfo(_ info: SelfInfo) { selfInfo = info }

    /// Ends the session and disconnects the transport; commands in flight fail with ``MeshCoreError/linkLost``.
    public func stop() async {
        isStarted = false
        failPending(.linkLost)
        await transport.disconnect()
    }

    /// Turns fetching on MSG_WAITING on or off. Turning it on serves a MSG_WAITING that came
    /// while it was off.
    public func setAutoFetch(_ enabled: Bool) {
        autoFetch = enabled
        if enabled, missedWaiting, isStarted {
            missedWaiting = false
            startDrain()
        }
    }

    /// The transport reported that the link went down: fail what is in flight at once rather
    /// than letting it time out.
    public func linkWentDown() {
        guard isStarted || replies.armedCount > 0 else { return }
        isStarted = false
        failPending(.linkLost)
    }

    // MARK: Commands

    /// DEVICE_QUERY asking for ``Configuration/protocolVersion`` (V3 message codes by default).
    public func deviceQuery() async throws -> DeviceInfo {
        try await perform(.deviceQuery(protocolVersion: configuration.protocolVersion))
    }

    /// Battery voltage and storage use.
    public func batteryAndStorage() async throws -> BatteryAndStorage {
        try await perform(.batteryAndStorage)
    }

    /// The radio's contacts (all, or those modified after `since`). CONTACTS_START's count is the
    /// radio's total, not the number that follows, so the listing is read to END_OF_CONTACTS.
    public func contacts(since: UInt32? = nil) async throws -> ContactList {
        try await perform(.contacts(since: since))
    }

    /// Sends a direct message once; returns the radio's SENT (expected ack and timeout).
    ///
    /// - Parameters:
    ///   - destination: The recipient's public key or its first 6 bytes.
    ///   - text: The message.
    ///   - attempt: Which try this is (0 first); the radio stamps it so the recipient can
    ///     tell a retry from a new message.
    ///   - timestamp: The sender's clock (Unix seconds); now by default.
    ///   - textType: Plain text, or a command for a repeater or room server one is logged in to
    ///     as administrator (``MeshTextType/cliData``; see ``runCommand(_:on:)``).
    public func sendMessage(
        to destination: Data, text: String, attempt: UInt8 = 0, timestamp: UInt32? = nil, textType: MeshTextType = .plain
    ) async throws -> SentResult {
        let message = MeshCoreCommand.TextMessage(
            textType: textType, attempt: attempt, timestamp: timestamp ?? epochNow(),
            destinationPrefix: Data(destination.prefix(6)), text: text)
        let frames = try await execute(.sendTextMessage(message)) {
            if case .sent = $0 { .complete } else { .notMine }
        }
        guard case .sent(let result)? = frames.last else { throw MeshCoreError.transport("no SENT") }
        return result
    }

    /// Sends a direct message and waits for the recipient's acknowledgement, sending again as
    /// the MeshCore apps do (``MessageRetryPolicy``): each attempt raises the attempt counter;
    /// after ``MessageRetryPolicy/floodAfter`` unanswered direct attempts the contact's path is
    /// reset (`RESET_PATH`, when `destination` is the full 32-byte key) and the next attempts
    /// flood, at most ``MessageRetryPolicy/maxFloodAttempts`` of them.
    ///
    /// - Throws: ``MeshCoreError/notAcknowledged(attempts:)`` when no attempt was acknowledged;
    ///   what the radio answered if it refused every send.
    public func sendMessageAwaitingAcknowledgement(
        to destination: Data, text: String, policy: MessageRetryPolicy = .apps, timestamp: UInt32? = nil
    ) async throws -> MessageDelivery {
        let stamp = timestamp ?? epochNow()
        // Each attempt has its own ack code; a late ack of an earlier attempt still counts.
        var expected: [UInt32: SentResult] = [:]
        var attempts = 0, floodAttempts = 0, flooding = false
        var lastRefusal: (any Error)?
        while attempts < max(1, policy.maxAttempts), !flooding || floodAttempts < max(1, policy.maxFloodAttempts) {
            if let floodAfter = policy.floodAfter, attempts == floodAfter, !flooding,
               destination.count == MeshContact.publicKeySize {
                do {
                    try await resetPath(publicKey: destination)
                    flooding = true
                    logger.info("No acknowledgement on the path; flooding", metadata: ["attempts": "\(attempts)"])
                } catch {
                    logger.warning("Could not reset the path", metadata: ["error": "\(error)"])
                }
            }
            attempts += 1
            let sent: SentResult
            do {
                sent = try await sendMessage(to: destination, text: text, attempt: UInt8(min(attempts - 1, 255)), timestamp: stamp)
            } catch let error as MeshCoreError {
                // A refused send counts as an attempt, without a wait; a lost link ends it all.
                guard case .commandFailed = error else { throw error }
                lastRefusal = error
                continue
            }
            if sent.isFlood { flooding = true }
            if flooding { floodAttempts += 1 }
            expected[sent.expectedAck] = sent
            // The radio's estimate plus a margin, never less than a second.
            let wait = max(Duration.seconds(1), Duration.milliseconds(Int64(sent.suggestedTimeout)) * 1.25)
            if let confirmation = await waitForAcknowledgement(anyOf: Set(expected.keys), timeout: wait) {
                return MessageDelivery(sent: expected[confirmation.ack] ?? sent, confirmation: confirmation, attempts: attempts)
            }
            logger.info("No acknowledgement", metadata: ["attempt": "\(attempts)", "flooding": "\(flooding)"])
        }
        if expected.isEmpty, let lastRefusal { throw lastRefusal }
        throw MeshCoreError.notAcknowledged(attempts: attempts)
    }

    /// Waits up to `timeout` for SEND_CONFIRMED with `ack`; nil when it does not come.
    public func waitForAcknowledgement(_ ack: UInt32, timeout: Duration) async -> SendConfirmation? {
        await waitForAcknowledgement(anyOf: [ack], timeout: timeout)
    }

    /// Waits up to `timeout` for SEND_CONFIRMED with any of `acks`; nil when none comes.
    public func waitForAcknowledgement(anyOf acks: Set<UInt32>, timeout: Duration) async -> SendConfirmation? {
        if let early = recentConfirmations.first(where: { acks.contains($0.ack) }) { return early }
        let id = nextAckWaiterID
        nextAckWaiterID += 1
        let clock = self.clock
        let timer = Task { [weak self] in
            try? await clock.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            await self?.resolveAckWaiter(id, with: nil)
        }
        let result = await withCheckedContinuation { continuation in
            ackWaiters[id] = AckWaiter(acks: acks, continuation: continuation)
        }
        timer.cancel()
        return result
    }

    /// Sends a message on channel `index`; the radio answers OK (not SENT).
    public func sendChannelMessage(_ text: String, channel index: UInt8 = 0, timestamp: UInt32? = nil) async throws {
        _ = try await execute(.sendChannelTextMessage(channel: index, timestamp: timestamp ?? epochNow(), text: text), expectingOK)
    }

    /// The radio's clock (epoch seconds).
    public func deviceTime() async throws -> UInt32 {
        try await perform(.deviceTime)
    }

    /// Sets the radio's clock; the radio refuses a time earlier than its own with ERR 6.
    public func setDeviceTime(_ seconds: UInt32) async throws {
        _ = try await execute(.setDeviceTime(seconds), expectingOK)
    }

    /// Sets the name the radio advertises (at most 31 bytes).
    public func setAdvertName(_ name: String) async throws {
        _ = try await execute(.setAdvertName(name), expectingOK)
    }

    /// Sends the radio's advert: zero-hop (neighbours only) or flooded through the mesh.
    public func sendSelfAdvert(flood: Bool = false) async throws {
        _ = try await execute(.sendSelfAdvert(flood: flood), expectingOK)
    }

    /// Channel `index`'s name and secret.
    public func channel(_ index: UInt8) async throws -> ChannelInfo {
        try await perform(.channel(index))
    }

    /// Fetches queued messages until NO_MORE_MESSAGES; each is also published on ``events()``.
    ///
    /// At most ``Configuration/maximumReplyFrames`` messages per call: a radio that never says
    /// NO_MORE_MESSAGES cannot keep it (and its result) growing; the next MSG_WAITING, or the
    /// next call, fetches the rest.
    @discardableResult
    public func syncMessages() async throws -> [MeshCoreEvent] {
        missedWaiting = false
        var fetched: [MeshCoreEvent] = []
        while fetched.count < replyFrameLimit {
            try Task.checkCancellation()
            let frames = try await execute(.syncNextMessage) { frame in
                switch frame {
                case .contactMessage, .channelMessage, .channelData, .noMoreMessages: .complete
                default: .notMine
                }
            }
            switch frames.last {
            case .contactMessage(let message)?:
                let event = MeshCoreEvent.contactMessage(message)
                fetched.append(event)
                eventBroadcaster.yield(event, logger: logger)
            case .channelMessage(let message)?:
                let event = MeshCoreEvent.channelMessage(message)
                fetched.append(event)
                eventBroadcaster.yield(event, logger: logger)
            case .channelData(let datagram)?:
                let event = MeshCoreEvent.channelData(datagram)
                fetched.append(event)
                eventBroadcaster.yield(event, logger: logger)
            default:
                return fetched
            }
        }
        logger.warning("Stopped fetching after \(fetched.count) messages; more remain on the radio")
        // The rest comes in the next round: the running drain's, or one started now (or when
        // fetching is turned on, for the connection manager's startup).
        if draining {
            drainAgain = true
        } else {
            missedWaiting = true
            if autoFetch, isStarted { startDrain() }
        }
        return fetched
    }

    /// ``Configuration/maximumReplyFrames``, at least 1 and at most a million (the
    /// configuration is a public `var`: it is clamped where it is used).
    private var replyFrameLimit: Int { min(max(1, configuration.maximumReplyFrames), 1_000_000) }

    /// Sends any command and returns the frames of its reply (for commands without a typed
    /// method). `accept` classifies each non-push frame the radio sends while it waits.
    /// At most ``Configuration/maximumReplyFrames`` frames are returned; a warning is logged
    /// when a reply brought more.
    public func execute(_ command: MeshCoreCommand, _ accept: @escaping @Sendable (MeshCoreFrame) -> ReplyMatch) async throws -> [MeshCoreFrame] {
        let reply = try await executeReply(command, accept)
        return reply.frames
    }

    /// A reply's frames, and how many frames beyond ``Configuration/maximumReplyFrames`` it
    /// brought and were not kept.
    struct Reply: Sendable {
        var frames: [MeshCoreFrame] = []
        var omitted = 0
    }

    func executeReply(_ command: MeshCoreCommand, _ accept: @escaping @Sendable (MeshCoreFrame) -> ReplyMatch) async throws -> Reply {
        let results = try await exchange([Outgoing(command: command, accept: accept)])
        return try results[0].get()
    }

    /// Sends `command` and returns what `extract` finds in the first frame it recognises.
    func request<Value: Sendable>(
        _ command: MeshCoreCommand, _ extract: @escaping @Sendable (MeshCoreFrame) -> Value?
    ) async throws -> Value {
        try await perform(MeshCoreRequest(command, single: extract))
    }

    // MARK: Requests and pipelines

    /// Sends `request` and returns its value.
    ///
    /// - Throws: ``MeshCoreError`` (the radio's refusal, a timeout, a reply that does not hold
    ///   the value, the link); `CancellationError` when the task is cancelled.
    public func perform<Value>(_ request: MeshCoreRequest<Value>) async throws -> Value {
        let reply = try await executeReply(request.command, request.accept)
        do { return try value(of: request, from: reply) } catch { throw Self.meshError(error) }
    }

    /// Sends `requests` back to back and returns each one's value, or why it failed, in order.
    ///
    /// As many commands as ``Configuration/maximumCommandsInFlight`` (by default the
    /// transport's) await their replies at once, so on a TCP or serial link the batch costs
    /// about one round trip instead of one per command. The batch runs alone: no other command
    /// of this session goes between its commands. A failed command does not stop the others.
    ///
    /// - Throws: `CancellationError` when the task is cancelled (nothing else: failures are
    ///   in the results).
    public func perform<Value>(_ requests: [MeshCoreRequest<Value>]) async throws -> [Result<Value, MeshCoreError>] {
        let replies = try await exchange(requests.map { Outgoing(command: $0.command, accept: $0.accept) })
        return zip(requests, replies).map { request, reply in
            reply.flatMap { reply in Result { try value(of: request, from: reply) }.mapError(Self.meshError) }
        }
    }

    /// Sends requests of different kinds back to back (as the array form does) and returns
    /// each one's value, or why it failed:
    ///
    /// ```swift
    /// let (device, clock, listing) = try await session.perform(.deviceQuery(), .deviceTime, .contacts())
    /// ```
    ///
    /// - Throws: `CancellationError` when the task is cancelled (nothing else: failures are
    ///   in the results).
    public func perform<each Value>(
        _ requests: repeat MeshCoreRequest<each Value>
    ) async throws -> sending (repeat Result<each Value, MeshCoreError>) {
        var batch: [Outgoing] = []
        for request in repeat each requests { batch.append(Outgoing(command: request.command, accept: request.accept)) }
        let replies = try await exchange(batch)
        var index = 0
        return (repeat result(of: each requests, in: replies, at: &index))
    }

    private func result<Value>(
        of request: MeshCoreRequest<Value>, in replies: [Result<Reply, MeshCoreError>], at index: inout Int
    ) -> Result<Value, MeshCoreError> {
        defer { index += 1 }
        return replies[index].flatMap { reply in Result { try value(of: request, from: reply) }.mapError(Self.meshError) }
    }

    /// Reads a request's value from its reply, keeping what the session caches.
    private func value<Value>(of request: MeshCoreRequest<Value>, from reply: Reply) throws -> Value {
        let value = try request.read(reply)
        if let info = value as? SelfInfo { selfInfo = info }
        if let info = value as? DeviceInfo { deviceInfo = info }
        return value
    }

    private static func meshError(_ error: any Error) -> MeshCoreError {
        (error as? MeshCoreError) ?? .transport("\(error)")
    }

    /// How many commands of a batch may await their replies at once.
    private var commandWindow: Int {
        max(1, configuration.maximumCommandsInFlight ?? transport.maximumCommandsInFlight)
    }

    /// A command of a batch and how its reply is recognised.
    struct Outgoing: Sendable {
        let command: MeshCoreCommand
        let accept: @Sendable (MeshCoreFrame) -> ReplyMatch
    }

    /// Sends `batch` back to back, at most ``commandWindow`` (and ``pipelinedBytes``) awaiting
    /// their replies at once, and returns each reply or why it failed, in order. The radio
    /// answers in order, so an ERR is the oldest waiting command's (one whose multi-frame reply
    /// has not begun: the firmware answers between a listing's frames). The batch holds the
    /// session's turn.
    ///
    /// - Throws: `CancellationError` only, checked before each write and while waiting; the
    ///   commands sent and not yet answered are abandoned (kept armed to take their answers).
    func exchange(_ batch: [Outgoing]) async throws -> [Result<Reply, MeshCoreError>] {
        await takeTurn()
        defer { releaseTurn() }
        try Task.checkCancellation()
        let window = commandWindow
        var results = [Result<Reply, MeshCoreError>?](repeating: nil, count: batch.count)
        var awaiting: [(index: Int, ticket: RequestCorrelator<MeshCoreFrame>.Ticket, name: String, bytes: Int)] = []
        var bytesAwaited: Int { awaiting.reduce(0) { $0 + $1.bytes } }
        var next = 0
        while next < batch.count || !awaiting.isEmpty {
            // Fill the window; a cancelled caller sends nothing more.
            while next < batch.count, awaiting.count < window {
                if Task.isCancelled {
                    abandon(awaiting.map(\.ticket))
                    throw CancellationError()
                }
                let index = next
                let command = batch[index].command, accept = batch[index].accept
                let name = Self.name(of: command)
                let bytes: Data
                do { bytes = try command.encoded() } catch {
                    results[index] = .failure(.invalidCommand(error))
                    next += 1
                    continue
                }
                // Within the byte budget, counting this one (framed); alone, any length goes.
                guard awaiting.isEmpty || bytesAwaited + bytes.count + 3 <= Self.pipelinedBytes else { break }
                next += 1
                // Each command's timeout runs from its own write, not from when the ones before
                // it were answered: a silent radio fails a batch in one timeout, not one each.
                // One that times out with more of the batch behind it (sent or to come) leaves a
                // stand-in for a while: the radio answers in order, and its late answer must not
                // be taken for theirs. A batch's last command, or a single one, leaves none: a
                // lost reply must not cost the next command its answer.
                let lingering = index < batch.count - 1 ? configuration.commandTimeout : nil
                let ticket = replies.arm(timeout: configuration.commandTimeout, lingering: lingering) { frame in
                    switch accept(frame) {
                    case .complete: .complete
                    case .more: .more
                    case .notMine: .notMine
                    }
                }
                commandNames[ticket] = name
                do {
                    try await transport.send(bytes)
                    awaiting.append((index, ticket, name, bytes.count + 3))
                } catch {
                    replies.cancel(ticket)
                    commandNames[ticket] = nil
                    logger.warning("Send failed", metadata: ["command": "\(name)", "error": "\(error)"])
                    // A link that refused one frame refuses the rest of the batch.
                    let failure = (error as? MeshCoreError) ?? MeshCoreError.transport("\(error.localizedDescription)")
                    results[index] = .failure(failure)
                    while next < batch.count {
                        results[next] = .failure(failure)
                        next += 1
                    }
                }
            }
            guard !awaiting.isEmpty else { break }
            // Collect the oldest.
            let head = awaiting.removeFirst()
            do {
                // A cancelled wait leaves the command armed: the radio answers it anyway, and
                // that answer must not be taken for a later command's.
                let reply = try await replies.reply(to: head.ticket, timeout: configuration.commandTimeout, keepingArmedOnCancel: true)
                commandNames[head.ticket] = nil
                if reply.omitted > 0 {
                    logger.warning("A reply was longer than kept", metadata: [
                        "command": "\(head.name)", "kept": "\(reply.messages.count)", "omitted": "\(reply.omitted)"])
                }
                results[head.index] = .success(Reply(frames: reply.messages, omitted: reply.omitted))
            } catch {
                commandNames[head.ticket] = nil
                switch error {
                case is CancellationError:
                    abandon(awaiting.map(\.ticket))
                    throw error
                case RequestCorrelatorError.timedOut:
                    logger.warning("Command timed out", metadata: ["command": "\(head.name)"])
                    results[head.index] = .failure(.timeout(command: head.name))
                case RequestCorrelatorError.replyTooLong(let frames):
                    results[head.index] = .failure(.replyTooLong(command: head.name, frames: frames))
                default:
                    results[head.index] = .failure(Self.meshError(error))
                }
            }
        }
        return results.map { $0 ?? .failure(.transport("not sent")) }
    }

    /// At most this many bytes of a batch's commands await replies at once (one command alone
    /// may be longer): a serial line's receive buffer is 64 bytes on some boards, and the
    /// startup's reads are a few bytes each.
    static let pipelinedBytes = 64

    /// Gives up on commands the radio will still answer: they stay armed to take their
    /// answers, which must not be taken for later commands'.
    private func abandon(_ tickets: [RequestCorrelator<MeshCoreFrame>.Ticket]) {
        for ticket in tickets {
            replies.abandon(ticket, timeout: configuration.commandTimeout)
            commandNames[ticket] = nil
        }
    }

    /// Runs `body` while no other exclusive sequence runs: a multi-command exchange (signing,
    /// read-modify-write) cannot be interleaved with another one (single commands still can).
    func exclusively<T: Sendable>(_ gate: Gate = .sequence, _ body: @Sendable () async throws -> T) async throws -> T {
        if gatesBusy.contains(gate) {
            await withCheckedContinuation { gateWaiters[gate, default: []].append($0) }
        } else {
            gatesBusy.insert(gate)
        }
        defer {
            if var waiting = gateWaiters[gate], !waiting.isEmpty {
                waiting.removeFirst().resume()
                gateWaiters[gate] = waiting
            } else {
                gatesBusy.remove(gate)
            }
        }
        return try await body()
    }

    /// Sends a command the radio does not answer (it reboots): returns once it is written.
    func sendUnanswered(_ command: MeshCoreCommand) async throws {
        let bytes: Data
        do { bytes = try command.encoded() } catch { throw MeshCoreError.invalidCommand(error) }
        await takeTurn()
        defer { releaseTurn() }
        do {
            try await transport.send(bytes)
        } catch {
            throw (error as? MeshCoreError) ?? MeshCoreError.transport("\(error.localizedDescription)")
        }
    }

    /// How a waiting command classifies a frame.
    public enum ReplyMatch: Sendable {
        /// The last frame of the reply.
        case complete
        /// Part of a multi-frame reply; more follow.
        case more
        /// Not a reply to this command.
        case notMine
    }

    // MARK: Internals

    let expectingOK: @Sendable (MeshCoreFrame) -> ReplyMatch = { frame in
        if case .ok = frame { .complete } else { .notMine }
    }

    private func takeTurn() async {
        guard busy else { busy = true; return }
        await withCheckedContinuation { turnWaiters.append($0) }
    }

    private func releaseTurn() {
        if turnWaiters.isEmpty { busy = false } else { turnWaiters.removeFirst().resume() }
    }

    private func failPending(_ error: MeshCoreError) {
        replies.failAll(error)
        // Answers from other nodes will not come over a link that went away.
        let waiting = pushWaiters
        pushWaiters.removeAll()
        for waiter in waiting.values { waiter.continuation.resume(throwing: error) }
    }

    /// Subscribes to the transport's frames afresh on every start: a transport may end its
    /// stream on disconnection (BLE does), and an ended loop must not leave the session deaf.
    private func armReceiving() async {
        receiveGeneration += 1
        let mine = receiveGeneration
        receiveTask?.cancel()
        let stream = await transport.receivedData
        receiveTask = Task { [weak self] in
            for await frame in stream { await self?.receive(frame, subscription: mine) }
        }
        guard linkTask == nil else { return }
        if let reporting = transport as? any MeshLinkReporting {
            let link = await reporting.linkEvents()
            linkTask = Task { [weak self] in
                for await event in link {
                    switch event {
                    case .disconnected, .reconnecting: await self?.linkWentDown()
                    case .connected, .reconnected: break
                    }
                }
            }
        }
    }

    private func receive(_ bytes: Data, subscription: Int) {
        // A frame still in flight on a replaced subscription arrives on the new one as well.
        guard subscription == receiveGeneration else { return }
        let frame: MeshCoreFrame
        do {
            frame = try MeshCoreFrame(decoding: bytes)
        } catch {
            malformedFrameCount += 1
            logger.warning("Skipped a malformed frame", metadata: ["error": "\(error)", "bytes": "\(bytes.count)"])
            // Replies come in command order: an unreadable reply is the answer to the command
            // in flight, which fails now rather than waiting out its timeout.
            // A broken frame of a listing (contacts) is the listing's, under way or not; any
            // other is the answer of the oldest command whose reply has not begun.
            let listing = [MeshCoreResponseCode.contactsStart, .contact, .endOfContacts].map(\.rawValue)
            if let code = bytes.first, code < 0x80,
               let waiting = listing.contains(code)
                ? (replies.oldestUnderWay ?? replies.oldestAwaitingFirstMessage) : replies.oldestAwaitingFirstMessage {
                let name = commandNames[waiting] ?? "a cancelled command"
                replies.fail(waiting, with: MeshCoreError.malformedReply(command: name, reason: "\(error)"))
            }
            return
        }
        if frame.isPush {
            handlePush(frame)
            return
        }
        // ERR and DISABLED answer the oldest command whose reply has not begun, whatever it
        // asked for (a contact listing under way is answered around, not refused).
        if let refused = replies.oldestAwaitingFirstMessage {
            let name = commandNames[refused] ?? "a cancelled command"
            switch frame {
            case .error(let code):
                replies.fail(refused, with: MeshCoreError.commandFailed(command: name, code: code))
                return
            case .disabled:
                replies.fail(refused, with: MeshCoreError.disabled(command: name))
                return
            default:
                break
            }
        }
        switch replies.offer(frame) {
        case .taken: break
        case .absorbed: salvage(frame)
        case .notTaken: unexpectedReply(frame)
        }
    }

    /// The answer to a command given up on: a message the radio handed over has left its queue,
    /// so it is published rather than lost; anything else is dropped.
    private func salvage(_ frame: MeshCoreFrame) {
        _ = publishFetched(frame, "fetched by a cancelled command")
    }

    private func unexpectedReply(_ frame: MeshCoreFrame) {
        unexpectedReplyCount += 1
        // A message the radio handed over (a late SYNC_NEXT_MESSAGE reply) has left its queue:
        // publish it rather than lose it; the store's deduplication absorbs a second copy.
        if !publishFetched(frame, "that arrived after its fetch gave up") {
            logger.warning("Skipped a reply no command was waiting for", metadata: ["code": "\(frame.code)"])
        }
    }

    /// Publishes a message or datagram the radio handed over outside a waiting fetch; false
    /// for any other frame.
    private func publishFetched(_ frame: MeshCoreFrame, _ how: String) -> Bool {
        let event: MeshCoreEvent, what: String
        switch frame {
        case .contactMessage(let message): (event, what) = (.contactMessage(message), "message")
        case .channelMessage(let message): (event, what) = (.channelMessage(message), "message")
        case .channelData(let datagram): (event, what) = (.channelData(datagram), "datagram")
        default: return false
        }
        logger.info("Published a \(what) \(how)")
        eventBroadcaster.yield(event, logger: logger)
        return true
    }

    private func handlePush(_ frame: MeshCoreFrame) {
        let event: MeshCoreEvent
        switch frame {
        case .sendConfirmed(let confirmation):
            recentConfirmations.append(confirmation)
            if recentConfirmations.count > 32 { recentConfirmations.removeFirst() }
            for (id, waiter) in ackWaiters where waiter.acks.contains(confirmation.ack) {
                resolveAckWaiter(id, with: confirmation)
            }
            event = .sendConfirmed(confirmation)
        case .messageWaiting:
            event = .messageWaiting
            if autoFetch, isStarted { startDrain() } else { missedWaiting = true }
        case .advert(let key): event = .advert(publicKey: key)
        case .pathUpdated(let key): event = .pathUpdated(publicKey: key)
        case .newAdvert(let contact): event = .newAdvert(contact)
        case .contactDeleted(let key): event = .contactDeleted(publicKey: key)
        case .contactsFull: event = .contactsFull
        case .rawData, .rxLog:
            // Heard packets: for listeners only (they would crowd answers out of the ring).
            event = .remote(frame)
        case .controlData(_, _, _, let payload):
            for id in controlCollectors.keys where controlCollectors[id, default: []].count < Self.controlCollectorCapacity {
                controlCollectors[id, default: []].append(payload)
            }
            event = .remote(frame)
        case .loginSuccess, .loginFailed, .statusResponse, .telemetryResponse, .binaryResponse, .pathDiscoveryResponse,
             .traceData:
            responseSerial += 1
            recentResponses.append((responseSerial, frame))
            if recentResponses.count > Self.recentResponseCapacity { recentResponses.removeFirst() }
            for (id, waiter) in pushWaiters where waiter.matches(frame) {
                pushWaiters.removeValue(forKey: id)?.continuation.resume(returning: frame)
            }
            event = .remote(frame)
        default:
            let encoded = frame.encoded()
            event = .push(code: frame.code, payload: Data(encoded.dropFirst()))
        }
        eventBroadcaster.yield(event, logger: logger)
    }

    /// The number of the last answering push received: a request sent after reading it takes
    /// only pushes numbered above it.
    var responseMark: UInt64 { responseSerial }

    /// Waits up to `timeout` for an answering push numbered above `mark` that `matches`; nil
    /// when none comes.
    ///
    /// - Throws: ``MeshCoreError/linkLost`` when the session stops or the link goes down
    ///   meanwhile; `CancellationError` when the task is cancelled.
    func waitForPush(after mark: UInt64, timeout: Duration, _ matches: @escaping @Sendable (MeshCoreFrame) -> Bool) async throws -> MeshCoreFrame? {
        if let early = recentResponses.first(where: { $0.serial > mark && matches($0.frame) }) { return early.frame }
        try Task.checkCancellation()
        let id = nextPushWaiterID
        nextPushWaiterID += 1
        let clock = self.clock
        let timer = Task { [weak self] in
            try? await clock.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            await self?.resolvePushWaiter(id, with: .success(nil))
        }
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                pushWaiters[id] = PushWaiter(after: mark, matches: matches, continuation: continuation)
            }
        } onCancel: {
            Task { [weak self] in await self?.resolvePushWaiter(id, with: .failure(CancellationError())) }
        }
    }

    private func resolvePushWaiter(_ id: Int, with result: Result<MeshCoreFrame?, any Error>) {
        pushWaiters.removeValue(forKey: id)?.continuation.resume(with: result)
    }

    /// Collects the control-data payloads that arrive while `body` runs (node discovery).
    func collectingControlData(_ body: () async throws -> Void) async throws -> [Data] {
        let id = nextControlCollectorID
        nextControlCollectorID += 1
        controlCollectors[id] = []
        defer { controlCollectors[id] = nil }
        try await body()
        return controlCollectors[id] ?? []
    }

    private func resolveAckWaiter(_ id: Int, with confirmation: SendConfirmation?) {
        ackWaiters.removeValue(forKey: id)?.continuation.resume(returning: confirmation)
    }

    private func startDrain() {
        guard !draining else { drainAgain = true; return }
        draining = true
        Task { [weak self] in await self?.drain() }
    }

    private func drain() async {
        repeat {
            drainAgain = false
            do {
                try await syncMessages()
            } catch {
                logger.warning("Message fetch stopped", metadata: ["error": "\(error)"])
                break
            }
        } while drainAgain && isStarted
        draining = false
    }

    private func epochNow() -> UInt32 {
        UInt32(clamping: Int64(wallClock().timeIntervalSince1970))
    }

    private func removeEventSubscriber(_ token: Int) { eventBroadcaster.remove(token) }

    static func name(of command: MeshCoreCommand) -> String {
        if let code = MeshCoreCommandCode(rawValue: command.code) { "\(code)" } else { "command \(command.code)" }
    }
}
