import Foundation
import Testing

@testable import GripFit
@testable import GripFitStorage

// Fixed instants; offsets are binary fractions so that date arithmetic is exact.
private let start = Date(timeIntervalSince1970: 1_700_000_000)

private func reading(_ force: Double, at offset: TimeInterval, raw: Int32? = nil) -> GripReading {
    GripReading(raw: raw ?? Int32(force), force: force, receivedAt: start.addingTimeInterval(offset))
}

// MARK: - In-memory recording

@Suite struct GripSessionTests {
    @Test func summaryOfKnownReadings() {
        let id = UUID()
        var session = GripSession(id: id, startedAt: start)
        for (i, force) in [10.0, 30, 20, 40].enumerated() {
            session.record(reading(force, at: 0.25 * Double(i + 1)))
        }

        let summary = session.summary()
        #expect(summary == GripSessionSummary(
            id: id, startedAt: start, duration: 1.0, maxForce: 40, averageForce: 25, sampleCount: 4
        ))
        #expect(session.summary(endedAt: start.addingTimeInterval(2.5)).duration == 2.5)
        #expect(session.readings.map(\.force) == [10, 30, 20, 40])
        #expect(!session.isTruncated)
    }

    @Test func statisticsUseForceNotRaw() {
        var session = GripSession(startedAt: start)
        session.record(GripReading(raw: 1_000, force: 2.0, receivedAt: start))
        session.record(GripReading(raw: 3_000, force: 6.0, receivedAt: start.addingTimeInterval(0.5)))
        let summary = session.summary()
        #expect(summary.maxForce == 6)
        #expect(summary.averageForce == 4)
    }

    @Test func allNegativeForcesKeepANegativeMaximum() {
        var session = GripSession(startedAt: start)
        session.record(reading(-5, at: 0.5))
        session.record(reading(-3, at: 1))
        let summary = session.summary()
        #expect(summary.maxForce == -3)
        #expect(summary.averageForce == -4)
    }

    @Test func emptySession() {
        let session = GripSession(startedAt: start)
        let summary = session.summary()
        #expect(summary.sampleCount == 0)
        #expect(summary.maxForce == 0)
        #expect(summary.averageForce == 0)
        #expect(summary.duration == 0)
        #expect(session.summary(endedAt: start.addingTimeInterval(3)).duration == 3)
        #expect(session.record().samples.isEmpty)
    }

    @Test func durationIsNeverNegative() {
        var session = GripSession(startedAt: start)
        #expect(session.summary(endedAt: start.addingTimeInterval(-1)).duration == 0)
        session.record(reading(1, at: -2))  // the clock stepped back
        #expect(session.summary().duration == 0)
    }

    @Test func defaultBoundIsOneHourAtTenHertz() {
        #expect(GripSession(startedAt: start).maxSamples == 36_000)
        #expect(GripSession.defaultMaxSamples == 36_000)
    }

    @Test func boundedSamplesKeepExactStatistics() {
        var session = GripSession(startedAt: start, maxSamples: 3)
        let forces: [Double] = [1, 2, 3, 4, 100]
        for (i, force) in forces.enumerated() {
            session.record(reading(force, at: Double(i)))
        }

        // Only the first three are kept...
        #expect(session.readings.map(\.force) == [1, 2, 3])
        #expect(session.isTruncated)
        #expect(session.count == 5)
        // ...but the statistics cover all five, including the peak that was not kept.
        let summary = session.summary()
        #expect(summary.sampleCount == 5)
        #expect(summary.maxForce == 100)
        #expect(summary.averageForce == 22)
        #expect(summary.duration == 4)

        let record = session.record()
        #expect(record.summary == summary)
        #expect(record.samples.count == 3)
    }

    @Test func zeroBoundKeepsOnlyStatistics() {
        var session = GripSession(startedAt: start, maxSamples: 0)
        session.record(reading(7, at: 1))
        #expect(session.readings.isEmpty)
        #expect(session.summary().maxForce == 7)
        #expect(session.summary().sampleCount == 1)
    }

    @Test func recordTimesSamplesFromTheStart() {
        var session = GripSession(startedAt: start)
        session.record(GripReading(raw: 120, force: 1.5, receivedAt: start.addingTimeInterval(0.5)))
        session.record(GripReading(raw: -8, force: -0.25, receivedAt: start.addingTimeInterval(1.25)))

        let record = session.record(endedAt: start.addingTimeInterval(2))
        #expect(record.id == session.id)
        #expect(record.samples == [
            GripSample(offset: 0.5, raw: 120, force: 1.5),
            GripSample(offset: 1.25, raw: -8, force: -0.25),
        ])
        #expect(record.summary.duration == 2)
    }

    @Test func recordSurvivesJSON() throws {
        var session = GripSession(startedAt: start)
        session.record(reading(12.5, at: 0.5, raw: 25))
        let record = session.record()
        let decoded = try JSONDecoder().decode(GripSessionRecord.self, from: JSONEncoder().encode(record))
        #expect(decoded == record)
    }
}

