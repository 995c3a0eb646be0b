import Foundation
import Logging
import TetherCore

/// What the client reports while it works (the view model turns these into pills and log lines).
public enum TybeClientEvent: Sendable, Hashable {
    /// The link state changed.
    case link(TybeLinkState)
    /// A status notification arrived from the bridge with news: it answers a frame, or says
    /// something new of a frame.
    case status(TybeStatus)
    /// The bridge said again what it last said of a frame (its 2 s heartbeat, an answer to a
    /// status request): only the dongle flag may be new. Nothing to log or count.
    case statusRepeated(TybeStatus)
    /// A frame went out.
    case frameSent(seq: UInt8, keys: Int)
    /// Compose progress: `sent` of `total` frames written, `acknowledged` confirmed by status.
    case progress(sent: Int, acknowledged: Int, total: Int)
    /// Characters the planner could not type.
    case untypeable([UntypeableCharacter])
    /// Something went wrong (a log line for the user).
    case problem(String)
}

/// The BLE link pill of §2.1.
public enum TybeLinkState: String, Sendable, Hashable {
    /// No link.
    case idle
    /// Scanning and connecting.
    case connecting
    /// Connected and subscribed to Status.
    case connected
    /// The last attempt or link failed.
    case failed
}

/// Errors a send can end with.
public enum TybeClientError: Error, Sendable, Hashable, LocalizedError {
    /// No bridge with the configured name was found.
    case bridgeNotFound(String)
    /// The bridge did not answer a frame with a status in time; the link was dropped.
    case statusTimeout(seq: UInt8)
    /// The link failed; the next action reconnects.
    case linkFailed(String)
    /// Keyboard mode has ``TybeClient/keyQueueCapacity`` keys waiting already; this one was
    /// not taken.
    case keyQueueFull
    /// More keys were given for one keyboard-mode frame than ``TybeClient/maximumKeysPerFrame``.
    case tooManyKeys(Int)

    public var errorDescription: String? {
        switch self {
        case .bridgeNotFound(let name): "No bridge named \"\(name)\" was found."
        case .statusTimeout(let seq): "The bridge did not confirm frame \(seq); the link was reset."
        case .linkFailed(let why): "The BLE link failed: \(why)"
        case .keyQueueFull: "Too many keys are waiting for the bridge; this one was not sent."
        case .tooManyKeys(let count): "\(count) keys are too many for one frame (at most \(TybeClient.maximumKeysPerFrame)); they were not sent."
        }
    }
}

