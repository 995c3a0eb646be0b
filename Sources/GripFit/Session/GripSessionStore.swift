import Foundation

/// Persists finished grip sessions (guide §3.4).
///
/// Sessions are saved once, when a test is complete, never reading by reading. The BLE layer
/// knows nothing of stores; whoever owns a ``GripSession`` saves its ``GripSession/record(endedAt:)``.
public protocol GripSessionStore: Sendable {
    /// Stores a session, replacing any stored session with the same id (samples included).
    func save(_ record: GripSessionRecord) async throws
    /// The summaries of all stored sessions, newest start first.
    func allSessions() async throws -> [GripSessionSummary]
    /// The stored session with this id, with its samples in recorded order; nil if none.
    func session(id: UUID) async throws -> GripSessionRecord?
    /// Removes the session with this id and its samples; does nothing if there is none.
    func deleteSession(id: UUID) async throws
}

extension GripSessionSummary {
    /// The order stores list sessions in: newest start first, then by id so that sessions
    /// starting at the same instant still come out in a stable order.
    static func newestFirst(_ lhs: GripSessionSummary, _ rhs: GripSessionSummary) -> Bool {
        if lhs.startedAt != rhs.startedAt { return lhs.startedAt > rhs.startedAt }
        return lhs.id.uuidString < rhs.id.uuidString
    }
}

/// A store that keeps sessions in memory, for previews and tests.
public actor InMemoryGripSessionStore: GripSessionStore {
    private var records: [UUID: GripSessionRecord]

    /// Creates a store holding `records` (later duplicates of an id win, as with ``save(_:)``).
    public init(records: [GripSessionRecord] = []) {
        self.records = Dictionary(records.map { ($0.id, $0) }, uniquingKeysWith: { _, new in new })
    }

    /// Stores a session, replacing any with the same id.
    public func save(_ record: GripSessionRecord) {
        records[record.id] = record
    }

    /// The summaries of all sessions, newest start first.
    public func allSessions() -> [GripSessionSummary] {
        records.values.map(\.summary).sorted(by: GripSessionSummary.newestFirst)
    }

    /// The session with this id, or nil.
    public func session(id: UUID) -> GripSessionRecord? {
        records[id]
    }

    /// Removes the session with this id, if any.
    public func deleteSession(id: UUID) {
        records[id] = nil
    }

    /// How many samples the store holds across all sessions (mirrors the SQLite store's
    /// check for orphaned samples in tests).
    func storedSampleRowCount() -> Int {
        records.values.reduce(0) { $0 + $1.samples.count }
    }
}
