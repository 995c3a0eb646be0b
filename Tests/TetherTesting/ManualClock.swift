import Foundation

/// A clock that moves only when a test says so, for code that does nothing but sleep on its
/// clock (the liveness watchdog, the request correlator).
///
/// ``advance(by:step:)`` moves time in steps (10 ms by default), waking each sleeper at its own
/// deadline, in order, and letting ready work run (plain yields) after each wake and each step,
/// so work that sleeps again after a few hops is still woken on time within the same advance. Unlike swift-clocks' `TestClock`, it spawns no background-priority tasks to
/// let work run, which a machine busy with the whole suite starves (tests stepping a
/// `TestClock` over seconds exceeded a minute in CI).
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
                let due = lock.withLock { () -> Bool in
                    guard deadline > current else { return true }
                    sleepers[id] = Sleeper(deadline: deadline, order: id, continuation: continuation)
                    return false
                }
                if due { continuation.resume() }
            }
        } onCancel: {
            let sleeper = lock.withLock { sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock on by `duration` in `step`s, waking every sleeper whose deadline comes,
    /// in order, each at its deadline, and letting the work it wakes run before going on.
    public func advance(by duration: Duration, step: Duration = .milliseconds(10)) async {
        await settle()
        let end = lock.withLock { current.advanced(by: duration) }
        var reached = now
        while reached < end {
            let target = min(reached.advanced(by: step), end)
            while let next = takeSleeper(dueBy: target) {
                next.continuation.resume()
                await settle()
            }
            lock.withLock { current = max(current, target) }
            reached = target
            await settle()
        }
    }

    /// The earliest deadline a sleeper waits for, if any sleeps.
    public var nextDeadline: Instant? {
        lock.withLock { sleepers.values.map(\.deadline).min() }
    }

    /// Moves the clock to the earliest sleeper's deadline if it is no later than `limit`, and
    /// wakes every sleeper due then, in the order they slept; false (the clock unmoved) when no
    /// sleeper is due by `limit`. ``TestTime`` calls it only when every task is idle.
    public func wakeNext(notAfter limit: Instant) -> Bool {
        let due = lock.withLock { () -> [Sleeper] in
            guard let deadline = sleepers.values.map(\.deadline).min(), deadline <= limit else { return [] }
            let due = sleepers.filter { $0.value.deadline == deadline }
            for id in due.keys { sleepers[id] = nil }
            current = max(current, deadline)
            return due.values.sorted { $0.order < $1.order }
        }
        for sleeper in due { sleeper.continuation.resume() }
        return !due.isEmpty
    }

    /// Moves the clock to `instant` (never back) without waking anyone: call it only when no
    /// sleeper is due by then.
    public func move(to instant: Instant) {
        lock.withLock { current = max(current, instant) }
    }

    /// The earliest sleeper due by `target` (the clock set to its deadline), if any.
    private func takeSleeper(dueBy target: Instant) -> Sleeper? {
        lock.withLock { () -> Sleeper? in
            guard let (id, sleeper) = sleepers.filter({ $0.value.deadline <= target })
                .min(by: { ($0.value.deadline, $0.value.order) < ($1.value.deadline, $1.value.order) }) else { return nil }
            sleepers[id] = nil
            current = max(current, sleeper.deadline)
            return sleeper
        }
    }

    /// Lets work that is ready run before time moves.
    private func settle() async {
        for _ in 0..<5 { await Task.yield() }
    }
}