// MARK: - Stores

/// The store implementations under test; each test runs against all of them.
enum GripStoreKind: String, CaseIterable, CustomTestStringConvertible {
    case inMemory
    case sqliteInMemory
    case sqliteFile

    var testDescription: String { rawValue }

    /// Runs `body` with a fresh store, removing any file it created afterwards.
    func withStore(_ body: (any GripSessionStore) async throws -> Void) async throws {
        switch self {
        case .inMemory:
            try await body(InMemoryGripSessionStore())
        case .sqliteInMemory:
            try await body(SQLiteGripSessionStore.inMemory())
        case .sqliteFile:
            let directory = GripTemporaryDirectory()
            defer { directory.remove() }
            try await body(SQLiteGripSessionStore(path: directory.databasePath))
        }
    }
}

/// A unique directory under the system's temporary directory.
struct GripTemporaryDirectory {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("gripfit-tests-\(UUID().uuidString)", isDirectory: true)

    /// A database path two levels down, so opening it must create the parent directories.
    var databasePath: String { url.appendingPathComponent("nested/data/gripfit.sqlite").path }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// How many samples a store holds in total, to see that none are orphaned.
private func sampleRowCount(_ store: any GripSessionStore) async throws -> Int {
    switch store {
    case let store as SQLiteGripSessionStore: return try await store.storedSampleRowCount()
    case let store as InMemoryGripSessionStore: return await store.storedSampleRowCount()
    default:
        Issue.record("unexpected store \(type(of: store))")
        return -1
    }
}

private func makeRecord(
    id: UUID = UUID(), startedAt: Date = start, forces: [Double] = [10, 20, 30]
) -> GripSessionRecord {
    var session = GripSession(id: id, startedAt: startedAt)
    for (i, force) in forces.enumerated() {
        session.record(GripReading(
            raw: Int32(force * 4), force: force, receivedAt: startedAt.addingTimeInterval(0.125 * Double(i))
        ))
    }
    return session.record(endedAt: startedAt.addingTimeInterval(10))
}

@Suite struct GripSessionStoreTests {
    @Test(arguments: GripStoreKind.allCases)
    func roundTrip(kind: GripStoreKind) async throws {
        try await kind.withStore { store in
            let record = makeRecord(forces: [1.5, -2, 8_388_607, 0.1])
            try await store.save(record)

            #expect(try await store.session(id: record.id) == record)
            #expect(try await store.allSessions() == [record.summary])
            #expect(try await store.session(id: UUID()) == nil)
        }
    }

    @Test(arguments: GripStoreKind.allCases)
    func emptySessionRoundTrips(kind: GripStoreKind) async throws {
        try await kind.withStore { store in
            let record = GripSession(startedAt: start).record()
            try await store.save(record)
            #expect(try await store.session(id: record.id) == record)
        }
    }

    @Test(arguments: GripStoreKind.allCases)
    func sessionsAreListedNewestFirst(kind: GripStoreKind) async throws {
        try await kind.withStore { store in
            let old = makeRecord(startedAt: start)
            let newest = makeRecord(startedAt: start.addingTimeInterval(7_200))
            let middle = makeRecord(startedAt: start.addingTimeInterval(3_600))
            for record in [old, newest, middle] {
                try await store.save(record)
            }
            #expect(try await store.allSessions().map(\.id) == [newest.id, middle.id, old.id])
        }
    }

    @Test(arguments: GripStoreKind.allCases)
    func simultaneousSessionsAreOrderedById(kind: GripStoreKind) async throws {
        try await kind.withStore { store in
            let a = makeRecord(id: UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!)
            let b = makeRecord(id: UUID(uuidString: "00000000-0000-0000-0000-00000000000B")!)
            try await store.save(b)
            try await store.save(a)
            #expect(try await store.allSessions().map(\.id) == [a.id, b.id])
        }
    }

    @Test(arguments: GripStoreKind.allCases)
    func deleteRemovesTheSessionAndItsSamples(kind: GripStoreKind) async throws {
        try await kind.withStore { store in
            let doomed = makeRecord(forces: [1, 2, 3, 4])
            let kept = makeRecord(startedAt: start.addingTimeInterval(60), forces: [5, 6])
            try await store.save(doomed)
            try await store.save(kept)
            #expect(try await sampleRowCount(store) == 6)

            try await store.deleteSession(id: doomed.id)

            #expect(try await store.session(id: doomed.id) == nil)
            #expect(try await store.allSessions() == [kept.summary])
            #expect(try await store.session(id: kept.id) == kept)
            #expect(try await sampleRowCount(store) == 2)
        }
    }

    @Test(arguments: GripStoreKind.allCases)
    func deletingAnUnknownSessionChangesNothing(kind: GripStoreKind) async throws {
        try await kind.withStore { store in
            let record = makeRecord()
            try await store.save(record)
            try await store.deleteSession(id: UUID())
            #expect(try await store.allSessions() == [record.summary])
        }
    }

