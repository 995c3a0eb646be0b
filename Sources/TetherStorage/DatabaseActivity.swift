import Foundation
import GRDB
import TetherCore

/// Counts the stores' database operations in flight, process-wide.
///
/// GRDB runs an operation on its own dispatch queue, outside Swift's task scheduler. Counting
/// them lets a caller wait until every pending write has landed: a deterministic test scheduler
/// does before it moves virtual time, so that no timer fires while a write that would have
/// beaten it is still in SQLite's hands.
public enum DatabaseActivity {
    private static let counter = InFlightCounter()

    /// Operations started through `countedRead`/`countedWrite` and not yet finished.
    public static var operationsInFlight: Int { counter.count }

    /// Returns once no operation is in flight; true if it had to wait.
    @discardableResult
    public static func waitWhileBusy() async -> Bool {
        await counter.waitWhileBusy()
    }

    static func begin() { counter.begin() }
    static func end() { counter.end() }
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