/// The Tybe client of the mobile spec (§3) over Tether's core: one persistent connection to the
/// bridge, Status subscribed at once, frames written without response.
///
/// Keyboard mode sends one frame per key event, at most `window` of them unanswered (a paste
/// arrives as a burst of keys), starting from one and growing with each acknowledgement so
/// the bridge's queue is probed, not overrun; a frame the bridge refuses with BUSY is sent
/// again before any key behind it, and the window stays below what the bridge could hold, so
/// a paste is typed whole and in order. Compose mode plans a whole text,
/// chunks it to the link's maximum write length and streams it with the same window.
/// On a write error or a status timeout the connection is dropped and the next action
/// reconnects (§3.4); a status carrying an error is reported but never disconnects.
public actor TybeClient {
    /// The advertised name of the bridge to use.
    public var bridgeName: String
    private let central: Central
    private let clock: any Clock<Duration>
    private let logger: Logger
    private let statusTimeout: Duration
    private let window: Int
    private var link: DeviceLink?
    private var connection: ConnectionStateMachine? { link?.connection }
    /// Counts links, so the end of one is never taken for the end of the next.
    private var linkGeneration = 0
    /// The last link whose end was handled (``linkEnded(_:)``, ``reset()``, ``dropLink(_:)``).
    private var endedGeneration = 0
    /// The attempt under way to open a link, which every `connect()` meanwhile awaits.
    private var opening: Task<Void, any Error>?
    /// Counts ``reset()`` calls, so an attempt a reset overtook does not set the link's state.
    private var resets = 0
    private var nextSeq: UInt8 = 0
    private var broadcaster = Broadcaster<TybeClientEvent>(bufferSize: 4096)
    /// Compose frames waiting for their status (armed before each write).
    private let frameStatuses: RequestCorrelator<TybeStatus>
    /// Silence longer than the status timeout drops the link (the bridge's heartbeat stopped).
    /// How often the bridge sends a status by itself (wire protocol: a heartbeat every 2 s).
    static let heartbeatInterval: Duration = .seconds(2)
    private let liveness: LivenessWatchdog
    // Keyboard mode: frames waiting to be written (in order) and written but unanswered.
    private var keysWaiting: [KeyFrame] = []
    private var keysInFlight: [KeyFrame] = []
    /// Key frames that may be unanswered now: it starts at 1 and grows by one per
    /// acknowledgement up to `keyCeiling` (`window` until the bridge answers BUSY).
    private var keyWindow = 1
    private var keyCeiling: Int
    private var keyOrder = 0
    private var pumpingKeys = false

    private struct KeyFrame {
        let order: Int
        let opcodes: Data
        /// Given at the first write.
        var seq: UInt8?
    }
    private var keyTimer: Task<Void, Never>?
    private var keyTimerGeneration = 0
    private var keyStatusesSeen = 0
    private var keysDrained: [CheckedContinuation<Void, Never>] = []
    private var composing = false

    /// The most keyboard-mode keys that may wait for the bridge; more are refused with
    /// ``TybeClientError/keyQueueFull``.
    public static let keyQueueCapacity = 4096
    /// Keyboard-mode keys waiting to be written or written and not answered yet.
    var unansweredKeyCount: Int { keysWaiting.count + keysInFlight.count }
    /// Keyboard-mode frames the bridge refused with BUSY and that were sent again.
    public private(set) var busyResends = 0
    /// The last status the bridge sent.
    public private(set) var lastStatus: TybeStatus?
    /// What the bridge last said of each seq (acknowledged, error), to tell its repeats.
    private var saidOfSeq = [(ack: Bool, error: UInt8)?](repeating: nil, count: 256)
    /// The link state.
    public private(set) var linkState: TybeLinkState = .idle

    /// Creates a client.
    /// - Parameters:
    ///   - central: the central the bridge is reached through.
    ///   - bridgeName: the bridge's advertised name (the spec's default name unless the user
    ///     renamed it).
    ///   - clock: the clock timeouts and the heartbeat watchdog run on (a test clock in tests).
    ///   - statusTimeout: how long a frame may wait for its status before the link is dropped.
    ///   - window: how many frames may be unacknowledged at once, in compose mode and at most in
    ///     keyboard mode (keep it below the bridge's queue).
    ///   - logger: where the client logs.
    public init(
        central: Central,
        bridgeName: String = TybeGATT.defaultBridgeName,
        clock: any Clock<Duration> = ContinuousClock(),
        statusTimeout: Duration = .seconds(3),
        window: Int = 8,
        logger: Logger = Logger(label: "tether.tybe")
    ) {
        self.central = central
        self.bridgeName = bridgeName
        self.clock = clock
        self.statusTimeout = statusTimeout
        // A heartbeat every 2 s, each allowed the status timeout to arrive.
        self.liveness = LivenessWatchdog(clock: clock, silence: statusTimeout + Self.heartbeatInterval)
        self.frameStatuses = RequestCorrelator(clock: clock, maximumMessages: 1)
        self.window = max(1, window)
        self.keyCeiling = max(1, window)
        self.logger = logger
    }

    /// Events for the UI.
    public func events() -> AsyncStream<TybeClientEvent> { broadcaster.subscribe() }

    /// Changes the bridge name (takes effect at the next connection).
    public func setBridgeName(_ name: String) { bridgeName = name }

    // MARK: Link

    /// Opens the link without sending a frame (the Connect button). Calls made while a link
    /// is being opened (keys typed during a reconnection) share that attempt.
    public func connect() async throws {
        if let opening { return try await opening.value }
        let attempt = Task { try await self.openLink() }
        opening = attempt
        defer { if opening == attempt { opening = nil } }
        try await attempt.value
    }

    private func openLink() async throws {
        if let connection, await connection.isLinkUp { return }
        let resetsAtStart = resets
        // An earlier link's watchdog must not judge this one.
        liveness.stop()
        setLink(.connecting)
        do {
            let peripheral: DiscoveredPeripheral
            do {
                peripheral = try await central.discover(filter: ScanFilter(name: .exact(bridgeName)), timeout: .seconds(10))
            } catch BLEError.scanTimeout {
                throw TybeClientError.bridgeNotFound(bridgeName)
            }
            if let previous = link {
                previous.stopListening()
                // The link this one replaces is down (one attempt at a time, and it is not
                // connected); if its end was not handled yet, what waited on it ends now.
                linkEnded(linkGeneration)
            }
            linkGeneration += 1
            let generation = linkGeneration
            // Subscribed before the link is up: the bridge greets every connection with a status.
            // The status stream ending (not stopped by us) is the link going away.
            let link = await DeviceLink.arm(
                on: central, to: peripheral.id,
                configuration: DeviceProfile.tybe.connectionConfiguration(reconnectPolicy: .never),
                notifications: [(TybeGATT.status, { @Sendable [weak self] data in await self?.received(data) })],
                streamEnded: { [weak self] _ in await self?.linkEnded(generation) })
            self.link = link
            try await link.connect()
            guard resets == resetsAtStart else {
                // Reset while the link was being opened: the user asked for no link.
                if self.link === link { self.link = nil }
                await link.close()
                throw TybeClientError.linkFailed("the link was reset while it was being opened")
            }
            // A new connection resets the bridge's duplicate filter; seq keeps counting anyway.
            setLink(.connected)
            // A new link starts the keyboard window afresh (the bridge may have restarted).
            keyWindow = 1
            keyCeiling = window
            startWatchdog()
        } catch {
            // After a reset the state is the reset's (idle), not this attempt's.
            if resets == resetsAtStart {
                setLink(.failed)
                emit(.problem(describe(error)))
            }
            throw error is TybeClientError ? error : TybeClientError.linkFailed(describe(error))
        }
    }

    /// Drops the persistent connection (the Reset button).
    public func reset() async {
        resets += 1
        setLink(.idle)
        liveness.stop()
        link?.stopListening()
        endedGeneration = linkGeneration
        // State first, the await last: a link opened meanwhile is not the one cut off here.
        let closing = connection
        link = nil
        failWaiters()
        abandonKeys("the link was reset")
        if let closing { await closing.disconnect() }
    }

    /// Reads the bridge's Config (firmware, ESB address and channel).
    public func readConfig() async throws -> TybeConfig {
        let connection = try await connected()
        let data = try await connection.read(TybeGATT.config)
        guard let config = TybeConfig(data) else { throw TybeClientError.linkFailed("Config is \(data.count) bytes, expected 10") }
        return config
    }

    /// Sets the bridge's ESB channel (0…100).
    public func setChannel(_ channel: Int) async throws {
        let value = try TybeConfig.channelWrite(channel)
        try await connected().write(value, to: TybeGATT.config, type: .withResponse)
    }

    /// Asks the bridge for a status notification (Control `0x01`).
    public func requestStatus() async throws {
        try await connected().write(TybeControl.requestStatus, to: TybeGATT.control, type: .withoutResponse)
    }

    // MARK: Keyboard mode

    /// Sends one key event as one frame, written without response.
    ///
    /// Returns once the frame is written, or queued behind earlier keys when `window` frames
    /// already wait for their status (or a compose is under way). Throws when the link cannot
    /// be opened or a write fails (keys still waiting are then reported as a problem and
    /// dropped).
    public func send(_ stroke: KeyStroke) async throws {
        try await send([stroke])
    }

    /// The most keys one keyboard-mode frame carries (a Hangul syllable's jamo run is at most 6).
    public static let maximumKeysPerFrame = 16

    /// Sends the keys of one key event as one frame, written without response: one key, or
    /// the jamo run of a Hangul syllable typed at once (§5: "the jamo expansion of the new
    /// character"). Queued and answered as single keys are; nothing is sent for no keys.
    public func send(_ strokes: [KeyStroke]) async throws {
        guard !strokes.isEmpty else { return }
        guard strokes.count <= Self.maximumKeysPerFrame else { throw TybeClientError.tooManyKeys(strokes.count) }
        _ = try await connected()
        guard keysWaiting.count < Self.keyQueueCapacity else { throw TybeClientError.keyQueueFull }
        keyOrder += 1
        keysWaiting.append(KeyFrame(order: keyOrder, opcodes: TybeOpcode.encode(strokes)))
        try await pumpKeys()
    }

    /// Writes waiting key frames while fewer than the window are unanswered, in order. One
    /// pump at a time: a caller that finds it running leaves its frame to it. A frame gets its
    /// seq when first written, so the seqs in flight are distinct; a frame sent again after
    /// BUSY keeps its seq (the bridge did not record it).
    private func pumpKeys() async throws {
        guard !pumpingKeys, !composing else { return }
        pumpingKeys = true
        defer { pumpingKeys = false }
        while keysInFlight.count < keyWindow, !keysWaiting.isEmpty, !composing {
            guard let connection, await connection.isLinkUp else {
                abandonKeys("the link to the bridge is down")
                throw TybeClientError.linkFailed("the link to the bridge is down")
            }
            // The link may have been dropped (and the keys abandoned) during that await.
            guard !keysWaiting.isEmpty, keysInFlight.count < keyWindow, !composing else { break }
            var next = keysWaiting.removeFirst()
            if next.seq == nil { next.seq = takeSeq() }
            let frame = TybeFrame(seq: next.seq ?? 0, opcodes: next.opcodes)
            keysInFlight.append(next)
            armKeyTimer()
            do {
                try await connection.write(frame.bytes, to: TybeGATT.textInput, type: .withoutResponse)
                emit(.frameSent(seq: frame.seq, keys: frame.opcodes.count / 3))
            } catch {
                await dropLink("write failed: \(describe(error))")
                throw TybeClientError.linkFailed(describe(error))
            }
        }
        if keysWaiting.isEmpty, keysInFlight.isEmpty { keysSettled() }
    }

    /// A status for a key frame in flight.
    ///
    /// The bridge answers BUSY when a frame arrives and acknowledges accepted frames in
    /// order as its dongle takes them. An acknowledgement therefore also settles earlier
    /// frames whose status went missing (reported: one refused as busy with its status lost
    /// was not typed), and widens the window by one; BUSY settles only its own frame, which
    /// goes back among the waiting keys in its original place, and caps the window at the
    /// frames the bridge was holding. Growing one frame at a time means only the newest frame
    /// meets a full queue; should a later frame still be accepted before a refused one is sent
    /// again, the keys are typed out of order, and that is reported.
    private func keyStatus(_ status: TybeStatus) -> Bool {
        guard let index = keysInFlight.firstIndex(where: { $0.seq == status.seq }) else { return false }
        keyStatusesSeen += 1
        let answered = keysInFlight.remove(at: index)
        if status.errorCode == TybeStatusCode.busy.rawValue {
            busyResends += 1
            let position = keysWaiting.firstIndex { $0.order > answered.order } ?? keysWaiting.endIndex
            keysWaiting.insert(answered, at: position)
            if index > 0 { keyCeiling = index }
            keyWindow = max(1, min(keyWindow - 1, keyCeiling))
            logger.info("The bridge was busy; sending frame \(status.seq) again", metadata: ["window": "\(keyWindow)"])
        } else {
            let unanswered = keysInFlight.prefix(index).compactMap(\.seq)
            keysInFlight.removeFirst(index)
            if !unanswered.isEmpty {
                emit(.problem("no status for frame(s) \(unanswered.map(String.init).joined(separator: ", ")) before frame \(status.seq): keys may be missing"))
            }
            keyWindow = min(keyWindow + 1, keyCeiling)
            if let refused = keysWaiting.first, refused.order < answered.order {
                emit(.problem("the bridge typed frame \(status.seq) before frame \(refused.seq ?? 0), which it had refused as busy"))
            }
        }
        if keysInFlight.isEmpty { keyTimer?.cancel(); keyTimer = nil } else { armKeyTimer(restart: true) }
        Task { [weak self] in try? await self?.pumpKeys() }
        return true
    }

    /// Runs while key frames are in flight: when no status for them arrives within the status
    /// timeout the link is dropped (and the keys reported), as for compose frames; heartbeats
    /// alone do not keep key frames alive.
    private func armKeyTimer(restart: Bool = false) {
        if restart { keyTimer?.cancel(); keyTimer = nil }
        guard keyTimer == nil else { return }
        keyTimerGeneration += 1
        let clock = self.clock, timeout = statusTimeout, seen = keyStatusesSeen, generation = keyTimerGeneration
        keyTimer = Task { [weak self] in
            do { try await clock.sleep(for: timeout) } catch { return }
            await self?.keyTimerFired(seen, generation: generation)
        }
    }

    private func keyTimerFired(_ seen: Int, generation: Int) async {
        // A timer replaced or cancelled (reset, a new status) after it woke does nothing.
        guard generation == keyTimerGeneration, !Task.isCancelled else { return }
        keyTimer = nil
        guard !keysInFlight.isEmpty, linkState == .connected else { return }
        guard seen == keyStatusesSeen else { armKeyTimer(); return }
        let seqs = keysInFlight.compactMap(\.seq).map(String.init).joined(separator: ", ")
        await dropLink("no status for frame(s) \(seqs)")
    }

    /// Keys that will not be sent (the link went down) are reported, never dropped in silence.
    private func abandonKeys(_ why: String) {
        let lost = keysWaiting.count + keysInFlight.count
        keysWaiting.removeAll()
        keysInFlight.removeAll()
        keyTimer?.cancel()
        keyTimer = nil
        keyTimerGeneration += 1
        keyWindow = 1
        if lost > 0 { emit(.problem("\(lost) key(s) not confirmed by the bridge: \(why)")) }
        keysSettled()
    }

    /// Wakes a compose waiting for the keys typed before it.
    private func keysSettled() {
        let waiting = keysDrained
        keysDrained.removeAll()
        for waiter in waiting { waiter.resume() }
    }

    /// Waits until no compose runs and every key sent before is answered (or abandoned),
    /// then claims the link for a compose: one compose at a time, in the order they came,
    /// never interleaved with keys. No await separates the last check from the claim.
    private func claimForCompose() async {
        while composing || !keysWaiting.isEmpty || !keysInFlight.isEmpty {
            await withCheckedContinuation { keysDrained.append($0) }
        }
        composing = true
    }

    // MARK: Compose mode

    /// Plans `text`, chunks it to the link, streams the frames and waits for every status.
    ///
    /// Returns the statuses in frame order. Untypeable characters are reported on ``events()``
    /// and in the returned plan; they are skipped, never silently dropped.
    @discardableResult
    public func compose(_ text: String) async throws -> (plan: TybePlan, statuses: [TybeStatus]) {
        let plan = TybePlanner.plan(text)
        if !plan.untypeable.isEmpty { emit(.untypeable(plan.untypeable)) }
        guard !plan.opcodes.isEmpty else { return (plan, []) }
        // Keys typed before the text go first; keys typed during it wait until it is done.
        await claimForCompose()
        defer {
            composing = false
            keysSettled()
            Task { [weak self] in try? await self?.pumpKeys() }
        }
        let connection = try await connected()
        let maxWrite = try await connection.maximumWriteValueLength(for: .withoutResponse)
        let frames = TybeFrameBuilder.chunk(opcodes: plan.opcodes, startingSeq: nextSeq, maxFrameBytes: min(255, maxWrite))
        nextSeq = frames.last.map { $0.seq &+ 1 } ?? nextSeq
        var statuses: [TybeStatus?] = Array(repeating: nil, count: frames.count)
        var acknowledged = 0
        var inFlight: [(index: Int, ticket: RequestCorrelator<TybeStatus>.Ticket)] = []
        // Tickets a failure left unsettled are forgotten, never kept.
        defer { for pending in inFlight { frameStatuses.cancel(pending.ticket) } }
        for (index, frame) in frames.enumerated() {
            if inFlight.count >= window {
                let oldest = inFlight.removeFirst()
                statuses[oldest.index] = try await settle(oldest.ticket, seq: frames[oldest.index].seq)
                acknowledged += 1
                emit(.progress(sent: index, acknowledged: acknowledged, total: frames.count))
            }
            // Arm the wait before the write that provokes the status.
            let ticket = armStatus(for: frame.seq)
            do {
                try await connection.write(frame.bytes, to: TybeGATT.textInput, type: .withoutResponse)
            } catch {
                frameStatuses.cancel(ticket)
                await dropLink("write failed: \(describe(error))")
                throw TybeClientError.linkFailed(describe(error))
            }
            emit(.frameSent(seq: frame.seq, keys: frame.opcodes.count / 3))
            inFlight.append((index, ticket))
        }
        while !inFlight.isEmpty {
            let pending = inFlight.removeFirst()
            statuses[pending.index] = try await settle(pending.ticket, seq: frames[pending.index].seq)
            acknowledged += 1
            emit(.progress(sent: frames.count, acknowledged: acknowledged, total: frames.count))
        }
        return (plan, statuses.compactMap { $0 })
    }

    /// Waits for a frame's status. The bridge answers frames in order, each once the dongle
    /// took it, so the timeout runs from the previous frame's status, not from the write. No
    /// status in time (or the link ending first) drops the link.
    private func settle(_ ticket: RequestCorrelator<TybeStatus>.Ticket, seq: UInt8) async throws -> TybeStatus {
        do {
            if let status = try await frameStatuses.reply(to: ticket, timeout: statusTimeout).messages.last { return status }
        } catch is CancellationError {
            // The caller gave up (a screen went away): the link is fine, the frames are not ours
            // to wait for any more.
            throw CancellationError()
        } catch RequestCorrelatorError.timedOut {
            // No status in time: handled below.
        } catch {
            // The link ended while we waited; it is already down.
            throw TybeClientError.linkFailed("the link ended before the status of frame \(seq)")
        }
        await dropLink("no status for frame \(seq)")
        throw TybeClientError.statusTimeout(seq: seq)
    }

    /// Arms the wait for `seq`'s status (a confirmation or an error), before the frame's write.
    private func armStatus(for seq: UInt8) -> RequestCorrelator<TybeStatus>.Ticket {
        frameStatuses.arm { status in
            status.seq == seq && (status.ackReceived || status.errorCode != 0) ? .complete : .notMine
        }
    }

    /// Ends every wait for a status: the link is gone.
    private func failWaiters() {
        frameStatuses.failAll(TybeClientError.linkFailed("the link ended"))
    }

    // MARK: Internals

    private func connected() async throws -> ConnectionStateMachine {
        if let connection, await connection.isLinkUp { return connection }
        // §3.4: reconnect on the next user action.
        try await connect()
        guard let connection else { throw TybeClientError.linkFailed("no connection") }
        return connection
    }

    private func takeSeq() -> UInt8 {
        defer { nextSeq &+= 1 }
        return nextSeq
    }

    /// The bridge sends a heartbeat every 2 s: no status for a heartbeat period plus the status
    /// timeout means the link is dead even if the OS has not noticed (§3.4 "notification
    /// timeout").
    private func startWatchdog() {
        let silence = liveness.silence
        liveness.start(dead: { [weak self] in await self?.heartbeatStopped(after: silence) })
    }

    /// The watchdog found the link silent: drop it, unless it is no longer the link watched.
    private func heartbeatStopped(after silence: Duration) async {
        guard linkState == .connected else { return }
        await dropLink("no status notification for \(silence)")
    }

    private func received(_ data: Data) {
        liveness.heard()
        guard let status = TybeStatus(data) else {
            logger.warning("Ignoring a \(data.count)-byte status")
            return
        }
        lastStatus = status
        // A frame waiting for this status makes it news even if the bridge said the same of
        // the seq before (a frame sent again after BUSY, a seq reused after 256 frames).
        var answersFrame = false
        if status.ackReceived || status.errorCode != 0 {
            answersFrame = keyStatus(status) || frameStatuses.deliver(status)
        }
        let said = saidOfSeq[Int(status.seq)]
        saidOfSeq[Int(status.seq)] = (status.ackReceived, status.errorCode)
        guard answersFrame || said.map({ $0.ack != status.ackReceived || $0.error != status.errorCode }) ?? true else {
            emit(.statusRepeated(status))
            return
        }
        emit(.status(status))
        if let error = status.errorDescription {
            logger.warning("Bridge reports \(error) for frame \(status.seq)")
        }
        if !answersFrame, status.ackReceived || status.errorCode != 0 {
            logger.debug("A status no frame was waiting for", metadata: ["seq": "\(status.seq)"])
        }
    }

    /// Link `generation` went away: unless its end was handled already, nothing waits on it.
    private func linkEnded(_ generation: Int) {
        guard generation == linkGeneration, endedGeneration < generation else { return }
        endedGeneration = generation
        liveness.stop()
        if linkState == .connected {
            setLink(.failed)
            emit(.problem("the link to the bridge dropped"))
        }
        failWaiters()
        abandonKeys("the link to the bridge dropped")
    }

    private func dropLink(_ why: String) async {
        logger.warning("Dropping the link: \(why)")
        emit(.problem(why))
        setLink(.failed)
        liveness.stop()
        link?.stopListening()
        endedGeneration = linkGeneration
        let closing = connection
        link = nil
        failWaiters()
        abandonKeys(why)
        if let closing { await closing.disconnect() }
    }

    private func setLink(_ state: TybeLinkState) {
        guard state != linkState else { return }
        linkState = state
        emit(.link(state))
    }

    private func emit(_ event: TybeClientEvent) {
        broadcaster.yield(event, logger: logger)
    }

    private func describe(_ error: any Error) -> String {
        (error as? LocalizedError)?.errorDescription ?? "\(error)"
    }
}
