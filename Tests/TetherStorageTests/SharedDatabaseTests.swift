import Foundation
import GRDB
import Testing
import FlockFinder
import GripFit
import Kiro
import MeshCore
@testable import TetherStorage
import FlockFinderStorage
import GripFitStorage
import KiroStorage
import MeshCoreStorage

/// The stores as several processes and careless users meet them: one file shared, writers at
/// the same time, read-only opens of what does not exist, files from before the migrations had
/// names of their own.
@Suite struct SharedDatabaseTests {
    /// A fresh folder, removed afterwards.
    private func withFolder(_ body: (URL) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tether-storage-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await body(folder)
    }

    private func grip(_ index: Int) -> GripSessionRecord {
        GripSessionRecord(summary: GripSessionSummary(id: UUID(), startedAt: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)),
                                                      duration: 3, maxForce: 40, averageForce: 20, sampleCount: 1),
                          samples: [GripSample(offset: 0, raw: 1000, force: 20)])
    }

    @Test func storesOfDifferentDevicesShareOneFile() async throws {
        // Every store's migration was called "v1": the second store in a file found "v1" done
        // and failed with "no such table".
        try await withFolder { folder in
            let path = folder.appendingPathComponent("all.sqlite").path
            let grips = try SQLiteGripSessionStore(path: path)
            let focus = try SQLiteFocusSessionStore(path: path)
            let detections = try DetectionStore(path: path)
            _ = try MeshStore(path: path)
            try await grips.save(grip(0))
            try await focus.save(FocusSession(taskId: "t1", start: Date(timeIntervalSince1970: 1_700_000_000)))
            _ = try await detections.record(Detection(type: .flockSafety, rssi: -60, confidence: 0.9, mac: nil, ssid: nil))
            #expect(try await grips.allSessions().count == 1)
            #expect(try await focus.allSessions().count == 1)
            #expect(try await detections.detections(type: nil, since: nil).count == 1)
        }
    }

    @Test func writersOnSeparateConnectionsAllLand() async throws {
        // Four `gripfit stream`s at once lost 3 of 4 sessions to "database is locked".
        try await withFolder { folder in
            let path = folder.appendingPathComponent("gripfit.sqlite").path
            let stores = try (0..<4).map { _ in try SQLiteGripSessionStore(path: path) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, store) in stores.enumerated() {
                    group.addTask {
                        for round in 0..<25 { try await store.save(grip(index * 100 + round)) }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await stores[0].allSessions().count == 100)
            let mode = try await DatabaseQueue(path: path).read { try String.fetchOne($0, sql: "PRAGMA journal_mode") }
            #expect(mode == "wal")
        }
    }

    @Test func processesOpeningANewFileTogetherAllGetIn() async throws {
        // Switching a new file to WAL and migrating it are where the busy timeout cannot help:
        // 3 of 4 racing opens failed ("database is locked", a UNIQUE constraint on the
        // migrations table) before the open was retried.
        try await withFolder { folder in
            for round in 0..<40 {
                let path = folder.appendingPathComponent("race\(round).sqlite").path
                let failures = Failures()
                DispatchQueue.concurrentPerform(iterations: 6) { _ in
                    do { _ = try SQLiteGripSessionStore(path: path) } catch { failures.add("\(error)") }
                }
                #expect(failures.all.isEmpty, "round \(round): \(failures.all)")
            }
        }
    }

    @Test func aWriteProtectedFileFailsTheReadWriteOpenAtOnce() async throws {
        try await withFolder { folder in
            let path = folder.appendingPathComponent("gripfit.sqlite").path
            _ = try SQLiteGripSessionStore(path: path)
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
            defer { try? FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path) }
            guard getuid() != 0 else {
                // root writes through any permission bits: what it checks cannot happen here.
                #expect(throws: Never.self) { try SQLiteGripSessionStore(path: path) }
                return
            }
            let error = #expect(throws: TetherStorageError.self) { try SQLiteGripSessionStore(path: path) }
            #expect(error?.message == "cannot write to the database \(path)")
        }
    }

    @Test func aReadOnlyStoreReadsAfterItsWriterHasGone() async throws {
        try await withFolder { folder in
            let path = folder.appendingPathComponent("gripfit.sqlite").path
            do {
                let writer = try SQLiteGripSessionStore(path: path)
                try await writer.save(grip(7))
            }
            let reader = try SQLiteGripSessionStore(path: path, access: .readOnly)
            #expect(try await reader.allSessions().count == 1)
        }
    }

    @Test func readOnlyOpensCreateNothingAndSayWhatIsMissing() async throws {
        try await withFolder { folder in
            let missingFolder = folder.appendingPathComponent("nonexistent")
            let path = missingFolder.appendingPathComponent("gripfit.sqlite").path
            let error = #expect(throws: TetherStorageError.self) { try SQLiteGripSessionStore(path: path, access: .readOnly) }
            #expect(error?.message == "no database at \(path)")
            #expect(!FileManager.default.fileExists(atPath: missingFolder.path), "a read-only open created the folder")
            // A folder given as the database is no database either.
            #expect(throws: TetherStorageError.self) { try DetectionStore(path: folder.path, access: .readOnly) }
            // Another store's file: said so, not an empty answer.
            let other = folder.appendingPathComponent("kiro.sqlite").path
            _ = try SQLiteFocusSessionStore(path: other)
            let wrong = #expect(throws: TetherStorageError.self) { try SQLiteGripSessionStore(path: other, access: .readOnly) }
            #expect(wrong?.message.contains("holds no GripFit sessions") == true)
        }
    }

    @Test func aReadOnlyStoreReadsWhatAWriterKept() async throws {
        try await withFolder { folder in
            let path = folder.appendingPathComponent("gripfit.sqlite").path
            let writer = try SQLiteGripSessionStore(path: path)
            try await writer.save(grip(1))
            let reader = try SQLiteGripSessionStore(path: path, access: .readOnly)
            #expect(try await reader.allSessions().count == 1)
            try await writer.save(grip(2))
            #expect(try await reader.allSessions().count == 2)
        }
    }

    @Test func aFileFromBeforeTheNamedMigrationsOpensAsItIs() async throws {
        try await withFolder { folder in
            let path = folder.appendingPathComponent("gripfit.sqlite").path
            // What the first wave wrote: the tables, and a migration recorded as "v1".
            let legacy = try DatabaseQueue(path: path)
            try await legacy.write { db in
                try db.execute(sql: LegacySchemas.gripFitV1(recordedAs: "v1"))
            }
            try legacy.close()
            let store = try SQLiteGripSessionStore(path: path)
            try await store.save(grip(3))
            #expect(try await store.allSessions().count == 1)
        }
    }
}

/// Errors collected from several threads.
final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func add(_ item: String) { lock.withLock { items.append(item) } }
    var all: [String] { lock.withLock { items } }
}