    @Test(arguments: GripStoreKind.allCases)
    func savingTheSameIdReplaces(kind: GripStoreKind) async throws {
        try await kind.withStore { store in
            let id = UUID()
            try await store.save(makeRecord(id: id, forces: [1, 2, 3]))
            let replacement = makeRecord(id: id, startedAt: start.addingTimeInterval(5), forces: [50])
            try await store.save(replacement)

            #expect(try await store.session(id: id) == replacement)
            #expect(try await store.allSessions() == [replacement.summary])
            #expect(try await sampleRowCount(store) == 1)
        }
    }

    @Test(arguments: GripStoreKind.allCases)
    func sampleOrderIsRecordedOrder(kind: GripStoreKind) async throws {
        try await kind.withStore { store in
            // Offsets out of order (a clock that stepped back) must not reorder samples.
            let samples = [
                GripSample(offset: 1, raw: 1, force: 1),
                GripSample(offset: 0.5, raw: 2, force: 2),
                GripSample(offset: 2, raw: 3, force: 3),
            ]
            let summary = GripSessionSummary(
                id: UUID(), startedAt: start, duration: 2, maxForce: 3, averageForce: 2, sampleCount: 3
            )
            try await store.save(GripSessionRecord(summary: summary, samples: samples))
            #expect(try await store.session(id: summary.id)?.samples == samples)
        }
    }
}

// MARK: - SQLite specifics

@Suite struct SQLiteGripSessionStoreTests {
    @Test func sessionsSurviveReopening() async throws {
        let directory = GripTemporaryDirectory()
        defer { directory.remove() }
        let first = makeRecord(forces: [3, 1, 4, 1, 5])
        let second = makeRecord(startedAt: start.addingTimeInterval(86_400), forces: [9, 2, 6])

        do {
            let store = try SQLiteGripSessionStore(path: directory.databasePath)
            try await store.save(first)
            try await store.save(second)
        }
        #expect(FileManager.default.fileExists(atPath: directory.databasePath))

        // A second instance, as after an app restart; migrating an up-to-date file is a no-op.
        let reopened = try SQLiteGripSessionStore(path: directory.databasePath)
        #expect(try await reopened.allSessions() == [second.summary, first.summary])
        #expect(try await reopened.session(id: first.id) == first)
        #expect(try await reopened.session(id: second.id) == second)
    }

    @Test func inMemoryStoresAreIndependent() async throws {
        let a = try SQLiteGripSessionStore.inMemory()
        let b = try SQLiteGripSessionStore.inMemory()
        try await a.save(makeRecord())
        #expect(try await b.allSessions().isEmpty)
    }

    @Test func startedAtKeepsMillisecondPrecision() async throws {
        let store = try SQLiteGripSessionStore.inMemory()
        let startedAt = Date(timeIntervalSince1970: 1_700_000_000.1234)
        let record = GripSession(startedAt: startedAt).record()
        try await store.save(record)
        let loaded = try #require(try await store.session(id: record.id))
        #expect(abs(loaded.summary.startedAt.timeIntervalSince(startedAt)) < 0.001)
    }

    @Test func aFullHourSessionRoundTrips() async throws {
        let store = try SQLiteGripSessionStore.inMemory()
        var session = GripSession(startedAt: start)
        for i in 0..<(GripSession.defaultMaxSamples + 10) {
            session.record(GripReading(raw: Int32(i), force: Double(i % 100), receivedAt: start.addingTimeInterval(Double(i) / 10)))
        }
        let record = session.record()
        #expect(record.samples.count == GripSession.defaultMaxSamples)
        #expect(record.summary.sampleCount == GripSession.defaultMaxSamples + 10)

        try await store.save(record)
        #expect(try await store.session(id: record.id) == record)
    }

    @Test func defaultPathPrefersTetherDataDir() {
        let path = SQLiteGripSessionStore.defaultPath(
            environment: ["TETHER_DATA_DIR": "/srv/tether", "XDG_DATA_HOME": "/xdg"], homeDirectory: "/home/u"
        )
        #expect(path == "/srv/tether/gripfit.sqlite")
    }

    @Test func defaultPathUsesXDGDataHome() {
        let path = SQLiteGripSessionStore.defaultPath(environment: ["XDG_DATA_HOME": "/xdg"], homeDirectory: "/home/u")
        #expect(path == "/xdg/tether/gripfit.sqlite")
    }

    @Test(arguments: [[:], ["XDG_DATA_HOME": ""], ["XDG_DATA_HOME": "relative"], ["TETHER_DATA_DIR": ""]])
    func defaultPathFallsBackToLocalShare(environment: [String: String]) {
        let path = SQLiteGripSessionStore.defaultPath(environment: environment, homeDirectory: "/home/u")
        #expect(path == "/home/u/.local/share/tether/gripfit.sqlite")
    }

    @Test func publicDefaultPathEndsWithTheFileName() {
        #expect(SQLiteGripSessionStore.defaultPath().hasSuffix("/gripfit.sqlite"))
    }
}
