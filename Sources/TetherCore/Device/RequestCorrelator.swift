import Foundation

/// Pairs a device's replies with the requests that provoked them: arm a request before the
/// write, deliver every incoming message, and wait for the request's reply with a timeout on
/// the injected clock.
///
/// The shape of MeshCore's commands, Tybe's frame statuses and any request/response protocol:
///
/// ```swift
/// let ticket = correlator.arm { status in status.seq == frame.seq ? .complete : .notMine }
/// try await connection.write(frame.bytes, to: TybeGATT.textInput, type: .withoutResponse)
/// let status = try await correlator.reply(to: ticket, timeout: .seconds(3)).last!
/// ```
///
/// - A reply that arrives before ``reply(to:timeout:keepingArmedOnCancel:)`` is called is kept for it: arming before
///   the write is enough, whatever the scheduling.
/// - ``deliver(_:)`` offers a message to the armed requests, oldest first; the first whose
///   `accept` does not answer ``Match/notMine`` takes it. A ``Match/more`` frame is part of a
///   multi-frame reply and restarts the timeout; ``Match/complete`` ends the reply.
/// - Memory is bounded: at most `maximumMessages` messages are kept per reply besides the
///   closing one (the rest are counted in ``Reply/omitted``), and nothing is kept for a message no request takes (``deliver(_:)``
///   returns false and the caller decides: publish it, log it).
/// - ``failAll(_:)`` (the link went down) and task cancellation end waits with an error; a
///   timed-out request is forgotten, so a late reply is not taken by it — unless it was armed
///   with `lingering` and later requests wait behind it: then a stand-in takes its late reply
///   for a while (for peers that answer in order). A request given up on can stay armed the
///   same way (``abandon(_:timeout:)``).
///
/// It is a lock-protected class rather than an actor so that a client's receive path (often
/// synchronous, inside the client's own actor) can deliver without a hop.
public final class RequestCorrelator<Message: Sendable>: @unchecked Sendable {
    /// How a request classifies an incoming message.
    public enum Match: Sendable {
        /// The last (or only) message of the reply.
        case complete
        /// Part of a multi-message reply; more follow.
        case more
        /// Not a reply to this request.
        case notMine
    }

    /// An armed request.
    public struct Ticket: Sendable, Hashable {
        fileprivate let id: Int
    }

    /// A request's reply.
    public struct Reply: Sendable {
        /// The messages kept, in arrival order (the ``Match/complete`` one, always kept, last).
        public var messages: [Message] = []
        /// Messages of the reply beyond the kept ones.
        public var omitted = 0
    }

    private struct Pending {
        let accept: @Sendable (Message) -> Match
        var reply = Reply()
        var result: Result<Reply, any Error>?
        var continuation: CheckedContinuation<Reply, any Error>?
        var timer: Task<Void, Never>?
        var timeout: Duration?
        /// Bumped whenever the timer is replaced: a timer that wakes for an older deadline
        /// (a `.more` message restarted it meanwhile) does nothing.
        var timerGeneration = 0
        /// Which `reply(to:timeout:)` call installed `continuation` (its cancellation, and no
        /// other's, may end the wait).
        var waiter: Int?
        /// Nobody will collect it: it only takes its reply (keeping later replies in their
        /// places) and is forgotten when the reply ends or its timeout passes.
        var abandoned = false
        /// A ``Match/more`` message came: a multi-message reply is under way.
        var begun = false
        /// After a timeout, how long a stand-in stays armed to take the late reply.
        var lingering: Duration?
        /// A timed-out request's stand-in: dropped once a later request takes a message (the
        /// peer, answering in order, has moved past the reply it waited for).
        var standIn = false

        /// Whether the peer answered this request (a message of its reply, or an error it
        /// sent), as opposed to nothing yet or only a timeout.
        var heardFrom: Bool {
            guard !abandoned else { return false }
            if begun || !reply.messages.isEmpty || reply.omitted > 0 { return true }
            switch result {
            case .success?: return true
            case .failure(let error)?: return !(error is RequestCorrelatorError)
            case nil: return false
            }
        }
    }

    /// The most messages kept per reply.
    public let maximumMessages: Int
    /// A reply longer than this (kept and omitted) fails with
    /// ``RequestCorrelatorError/replyTooLong(messages:)``: a peer that never ends a reply
    /// cannot hold a request forever.
    public let abandonAfter: Int

    private let timeline: Timeline
    // Guarded by `lock`.
    private let lock = NSLock()
    private var pending: [Int: Pending] = [:]
    private var order: [Int] = []
    private var nextID = 0

