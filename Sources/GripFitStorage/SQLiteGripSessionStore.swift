import Foundation
import TetherCore
import GRDB
import TetherStorage
import GripFit

/// A `GripSessionStore` backed by an SQLite database (through GRDB).
///
/// Schema (migrations `gripfit.v1`, `gripfit.v2`): `gripSession` holds one row per summary, keyed
/// by the session id as upper-case UUID text; `gripSample` holds the samples, referencing their
/// session with `ON DELETE CASCADE`, so deleting a session deletes its samples.
///
/// `startedAt` is Unix seconds (REAL), as in every Tether store (`StoredRecord`): it comes back
/// to well within a microsecond; offsets, forces and raw values round-trip exactly.
public final class SQLiteGripSessionStore: GripSessionStore {
    private let dbQueue: DatabaseQueue

    /// Opens the database at `path` (`TetherDatabase/open(path:access:)`: shared safely with
    /// other processes). Read-write creates it and its folder if needed and brings its schema up
    /// to date; read-only needs an existing GripFit sessions database.
    public convenience init(path: String, access: TetherDatabase.Access = .readWrite) throws {
        try self.init(storedAt: path, access: access)
    }

    private init(storedAt path: String?, access: TetherDatabase.Access = .readWrite) throws {
        dbQueue = try TetherDatabase.openStore(path: path, access: access, migrator: Self.migrator,
                                               table: SessionRow.databaseTableName, holding: "GripFit sessions")
    }

    /// A store in a fresh private in-memory database, gone when the store is released.
    public static func inMemory() throws -> SQLiteGripSessionStore {
        try SQLiteGripSessionStore(storedAt: nil)
    }

    // MARK: - Schema

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        TetherDatabase.registerFirstMigration(&migrator, store: "gripfit", table: SessionRow.databaseTableName) { db in
            try createSessionTable(db, named: SessionRow.databaseTableName, startedAtType: .datetime)
            try db.create(table: SampleRow.databaseTableName) { t in
                t.column("sessionId", .text).notNull().indexed()
                    .references(SessionRow.databaseTableName, onDelete: .cascade)
                t.column("offset", .double).notNull()
                t.column("raw", .integer).notNull()
                t.column("force", .double).notNull()
            }
        }
        // v2: `startedAt` in Unix seconds (REAL), the encoding every store shares
        // (`StoredRecord`); v1 wrote GRDB's date text. The table is rebuilt, as SQLite
        // recommends, with foreign keys off for the migration (GRDB's default), so the samples
        // that reference it stay.
        migrator.registerMigration("gripfit.v2") { db in
            try createSessionTable(db, named: "gripSession_v2", startedAtType: .double)
            try db.execute(sql: """
                INSERT INTO gripSession_v2 (id, startedAt, duration, maxForce, averageForce, sampleCount)
                SELECT id, \(TetherDatabase.unixSeconds(fromDateText: "startedAt")), duration, maxForce, averageForce, sampleCount
                FROM gripSession
                """)
            try db.drop(table: "gripSession")
            try db.rename(table: "gripSession_v2", to: "gripSession")
        }
        return migrator
    }

    /// The sessions table as each migration made it (v1 kept `startedAt` as date text). Frozen:
    /// both migrations run it, so a change of schema is a new migration, never an edit here.
    private static func createSessionTable(_ db: Database, named name: String, startedAtType: Database.ColumnType) throws {
        try db.create(table: name) { t in
            t.primaryKey("id", .text)
            t.column("startedAt", startedAtType).notNull()
            t.column("duration", .double).notNull()
            t.column("maxForce", .double).notNull()
            t.column("averageForce", .double).notNull()
            t.column("sampleCount", .integer).notNull()
        }
    }

    // MARK: - GripSessionStore

    /// Stores a session in one transaction: upserts its summary and replaces its samples.
    public func save(_ record: GripSessionRecord) async throws {
        try await dbQueue.countedWrite { db in
            let session = SessionRow(record.summary)
            let key = session.id.uuidString
            // Upsert rather than INSERT OR REPLACE: REPLACE deletes the old row first, which
            // would fire the cascade; the samples are replaced explicitly below instead.
            try session.upsert(db)
            try SampleRow.filter(SampleRow.Columns.sessionId == key).deleteAll(db)
            for sample in record.samples {
                try SampleRow(sessionId: key, sample).insert(db)
            }
        }
    }

    /// The summaries of all stored sessions, newest start first.
    public func allSessions() async throws -> [GripSessionSummary] {
        try await dbQueue.countedRead { db in
            try SessionRow
                .order(SessionRow.Columns.startedAt.desc, SessionRow.Columns.id)
                .fetchAll(db)
                .map(\.summary)
        }
    }

    /// The stored session with this id and its samples in recorded order, or nil.
    public func session(id: UUID) async throws -> GripSessionRecord? {
        let key = id.uuidString
        return try await dbQueue.countedRead { db in
            guard let session = try SessionRow.fetchOne(db, key: key) else { return nil }
            // Rows are inserted in recorded order, so rowid order is recorded order even when
            // offsets are not monotonic (a clock stepping back).
            let samples = try SampleRow
                .filter(SampleRow.Columns.sessionId == key)
                .order(Column.rowID)
                .fetchAll(db)
            return GripSessionRecord(summary: session.summary, samples: samples.map(\.sample))
        }
    }

    /// Removes the session with this id; its samples go with it through the cascade.
    public func deleteSession(id: UUID) async throws {
        let key = id.uuidString
        _ = try await dbQueue.countedWrite { db in
            try SessionRow.deleteOne(db, key: key)
        }
    }
}

extension SQLiteGripSessionStore {
    /// How many sample rows the database holds across all sessions; lets tests see that
    /// deleting or replacing a session leaves no orphaned samples behind.
    func storedSampleRowCount() async throws -> Int {
        try await dbQueue.countedRead { db in try SampleRow.fetchCount(db) }
    }
}

// MARK: - Rows

/// A `gripSession` row.
private struct SessionRow: Codable, StoredRecord, PersistableRecord {
    static let databaseTableName = "gripSession"

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let startedAt = Column(CodingKeys.startedAt)
    }

    var id: UUID
    var startedAt: Date
    var duration: Double
    var maxForce: Double
    var averageForce: Double
    var sampleCount: Int

    init(_ summary: GripSessionSummary) {
        id = summary.id
        startedAt = summary.startedAt
        duration = summary.duration
        maxForce = summary.maxForce
        averageForce = summary.averageForce
        sampleCount = summary.sampleCount
    }

    var summary: GripSessionSummary {
        GripSessionSummary(
            id: id,
            startedAt: startedAt,
            duration: duration,
            maxForce: maxForce,
            averageForce: averageForce,
            sampleCount: sampleCount
        )
    }
}

/// A `gripSample` row.
private struct SampleRow: Codable, StoredRecord, PersistableRecord {
    static let databaseTableName = "gripSample"

    enum Columns {
        static let sessionId = Column(CodingKeys.sessionId)
    }

    var sessionId: String
    var offset: Double
    var raw: Int32
    var force: Double

    init(sessionId: String, _ sample: GripSample) {
        self.sessionId = sessionId
        offset = sample.offset
        raw = sample.raw
        force = sample.force
    }

    var sample: GripSample { GripSample(offset: offset, raw: raw, force: force) }
}

extension SQLiteGripSessionStore: DataDirectoryStore {
    /// The file that keeps grip sessions in the data directory.
    public static let dataFileName = "gripfit.sqlite"
}
