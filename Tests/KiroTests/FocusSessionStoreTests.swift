import Foundation
import Testing

@testable import Kiro
@testable import KiroStorage

// Fixed device timestamps (Unix seconds).
private let t0 = Date(timeIntervalSince1970: 1_700_000_000)

private func session(
    id: UUID = UUID(), taskId: String = "task", start: TimeInterval = 0, length: TimeInterval? = 1_800,
    outcome: FocusSession.Outcome = .completed
) -> FocusSession {
    FocusSession(
        id: id, taskId: taskId, start: t0.addingTimeInterval(start),
        end: length.map { t0.addingTimeInterval(start + $0) }, outcome: length == nil ? .open : outcome
    )
}

/// The store implementations under test; each test runs against all of them.
enum FocusStoreKind: String, CaseIterable, CustomTestStringConvertible {
    case inMemory
    case sqliteInMemory
    case sqliteFile

    var testDescription: String { rawValue }

    /// Runs `body` with a fresh store, removing any file it created afterwards.
    func withStore(_ body: (any FocusSessionStore) async throws -> Void) async throws {
        switch self {
        case .inMemory:
            try await body(InMemoryFocusSessionStore())
        case .sqliteInMemory:
            try await body(SQLiteFocusSessionStore.inMemory())
        case .sqliteFile:
            let directory = FocusTemporaryDirectory()
            defer { directory.remove() }
            try await body(SQLiteFocusSessionStore(path: directory.databasePath))
        }
    }
}

/// A unique directory under the system's temporary directory.
struct FocusTemporaryDirectory {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("kiro-focus-tests-\(UUID().uuidString)", isDirectory: true)

    /// A database path two levels down, so opening it must create the parent directories.
    var databasePath: String { url.appendingPathComponent("nested/data/kiro.sqlite").path }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

@Suite struct FocusSessionStoreTests {
    @Test(arguments: FocusStoreKind.allCases)
    func startsEmpty(kind: FocusStoreKind) async throws {
        try await kind.withStore { store in
            let sessions = try await store.allSessions()
            #expect(sessions.isEmpty)
        }
    }

    @Test(arguments: FocusStoreKind.allCases)
    func everyKindOfSessionRoundTrips(kind: FocusStoreKind) async throws {
        try await kind.withStore { store in
            let completed = session(taskId: "6F9619FF-8B86-D011-B42D-00C04FC964FF", start: 0, outcome: .completed)
            let skipped = session(start: 3_600, length: 45, outcome: .skipped)
            let open = session(start: 7_200, length: nil)
            for item in [completed, skipped, open] {
                try await store.save(item)
            }
            #expect(try await store.allSessions() == [open, skipped, completed])
        }
    }

    @Test(arguments: FocusStoreKind.allCases)
    func sessionsAreListedNewestFirst(kind: FocusStoreKind) async throws {
        try await kind.withStore { store in
            let old = session(start: 0)
            let newest = session(start: 7_200)
            let middle = session(start: 3_600)
            for item in [old, newest, middle] {
                try await store.save(item)
            }
            #expect(try await store.allSessions().map(\.id) == [newest.id, middle.id, old.id])
        }
    }

    @Test(arguments: FocusStoreKind.allCases)
    func simultaneousSessionsAreOrderedById(kind: FocusStoreKind) async throws {
        try await kind.withStore { store in
            let a = session(id: UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!)
            let b = session(id: UUID(uuidString: "00000000-0000-0000-0000-00000000000B")!)
            try await store.save(b)
            try await store.save(a)
            #expect(try await store.allSessions().map(\.id) == [a.id, b.id])
        }
    }

    @Test(arguments: FocusStoreKind.allCases)
    func savingTheSameIdReplaces(kind: FocusStoreKind) async throws {
        try await kind.withStore { store in
            // The usual life of a session: saved when opened, saved again when closed.
            let id = UUID()
            let other = session(start: 60)
            try await store.save(session(id: id, length: nil))
            try await store.save(other)
            let closed = session(id: id, start: 0, length: 2_400, outcome: .skipped)
            try await store.save(closed)
            #expect(try await store.allSessions() == [other, closed])
        }
    }