    /// Creates a correlator whose timeouts run on `clock`, keeping at most `maximumMessages`
    /// messages per reply and failing a reply longer than `abandonAfter` (default: four times
    /// what is kept).
    public init(clock: any Clock<Duration>, maximumMessages: Int = 10_000, abandonAfter: Int? = nil) {
        self.timeline = Timeline(clock)
        self.maximumMessages = max(1, maximumMessages)
        self.abandonAfter = max(self.maximumMessages, abandonAfter ?? 4 * self.maximumMessages)
    }

    deinit {
        for entry in pending.values { entry.timer?.cancel() }
    }

    /// Requests armed and not yet answered, failed or collected.
    public var armedCount: Int { lock.withLock { pending.count } }

    /// Arms a request; call it before the write that provokes the reply.
    public func arm(_ accept: @escaping @Sendable (Message) -> Match) -> Ticket {
        lock.withLock { armLocked(accept, timeout: nil, lingering: nil) }
    }

    /// Arms a request whose timeout runs from now rather than from the call to
    /// ``reply(to:timeout:keepingArmedOnCancel:)``: for requests sent back to back and
    /// collected one after the other, each bounded from its own write.
    ///
    /// With `lingering`, a request that times out leaves a stand-in armed in its place for that
    /// long (abandoned, see ``abandon(_:timeout:)``): a peer that answers in order and late
    /// then has its late reply taken by the stand-in, not by a later request. No stand-in is
    /// left when a later request was already answered (the reply was lost, not late); give
    /// `lingering` only to requests that more will follow.
    public func arm(timeout: Duration, lingering: Duration? = nil, _ accept: @escaping @Sendable (Message) -> Match) -> Ticket {
        lock.withLock { armLocked(accept, timeout: timeout, lingering: lingering) }
    }

    /// Waits for the reply to `ticket`: throws `RequestCorrelatorError/timedOut` when
    /// `timeout` passes without a message of it (each ``Match/more`` message restarts it), the
    /// error given to ``fail(_:with:)`` or ``failAll(_:)``, or `CancellationError` when the
    /// task is cancelled. A ticket is collected once.
    ///
    /// With `keepingArmedOnCancel`, a cancelled wait ends at once but the request stays armed
    /// (see ``abandon(_:timeout:)``): for a peer that answers in order, whose reply to the
    /// cancelled request must not be taken for the next request's.
    public func reply(to ticket: Ticket, timeout: Duration, keepingArmedOnCancel: Bool = false) async throws -> Reply {
        let waiter = lock.withLock { () -> Int in
            nextID += 1
            return nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Reply, any Error>) in
                let ready: Result<Reply, any Error>? = lock.withLock {
                    guard var entry = pending[ticket.id] else { return .failure(RequestCorrelatorError.unknownTicket) }
                    if let result = entry.result {
                        remove(ticket.id)
                        return result
                    }
                    // Given up on (a cancellation that came before this wait began): nobody
                    // collects it.
                    guard !entry.abandoned else { return .failure(CancellationError()) }
                    guard entry.continuation == nil else { return .failure(RequestCorrelatorError.alreadyWaiting) }
                    entry.continuation = continuation
                    entry.waiter = waiter
                    // A request armed with its own timeout keeps it.
                    if entry.timer == nil {
                        entry.timeout = timeout
                        entry.timerGeneration += 1
                        entry.timer = startTimer(ticket.id, timeout, generation: entry.timerGeneration)
                    }
                    pending[ticket.id] = entry
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            // Only this call's wait: a refused second waiter's cancellation must not end the
            // first one's (before anyone waits, it is this call's to end).
            let resume = lock.withLock { () -> (() -> Void)? in
                guard let entry = pending[ticket.id], entry.waiter == nil || entry.waiter == waiter else { return nil }
                guard keepingArmedOnCancel, entry.result == nil else { return settle(ticket.id, .failure(CancellationError())) }
                let continuation = abandonLocked(ticket.id, timeout: entry.timeout ?? timeout)
                return continuation.map { continuation in { continuation.resume(throwing: CancellationError()) } }
            }
            resume?()
        }
    }

    /// Offers `message` to the armed requests, oldest first. Returns false when none took it.
    @discardableResult
    public func deliver(_ message: Message) -> Bool {
        offer(message) != .notTaken
    }

    /// What became of a message offered to the armed requests.
    public enum Delivery: Sendable, Hashable {
        /// A request took it.
        case taken
        /// A request given up on (``abandon(_:timeout:)``) took it, keeping later replies in
        /// their places; nobody will read it, so the caller may want to salvage it.
        case absorbed
        /// No request took it.
        case notTaken
    }

