import Foundation
import TetherCore
import GRDB
import TetherStorage
import Kiro

/// A `FocusSessionStore` backed by an SQLite database (through GRDB).
///
/// Schema (migration `kiro.v1`): `focusSession` holds one row per session, keyed by the session id
/// as upper-case UUID text. `startedAt` and `endedAt` (NULL while open) are stored as Unix
/// seconds (REAL), as in every Tether store (`StoredRecord`) and the unit the device sends, so
/// whole-second timestamps round-trip exactly.
public final class SQLiteFocusSessionStore: FocusSessionStore {
    private let dbQueue: DatabaseQueue

    /// Opens the database at `path` (`TetherDatabase/open(path:access:)`: shared safely with
    /// other processes). Read-write creates it and its folder if needed and brings its schema up
    /// to date; read-only needs an existing Kiro focus sessions database.
    public convenience init(path: String, access: TetherDatabase.Access = .readWrite) throws {
        try self.init(storedAt: path, access: access)
    }

    private init(storedAt path: String?, access: TetherDatabase.Access = .readWrite) throws {
        dbQueue = try TetherDatabase.openStore(path: path, access: access, migrator: Self.migrator,
                                               table: FocusSessionRow.databaseTableName, holding: "Kiro focus sessions")
    }

    /// A store in a fresh private in-memory database, gone when the store is released.
    public static func inMemory() throws -> SQLiteFocusSessionStore {
        try SQLiteFocusSessionStore(storedAt: nil)
    }

    // MARK: - Schema

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        TetherDatabase.registerFirstMigration(&migrator, store: "kiro", table: FocusSessionRow.databaseTableName) { db in
            try db.create(table: FocusSessionRow.databaseTableName) { t in
                t.primaryKey("id", .text)
                t.column("taskId", .text).notNull().indexed()
                // Not "start"/"end": END is an SQL keyword.
                t.column("startedAt", .double).notNull().indexed()
                t.column("endedAt", .double)
                t.column("outcome", .text).notNull()
            }
        }
        return migrator
    }

    // MARK: - FocusSessionStore

    /// Stores a session, replacing any stored session with the same id.
    public func save(_ session: FocusSession) async throws {
        try await dbQueue.countedWrite { db in
            try FocusSessionRow(session).upsert(db)
        }
    }

    /// All stored sessions, newest start first (then by id).
    public func allSessions() async throws -> [FocusSession] {
        try await dbQueue.countedRead { db in
            try FocusSessionRow
                .order(FocusSessionRow.Columns.startedAt.desc, FocusSessionRow.Columns.id)
                .fetchAll(db)
                .map(\.session)
        }
    }

    /// Removes every stored session.
    public func deleteAll() async throws {
        _ = try await dbQueue.countedWrite { db in
            try FocusSessionRow.deleteAll(db)
        }
    }
}

// MARK: - Rows

/// A `focusSession` row.
private struct FocusSessionRow: Codable, StoredRecord, PersistableRecord {
    static let databaseTableName = "focusSession"

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let startedAt = Column(CodingKeys.startedAt)
    }

    var id: UUID
    var taskId: String
    var startedAt: Date
    var endedAt: Date?
    var outcome: FocusSession.Outcome

    init(_ session: FocusSession) {
        id = session.id
        taskId = session.taskId
        startedAt = session.start
        endedAt = session.end
        outcome = session.outcome
    }

    var session: FocusSession {
        FocusSession(id: id, taskId: taskId, start: startedAt, end: endedAt, outcome: outcome)
    }
}

extension SQLiteFocusSessionStore: DataDirectoryStore {
    /// The file that keeps focus sessions in the data directory.
    public static let dataFileName = "kiro.sqlite"
}
