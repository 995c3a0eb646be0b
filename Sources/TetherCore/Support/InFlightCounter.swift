import Foundation

/// Counts operations in flight and lets a caller wait until none is.
///
/// For work that runs outside Swift's task scheduler (a dispatch queue, SQLite's writer): a
/// caller that must not go on while such work is pending (a tool before it exits, a test
/// scheduler before it moves virtual time) waits on the count instead of polling.
public final class InFlightCounter: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var inFlight = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// A counter at zero.
    public init() {}

    /// Operations begun and not yet ended.
    public var count: Int { lock.withLock { inFlight } }

    /// Counts one more operation; balance it with ``end()``.
    public func begin() {
        lock.withLock { inFlight += 1 }
    }

    /// Counts one operation done; the last one wakes every waiter.
    public func end() {
        let ready = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            inFlight -= 1
            guard inFlight == 0 else { return [] }
            defer { waiters.removeAll() }
            return waiters
        }
        for waiter in ready { waiter.resume() }
    }

    /// Returns once no operation is in flight; true if it had to wait.
    @discardableResult
    public func waitWhileBusy() async -> Bool {
        guard count > 0 else { return false }
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let idle = lock.withLock { () -> Bool in
                guard inFlight > 0 else { return true }
                waiters.append(waiter)
                return false
            }
            if idle { waiter.resume() }
        }
        return true
    }
}
