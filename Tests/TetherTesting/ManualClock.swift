import Foundation

/// A clock that moves only when told to: ``TestTime`` moves it to the next sleeper's deadline
/// once every task is idle (``wakeNext(notAfter:)``).
///
/// Unlike swift-clocks' `TestClock`, it neither steps nor yields: it only records sleepers and
/// wakes them, in deadline order, so that when time moves is decided by the scheduler alone.
public final class ManualClock: Clock, @unchecked Sendable {
    /// A moment: time since the clock was made.
    public struct Instant: InstantProtocol, Hashable, Sendable {
        /// Time since the clock was made.
        public var offset: Duration

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        let deadline: Instant
        let order: Int
        let continuation: CheckedContinuation<Void, any Error>
    }

    // Guarded by `lock`.
    private let lock = NSLock()
    private var current = Instant(offset: .zero)
    private var sleepers: [Int: Sleeper] = [:]
    private var nextID = 0

    /// A clock at its origin.
    public init() {}

    public var now: Instant { lock.withLock { current } }
    public var minimumResolution: Duration { .zero }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = lock.withLock { () -> Int in
            nextID += 1
            return nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Checked under the lock: a cancellation that lands before the sleeper is
                // registered finds nothing to remove, so it must be seen here.
                let outcome = lock.withLock { () -> Result<Void, CancellationError>? in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    guard deadline > current else { return .success(()) }
                    sleepers[id] = Sleeper(deadline: deadline, order: id, continuation: continuation)
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let sleeper = lock.withLock { sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// The earliest deadline a sleeper waits for, if any sleeps.
    public var nextDeadline: Instant? {
        lock.withLock { sleepers.values.map(\.deadline).min() }
    }

    /// Moves the clock to the earliest sleeper's deadline if it is no later than `limit`, and
    /// wakes that sleeper (the first to sleep, among several due at once); false (the clock
    /// unmoved) when no sleeper is due by `limit`. ``TestTime`` calls it only when every task is
    /// idle, so work one timer wakes can still cancel another due at the same instant.
    public func wakeNext(notAfter limit: Instant) -> Bool {
        wakeNext(notAfter: limit, orMoveThere: false)
    }

    /// ``wakeNext(notAfter:)``; when no sleeper is due by `limit` and `orMoveThere`, moves the
    /// clock to `limit` instead (in the same step, so no sleeper can slip in between) and
    /// returns true.
    public func wakeNext(notAfter limit: Instant, orMoveThere: Bool) -> Bool {
        let (next, moved) = lock.withLock { () -> (Sleeper?, Bool) in
            guard let (id, sleeper) = sleepers.min(by: { ($0.value.deadline, $0.value.order) < ($1.value.deadline, $1.value.order) }),
                  sleeper.deadline <= limit else {
                guard orMoveThere else { return (nil, false) }
                current = max(current, limit)
                return (nil, true)
            }
            sleepers[id] = nil
            current = max(current, sleeper.deadline)
            return (sleeper, false)
        }
        next?.continuation.resume()
        return next != nil || moved
    }

    /// Moves the clock to `instant` (never back) without waking anyone: call it only when no
    /// sleeper is due by then.
    public func move(to instant: Instant) {
        lock.withLock { current = max(current, instant) }
    }
}
