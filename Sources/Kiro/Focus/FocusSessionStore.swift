import Foundation

/// Persists focus sessions so focus time can be worked out offline (protocol §9.5).
public protocol FocusSessionStore: Sendable {
    /// Stores a session, replacing any stored session with the same id.
    func save(_ session: FocusSession) async throws
    /// All stored sessions, newest start first (sessions starting together ordered by id).
    func allSessions() async throws -> [FocusSession]
    /// Removes every stored session.
    func deleteAll() async throws
}

extension FocusSession {
    /// The order stores list sessions in: newest start first, then by id so that sessions
    /// starting at the same instant still come out in a stable order.
    static func newestFirst(_ lhs: FocusSession, _ rhs: FocusSession) -> Bool {
        if lhs.start != rhs.start { return lhs.start > rhs.start }
        return lhs.id.uuidString < rhs.id.uuidString
    }
}

/// A ``FocusSessionStore`` that keeps sessions in memory, for previews and tests.
public actor InMemoryFocusSessionStore: FocusSessionStore {
    private var sessions: [UUID: FocusSession] = [:]

    /// Creates an empty store.
    public init() {}

    /// Stores a session, replacing any with the same id.
    public func save(_ session: FocusSession) {
        sessions[session.id] = session
    }

    /// All sessions, newest start first.
    public func allSessions() -> [FocusSession] {
        sessions.values.sorted(by: FocusSession.newestFirst)
    }

    /// Removes every session.
    public func deleteAll() {
        sessions.removeAll()
    }
}
