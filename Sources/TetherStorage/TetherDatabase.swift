import Foundation
import GRDB

/// How every Tether store opens its SQLite file: one rule for all, so several processes (a
/// `flock watch` and a `flock history`, four `gripfit stream`s) can share a database.
///
/// - Write-ahead logging: readers never block the writer, nor the writer the readers.
/// - A busy timeout: a writer waits for another process's transaction instead of failing at
///   once with "database is locked".
/// - Read-only access for commands that only read: a missing file (a mistyped `--database`)
///   is an error, never a new empty database, and no folder is created (SQLite may add its
///   `-wal`/`-shm` companions beside a database it reads).
public enum TetherDatabase {
    /// What a store will do with the database.
    public enum Access: Sendable {
        /// Open or create it (and its folder), and bring its schema up to date.
        case readWrite
        /// Open it as it is; it must exist.
        case readOnly
    }

    /// How long a write waits for another process's transaction before it fails.
    public static let busyTimeout: TimeInterval = 10

    /// Opens the database at `path`; for ``Access/readWrite`` with `migrator`, also brings its
    /// schema up to date.
    ///
    /// Processes opening the same new (or first-wave) file at the same moment meet where the
    /// busy timeout cannot help — switching the file to WAL, and two migrators both finding a
    /// migration missing — so the open and the migration are tried again for up to
    /// ``busyTimeout``. A read-write open also proves the file can be written (SQLite opens a
    /// write-protected file read-only without a word).
    /// - Throws: ``TetherStorageError`` with a sentence for the user (a missing file for
    ///   ``Access/readOnly``, a folder that cannot be created, a file that cannot be written),
    ///   or GRDB's error.
    public static func open(path: String, access: Access = .readWrite, migrator: DatabaseMigrator? = nil) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.busyMode = .timeout(busyTimeout)
        switch access {
        case .readOnly:
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
                throw TetherStorageError("no database at \(path)")
            }
            configuration.readonly = true
        case .readWrite:
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            } catch {
                throw TetherStorageError("cannot create the folder \(directory.path) for \(path)")
            }
            // GRDB sets it and checks SQLite agreed (and lowers `synchronous` to NORMAL, safe in WAL).
            configuration.journalMode = .wal
        }
        let deadline = Date().addingTimeInterval(busyTimeout)
        while true {
            do {
                let queue = try DatabaseQueue(path: path, configuration: configuration)
                if access == .readWrite {
                    do {
                        try queue.inDatabase { try $0.execute(sql: "BEGIN IMMEDIATE; ROLLBACK") }
                    } catch let error as DatabaseError where error.resultCode == .SQLITE_READONLY {
                        throw TetherStorageError("cannot write to the database \(path)")
                    }
                    try migrator?.migrate(queue)
                }
                return queue
            } catch let error as DatabaseError
                where [.SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_CONSTRAINT].contains(error.resultCode) && Date() < deadline {
                // Another process is switching the file to WAL or migrating it: once more.
                Thread.sleep(forTimeInterval: 0.05)
            } catch let error as DatabaseError {
                throw TetherStorageError("cannot open the database \(path): \(error.message ?? "SQLite error \(error.resultCode.rawValue)")")
            }
        }
    }

    /// How every store opens its database: ``open(path:access:migrator:)`` for a file (a
    /// read-write open migrates it; either way `table` must then be there), or, with no path, a
    /// private in-memory database brought up to date (`access` does not apply to it).
    ///
    /// - Parameters:
    ///   - path: the SQLite file, or nil for a private in-memory database.
    ///   - access: read-write (create and migrate) or read-only (an existing file, untouched).
    ///   - migrator: the store's schema, by migration.
    ///   - table: the store's main table, which a file must hold to be the store's.
    ///   - holding: what the store keeps, for the error when a file is someone else's
    ///     ("GripFit sessions").
    public static func openStore(path: String?, access: Access = .readWrite, migrator: DatabaseMigrator,
                                 table: String, holding: String) throws -> DatabaseQueue {
        guard let path else {
            let queue = try inMemory()
            try migrator.migrate(queue)
            return queue
        }
        // Migrated by the open (read-write), where racing processes are retried; a migration
        // recorded over a table that is gone (a partial copy) is caught here too.
        let queue = try open(path: path, access: access, migrator: migrator)
        if try !queue.read({ try $0.tableExists(table) }) {
            throw TetherStorageError("\(path) holds no \(holding) (another program's database, or an empty file)")
        }
        // A read-only open cannot bring the file up to date, and rows in an older layout would
        // be misread without a word. A missing first migration (`<store>.v1`) over a table that
        // is there only records its name (a first-wave file): nothing to misread.
        if access == .readOnly {
            let completed = Set(try queue.read { try migrator.completedMigrations($0) })
            let missing = migrator.migrations.filter { !completed.contains($0) && !$0.hasSuffix(".v1") }
            if !missing.isEmpty {
                throw TetherStorageError("""
                    \(path) holds \(holding) in an older layout (\(missing.joined(separator: ", ")) not applied): \
                    open it once for writing (the command that records into it, with this file as its database) \
                    to bring it up to date
                    """)
            }
        }
        return queue
    }

    /// A private database in memory, gone when released (tests, previews).
    public static func inMemory() throws -> DatabaseQueue {
        try DatabaseQueue()
    }

    /// Registers a store's first migration under a name of its own (`<store>.v1`), so stores
    /// can share one file. Files written before the names were the stores' own recorded a
    /// shared `v1`: when `table` already exists the migration only records its new name.
    public static func registerFirstMigration(_ migrator: inout DatabaseMigrator, store: String, table: String,
                                              _ body: @escaping @Sendable (Database) throws -> Void) {
        migrator.registerMigration("\(store).v1") { db in
            guard try !db.tableExists(table) else { return }
            try body(db)
        }
    }
}

/// A storage problem, in one sentence for the user.
public struct TetherStorageError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// The sentence.
    public let message: String
    /// Creates the error.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
    public var errorDescription: String? { message }
}