    /// Offers `message` to the armed requests, oldest first, and says who took it.
    public func offer(_ message: Message) -> Delivery {
        let (delivery, resume) = lock.withLock { () -> (Delivery, (() -> Void)?) in
            for id in order {
                guard var entry = pending[id], entry.result == nil else { continue }
                let taken: Delivery = entry.abandoned ? .absorbed : .taken
                let match = entry.accept(message)
                if match != .notMine {
                    // Requests given up on that are older than the one answered now, and never
                    // began a reply, wait for replies that were lost: a peer answering in order
                    // has moved past them.
                    let stale = order.prefix { $0 != id }.filter { older in
                        guard let entry = pending[older] else { return false }
                        return entry.abandoned && !entry.begun && entry.result == nil
                    }
                    for older in stale {
                        pending[older]?.timer?.cancel()
                        remove(older)
                    }
                }
                switch match {
                case .notMine:
                    continue
                case .more:
                    entry.begun = true
                    if entry.abandoned { entry.reply.omitted += 1 } else { keep(message, in: &entry) }
                    pending[id] = entry
                    let length = entry.reply.messages.count + entry.reply.omitted
                    if length > abandonAfter {
                        return (taken, settle(id, .failure(RequestCorrelatorError.replyTooLong(messages: length))))
                    }
                    entry.timer?.cancel()
                    entry.timerGeneration += 1
                    let generation = entry.timerGeneration
                    entry.timer = entry.timeout.map { startTimer(id, $0, generation: generation) }
                    pending[id] = entry
                    return (taken, nil)
                case .complete:
                    // The closing message is always kept: it often carries the reply's summary.
                    entry.reply.messages.append(message)
                    pending[id] = entry
                    return (taken, settle(id, .success(entry.reply)))
                }
            }
            return (.notTaken, nil)
        }
        resume?()
        return delivery
    }

    /// Ends the wait for `ticket` with `error` (a device's error reply; a write that failed).
    public func fail(_ ticket: Ticket, with error: any Error) {
        let resume = lock.withLock { settle(ticket.id, .failure(error)) }
        resume?()
    }

    /// Forgets `ticket` without waking anyone (its write failed and nobody will wait for it). A
    /// request whose reply may still come should be abandoned instead (``abandon(_:timeout:)``),
    /// so that the reply is not taken for a later request's.
    /// A request that is armed must be collected with ``reply(to:timeout:keepingArmedOnCancel:)`` or cancelled, or
    /// its entry stays.
    public func cancel(_ ticket: Ticket) {
        let (timer, waiting) = lock.withLock { () -> (Task<Void, Never>?, CheckedContinuation<Reply, any Error>?) in
            let entry = pending[ticket.id]
            remove(ticket.id)
            return (entry?.timer, entry?.continuation)
        }
        timer?.cancel()
        // Someone waits after all: they learn it was cancelled.
        waiting?.resume(throwing: CancellationError())
    }

    /// Gives up on `ticket` without disarming it: it still takes its reply, so that a peer
    /// answering in order does not have that reply taken for a later request's, and is forgotten
    /// when the reply ends, when ``failAll(_:)`` runs, or when `timeout` passes without a message
    /// of it. A reply already in is dropped now.
    public func abandon(_ ticket: Ticket, timeout: Duration) {
        let waiting = lock.withLock { () -> CheckedContinuation<Reply, any Error>? in
            guard let entry = pending[ticket.id] else { return nil }
            if entry.result != nil {
                remove(ticket.id)
                return nil
            }
            return abandonLocked(ticket.id, timeout: timeout)
        }
        waiting?.resume(throwing: CancellationError())
    }

    /// Fails every armed request with `error` (the link went down).
    public func failAll(_ error: any Error) {
        let resumes = lock.withLock { order.compactMap { settle($0, .failure(error)) } }
        for resume in resumes { resume() }
    }

    /// The oldest armed request still waiting for its reply (the one a reply that names no
    /// request, such as MeshCore's ERR, answers).
    public var oldestWaiting: Ticket? {
        lock.withLock { order.first { pending[$0]?.result == nil }.map(Ticket.init(id:)) }
    }

    /// The oldest armed request whose multi-message reply is under way (a ``Match/more``
    /// message came): the one a broken part of such a reply belongs to.
    public var oldestUnderWay: Ticket? {
        lock.withLock {
            order.first { id in pending[id].map { $0.result == nil && $0.begun } ?? false }.map(Ticket.init(id:))
        }
    }

    /// The oldest armed request still waiting for the first message of its reply: the one an
    /// error answers when the peer answers in order but streams a long reply over many turns,
    /// answering other requests in between (MeshCore's contact listing).
    public var oldestAwaitingFirstMessage: Ticket? {
        lock.withLock {
            order.first { id in pending[id].map { $0.result == nil && !$0.begun } ?? false }.map(Ticket.init(id:))
        }
    }

