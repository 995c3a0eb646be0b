import Foundation
import GRDB

/// Counts the stores' database operations in flight, process-wide.
///
/// GRDB runs an operation on its own dispatch queue, outside Swift's task scheduler. Counting
/// them lets a caller wait until every pending write has landed: a command-line tool before it
/// exits, and a deterministic test scheduler before it moves virtual time (no timer may fire
/// while a write that would have beaten it is still in SQLite's hands).
public enum DatabaseActivity {
    private static let tracker = Tracker()

    /// Operations started through `countedRead`/`countedWrite` and not yet finished.
    public static var operationsInFlight: Int { tracker.count }

    /// Returns once no operation is in flight; true if it had to wait.
    @discardableResult
    public static func waitWhileBusy() async -> Bool {
        await tracker.waitWhileBusy()
    }

    static func begin() { tracker.begin() }
    static func end() { tracker.end() }

    private final class Tracker: @unchecked Sendable {
        // Guarded by `lock`.
        private let lock = NSLock()
        private var inFlight = 0
        private var waiters: [CheckedContinuation<Void, Never>] = []

        var count: Int { lock.withLock { inFlight } }

        func begin() {
            lock.withLock { inFlight += 1 }
        }

        func end() {
            let ready = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
                inFlight -= 1
                guard inFlight == 0 else { return [] }
                defer { waiters.removeAll() }
                return waiters
            }
            for waiter in ready { waiter.resume() }
        }

        func waitWhileBusy() async -> Bool {
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
}

extension DatabaseWriter {
    /// GRDB's async `read`, counted in ``DatabaseActivity`` while it runs.
    public func countedRead<T: Sendable>(_ value: @Sendable (Database) throws -> T) async throws -> T {
        DatabaseActivity.begin()
        defer { DatabaseActivity.end() }
        return try await read(value)
    }

    /// GRDB's async `write` (one transaction), counted in ``DatabaseActivity`` while it runs.
    public func countedWrite<T: Sendable>(_ updates: @Sendable (Database) throws -> T) async throws -> T {
        DatabaseActivity.begin()
        defer { DatabaseActivity.end() }
        return try await write(updates)
    }
}