    @Test(arguments: FocusStoreKind.allCases)
    func deleteAllEmptiesTheStore(kind: FocusStoreKind) async throws {
        try await kind.withStore { store in
            for start in [0.0, 60, 120] {
                try await store.save(session(start: start))
            }
            try await store.deleteAll()
            #expect(try await store.allSessions().isEmpty)
            // Still usable afterwards; deleting an empty store is fine too.
            let next = session(start: 180)
            try await store.save(next)
            #expect(try await store.allSessions() == [next])
            try await store.deleteAll()
            try await store.deleteAll()
            #expect(try await store.allSessions().isEmpty)
        }
    }
}

@Suite struct FocusSQLiteStoreTests {
    @Test func sessionsSurviveReopening() async throws {
        let directory = FocusTemporaryDirectory()
        defer { directory.remove() }
        let first = session(start: 0)
        let second = session(start: 86_400, length: nil)

        do {
            let store = try SQLiteFocusSessionStore(path: directory.databasePath)
            try await store.save(first)
            try await store.save(second)
        }
        #expect(FileManager.default.fileExists(atPath: directory.databasePath))

        // A second instance, as after an app restart; migrating an up-to-date file is a no-op.
        let reopened = try SQLiteFocusSessionStore(path: directory.databasePath)
        #expect(try await reopened.allSessions() == [second, first])
        try await reopened.deleteAll()

        let again = try SQLiteFocusSessionStore(path: directory.databasePath)
        #expect(try await again.allSessions().isEmpty)
    }

    @Test func inMemoryStoresAreIndependent() async throws {
        let a = try SQLiteFocusSessionStore.inMemory()
        let b = try SQLiteFocusSessionStore.inMemory()
        try await a.save(session())
        #expect(try await b.allSessions().isEmpty)
    }

    @Test func fractionalTimestampsSurviveToWellUnderAMillisecond() async throws {
        let store = try SQLiteFocusSessionStore.inMemory()
        let start = Date(timeIntervalSince1970: 1_700_000_000.1234)
        let end = Date(timeIntervalSince1970: 1_700_001_800.5678)
        try await store.save(FocusSession(taskId: "t", start: start, end: end, outcome: .completed))
        let loaded = try #require(try await store.allSessions().first)
        #expect(abs(loaded.start.timeIntervalSince(start)) < 1e-6)
        let loadedEnd = try #require(loaded.end)
        #expect(abs(loadedEnd.timeIntervalSince(end)) < 1e-6)
    }

    @Test func defaultPathPrefersTetherDataDir() {
        let path = SQLiteFocusSessionStore.defaultPath(
            environment: ["TETHER_DATA_DIR": "/srv/tether", "XDG_DATA_HOME": "/xdg"], homeDirectory: "/home/u"
        )
        #expect(path == "/srv/tether/kiro.sqlite")
    }

    @Test func defaultPathUsesXDGDataHome() {
        let path = SQLiteFocusSessionStore.defaultPath(environment: ["XDG_DATA_HOME": "/xdg"], homeDirectory: "/home/u")
        #expect(path == "/xdg/tether/kiro.sqlite")
    }

    @Test(arguments: [[:], ["XDG_DATA_HOME": ""], ["XDG_DATA_HOME": "relative"], ["TETHER_DATA_DIR": ""]])
    func defaultPathFallsBackToLocalShare(environment: [String: String]) {
        let path = SQLiteFocusSessionStore.defaultPath(environment: environment, homeDirectory: "/home/u")
        #expect(path == "/home/u/.local/share/tether/kiro.sqlite")
    }

    @Test func publicDefaultPathEndsWithTheFileName() {
        #expect(SQLiteFocusSessionStore.defaultPath().hasSuffix("/kiro.sqlite"))
    }
}