    // MARK: - Internals (called with the lock held)

    /// An abandoned request in a timed-out one's place in the order, taking its late reply.
    private func armStandIn(for entry: Pending, replacing id: Int, at place: Int, lingering: Duration) {
        nextID += 1
        var standIn = Pending(accept: entry.accept)
        standIn.begun = entry.begun
        standIn.standIn = true
        pending[nextID] = standIn
        // Right where the timed-out entry was, or just after it while its result waits to be
        // collected.
        if let index = order.firstIndex(of: id) {
            order.insert(nextID, at: index + 1)
        } else {
            order.insert(nextID, at: min(place, order.count))
        }
        abandonLocked(nextID, timeout: lingering)
    }

    private func armLocked(_ accept: @escaping @Sendable (Message) -> Match, timeout: Duration?, lingering: Duration?) -> Ticket {
        nextID += 1
        var entry = Pending(accept: accept)
        entry.lingering = lingering
        if let timeout {
            entry.timeout = timeout
            entry.timerGeneration = 1
            entry.timer = startTimer(nextID, timeout, generation: 1)
        }
        pending[nextID] = entry
        order.append(nextID)
        return Ticket(id: nextID)
    }

    /// Marks `id` given up on, with `timeout` to live; returns the waiter it had, for the
    /// caller to end outside the lock.
    @discardableResult
    private func abandonLocked(_ id: Int, timeout: Duration) -> CheckedContinuation<Reply, any Error>? {
        guard var entry = pending[id] else { return nil }
        let continuation = entry.continuation
        entry.continuation = nil
        entry.waiter = nil
        entry.abandoned = true
        entry.timer?.cancel()
        entry.timeout = timeout
        entry.timerGeneration += 1
        entry.timer = startTimer(id, timeout, generation: entry.timerGeneration)
        pending[id] = entry
        return continuation
    }

    private func keep(_ message: Message, in entry: inout Pending) {
        if entry.reply.messages.count < maximumMessages {
            entry.reply.messages.append(message)
        } else {
            entry.reply.omitted += 1
        }
    }

    /// Records `result`; hands it to a waiting continuation (returned, to resume outside the
    /// lock) or keeps it for ``reply(to:timeout:keepingArmedOnCancel:)``.
    private func settle(_ id: Int, _ result: Result<Reply, any Error>) -> (() -> Void)? {
        guard var entry = pending[id], entry.result == nil else { return nil }
        entry.timer?.cancel()
        entry.timer = nil
        if entry.abandoned {
            remove(id)
            return nil
        }
        if let continuation = entry.continuation {
            remove(id)
            return { continuation.resume(with: result) }
        }
        entry.result = result
        pending[id] = entry
        return nil
    }

    private func remove(_ id: Int) {
        pending[id] = nil
        order.removeAll { $0 == id }
    }

    private func startTimer(_ id: Int, _ timeout: Duration, generation: Int) -> Task<Void, Never> {
        let timeline = self.timeline
        let deadline = timeline.now + timeout
        return Task { [weak self] in
            do { try await timeline.sleep(until: deadline) } catch { return }
            guard !Task.isCancelled, let self else { return }
            let resume = self.lock.withLock { () -> (() -> Void)? in
                guard let entry = self.pending[id], entry.timerGeneration == generation else { return nil }
                let place = self.order.firstIndex(of: id)
                // A peer answering in order that answered a later request has moved past this
                // one: its reply was lost, and a stand-in would only take someone else's.
                let laterHeard = place.map { self.order[($0 + 1)...].contains { self.pending[$0]?.heardFrom == true } } ?? false
                let resume = self.settle(id, .failure(RequestCorrelatorError.timedOut(timeout)))
                // Never for one whose reply came meanwhile.
                if let lingering = entry.lingering, !entry.abandoned, entry.result == nil, let place, !laterHeard {
                    self.armStandIn(for: entry, replacing: id, at: place, lingering: lingering)
                }
                return resume
            }
            resume?()
        }
    }
}

/// Why a ``RequestCorrelator`` wait ended without a reply.
public enum RequestCorrelatorError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No message of the reply came within the timeout.
    case timedOut(Duration)
    /// The ticket was never armed here, or was already collected.
    case unknownTicket
    /// Someone is already waiting for this ticket's reply.
    case alreadyWaiting
    /// The reply went on past the correlator's `abandonAfter` messages.
    case replyTooLong(messages: Int)

    public var description: String {
        switch self {
        case .timedOut(let timeout): "no reply within \(timeout)"
        case .unknownTicket: "no such request is waiting"
        case .alreadyWaiting: "the reply to this request is already awaited"
        case .replyTooLong(let messages): "the reply went on for \(messages) messages"
        }
    }
}
