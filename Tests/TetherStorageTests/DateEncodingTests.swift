import Foundation
import GRDB
import Testing
import FlockFinder
import GripFit
import Kiro
import MeshCore
import TetherStorage
import FlockFinderStorage
import GripFitStorage
import KiroStorage
import MeshCoreStorage

/// One date encoding in every store (Unix seconds as REAL, `StoredRecord`), and the v2
/// migrations that bring files written before it there without losing a row.
@Suite struct DateEncodingTests {
    private func withFile(_ body: (String) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tether-dates-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await body(folder.appendingPathComponent("shared.sqlite").path)
    }

    /// The stored value (nil unless a number) and its SQLite type, read past the stores.
    private func raw(_ path: String, _ sql: String) throws -> (type: String, value: Double?) {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            let row = try #require(try Row.fetchOne(db, sql: sql))
            return (row[0] as String? ?? "", row[1] as DatabaseValue == .null ? nil : Double.fromDatabaseValue(row[1]))
        }
    }

    @Test func everyStoreKeepsDatesAsUnixSeconds() async throws {
        try await withFile { path in
            let when = Date(timeIntervalSince1970: 1_764_028_800.25)
            try await SQLiteGripSessionStore(path: path).save(GripSessionRecord(
                summary: GripSessionSummary(id: UUID(), startedAt: when, duration: 2, maxForce: 30, averageForce: 15, sampleCount: 0),
                samples: []))
            try await SQLiteFocusSessionStore(path: path).save(FocusSession(taskId: "t1", start: when, end: when.addingTimeInterval(60), outcome: .completed))
            _ = try await MeshStore(path: path).insertMessage(MeshMessage(direction: .incoming, kind: .direct, peer: "aabb", text: "hi",
                                                                            timestamp: 1, status: .received, storedAt: when))
            _ = try await DetectionStore(path: path).record(Detection(type: DetectionType(name: "flock"), rssi: -60, confidence: 0.9),
                                                            receivedAt: when)
            for (table, column) in [("gripSession", "startedAt"), ("focusSession", "startedAt"),
                                    ("meshMessage", "storedAt"), ("flockDetection", "receivedAt")] {
                let stored = try raw(path, "SELECT typeof(\(column)), \(column) FROM \(table)")
                #expect(stored.type == "real", "\(table).\(column)")
                #expect(abs((stored.value ?? 0) - 1_764_028_800.25) < 1e-6, "\(table).\(column) holds \(String(describing: stored.value))")
            }
            // And they come back as they went in.
            #expect(abs(try await SQLiteGripSessionStore(path: path).allSessions()[0].startedAt.timeIntervalSince(when)) < 1e-6)
            #expect(try await SQLiteFocusSessionStore(path: path).allSessions()[0].start == when)
            #expect(abs(try await MeshStore(path: path).messages()[0].storedAt.timeIntervalSince(when)) < 1e-6)
            let detections = try await DetectionStore(path: path).detections(since: when.addingTimeInterval(-1))
            #expect(detections.count == 1)
            #expect(abs(try #require(detections.first).receivedAt.timeIntervalSince(when)) < 1e-6)
            #expect(try await DetectionStore(path: path).detections(since: when.addingTimeInterval(1)).isEmpty)
        }
    }

    @Test func aGripFitFileWithDateTextIsConvertedAndKeepsItsSamples() async throws {
        try await withFile { path in
            let id = UUID()
            let legacy = try DatabaseQueue(path: path)
            try await legacy.write { db in
                try db.execute(sql: LegacySchemas.gripFitV1(recordedAs: "gripfit.v1"))
                try db.execute(sql: "INSERT INTO gripSession VALUES (?, '2025-11-25 00:00:00.250', 2, 30, 15, 2)", arguments: [id.uuidString])
                try db.execute(sql: "INSERT INTO gripSample VALUES (?, 0, 1000, 10), (?, 0.1, 1100, 12)",
                               arguments: [id.uuidString, id.uuidString])
            }
            try legacy.close()

            let store = try SQLiteGripSessionStore(path: path)
            let record = try #require(try await store.session(id: id))
            #expect(record.summary.startedAt == Date(timeIntervalSince1970: 1_764_028_800.25))
            #expect(record.samples.map(\.raw) == [1000, 1100])
            #expect(try raw(path, "SELECT typeof(startedAt), startedAt FROM gripSession").type == "real")
            // The samples' reference to the rebuilt table still holds: deleting cascades.
            try await store.deleteSession(id: id)
            #expect(try raw(path, "SELECT 'count', COUNT(*) FROM gripSample").value == 0)
        }
    }

    @Test func aMeshCoreFileWithDateTextIsConvertedAndKeepsItsIds() async throws {
        try await withFile { path in
            let legacy = try DatabaseQueue(path: path)
            try await legacy.write { db in
                try db.execute(sql: """
                    CREATE TABLE meshContact (publicKey TEXT PRIMARY KEY, name TEXT NOT NULL, type INTEGER NOT NULL,
                      flags INTEGER NOT NULL, outPath BLOB, lastAdvert INTEGER NOT NULL, latitude DOUBLE NOT NULL,
                      longitude DOUBLE NOT NULL, lastModified INTEGER NOT NULL);
                    CREATE TABLE meshChannel (channelIndex INTEGER PRIMARY KEY, name TEXT NOT NULL, secret BLOB NOT NULL);
                    CREATE TABLE meshMessage (id INTEGER PRIMARY KEY AUTOINCREMENT, dedupKey TEXT NOT NULL UNIQUE,
                      direction TEXT NOT NULL, kind TEXT NOT NULL, peer TEXT, channelIndex INTEGER, senderName TEXT,
                      text TEXT NOT NULL, timestamp INTEGER NOT NULL, pathLength INTEGER, snr DOUBLE, status TEXT NOT NULL,
                      ack INTEGER, roundTrip INTEGER, storedAt DATETIME NOT NULL);
                    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                    INSERT INTO grdb_migrations VALUES ('meshcore.v1');
                    INSERT INTO meshMessage (id, dedupKey, direction, kind, peer, text, timestamp, status, storedAt)
                      VALUES (7, 'k7', 'incoming', 'direct', 'aabb', 'old', 5, 'received', '2025-11-25 00:00:01.500');
                    UPDATE sqlite_sequence SET seq = 9 WHERE name = 'meshMessage';
                    """)
            }
            try legacy.close()

            let store = try MeshStore(path: path)
            let old = try #require(try await store.messages().first)
            #expect(old.id == 7)
            #expect(old.storedAt == Date(timeIntervalSince1970: 1_764_028_801.5))
            // The row ids go on from where they were: past 9, the newest id ever handed out
            // (rows 8 and 9 were deleted), not past 7, the newest kept.
            let new = try #require(try await store.insertMessage(MeshMessage(direction: .incoming, kind: .direct, peer: "aabb",
                                                                             text: "new", timestamp: 6, status: .received)))
            #expect(new.id == 10)
            #expect(try await store.messages().map(\.text) == ["old", "new"])
        }
    }

    @Test func aFlockFinderFileCountingFrom2001IsConverted() async throws {
        try await withFile { path in
            let when = Date(timeIntervalSince1970: 1_764_028_800)
            let legacy = try DatabaseQueue(path: path)
            try await legacy.write { db in
                try db.execute(sql: LegacySchemas.flockFinderV1)
                try db.execute(sql: "INSERT INTO flockDetection (receivedAt, type, rssi, confidence) VALUES (?, 'flock', -50, 0.8)",
                               arguments: [when.timeIntervalSinceReferenceDate])
            }
            try legacy.close()

            let stored = try await DetectionStore(path: path).detections()
            #expect(stored.map(\.receivedAt) == [when])
        }
    }

    @Test func aReadOnlyOpenOfAnOlderLayoutSaysSoAndAWriterUpgradesIt() async throws {
        try await withFile { path in
            let legacy = try DatabaseQueue(path: path)
            try await legacy.write { db in
                try db.execute(sql: LegacySchemas.flockFinderV1)
                try db.execute(sql: "INSERT INTO flockDetection (receivedAt, type, rssi, confidence) VALUES (786000000, 'flock', -50, 0.8)")
            }
            try legacy.close()
            // Read as it is, it would be 1994: a reader refuses rather than misreads.
            #expect {
                _ = try DetectionStore(path: path, access: .readOnly)
            } throws: { error in
                (error as? TetherStorageError)?.message.contains("older layout") == true
            }
            _ = try DetectionStore(path: path)
            let read = try await DetectionStore(path: path, access: .readOnly).detections()
            #expect(read.map(\.receivedAt) == [Date(timeIntervalSinceReferenceDate: 786_000_000)])
        }
    }

    @Test func aFirstWaveFileWhoseLayoutNeverChangedStillOpensReadOnly() async throws {
        try await withFile { path in
            let legacy = try DatabaseQueue(path: path)
            try await legacy.write { db in
                try db.execute(sql: """
                    CREATE TABLE focusSession (id TEXT PRIMARY KEY, taskId TEXT NOT NULL, startedAt DOUBLE NOT NULL,
                      endedAt DOUBLE, outcome TEXT NOT NULL);
                    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                    INSERT INTO grdb_migrations VALUES ('v1');
                    INSERT INTO focusSession VALUES ('00000000-0000-4000-8000-000000000001', 't1', 1764028800, NULL, 'open');
                    """)
            }
            try legacy.close()
            // Only the migration's name is missing (kiro.v1 over the table v1 made).
            let sessions = try await SQLiteFocusSessionStore(path: path, access: .readOnly).allSessions()
            #expect(sessions.map(\.start) == [Date(timeIntervalSince1970: 1_764_028_800)])
        }
    }
}
