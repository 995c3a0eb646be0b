import Foundation
import Testing

@testable import FlockFinder
@testable import FlockFinderStorage

@Suite("FlockFinder detection store")
struct StoreDetectionTests {
    private let base = StoreFixtures.base

    // MARK: - Confidence filter

    @Test func defaultThresholdIsOneHalfInclusive() async throws {
        let store = try DetectionStore.inMemory()
        #expect(await store.minimumConfidence == 0.5)
        #expect(try await store.record(StoreFixtures.detection(confidence: 0.45), receivedAt: base) == nil)
        #expect(try await store.record(StoreFixtures.detection(confidence: 0.4999999), receivedAt: base) == nil)
        #expect(try await store.record(StoreFixtures.detection(confidence: 0.5), receivedAt: base) != nil)
        #expect(try await store.record(StoreFixtures.detection(confidence: 0.85), receivedAt: base) != nil)
        #expect(try await store.detections().count == 2)
        #expect(await store.recent.count == 2)
    }

    @Test func thresholdCanBeChanged() async throws {
        let store = try DetectionStore.inMemory(minimumConfidence: 0.2)
        #expect(try await store.record(StoreFixtures.detection(confidence: 0.3), receivedAt: base) != nil)
        await store.setMinimumConfidence(0.9)
        #expect(await store.minimumConfidence == 0.9)
        #expect(try await store.record(StoreFixtures.detection(confidence: 0.85), receivedAt: base) == nil)
        #expect(try await store.record(StoreFixtures.detection(confidence: 0.9), receivedAt: base) != nil)
        // Already stored detections stay.
        #expect(try await store.detections().map(\.detection.confidence) == [0.9, 0.3])
    }

    @Test func thresholdIsClampedAndIgnoresNaN() async throws {
        let store = try DetectionStore.inMemory(minimumConfidence: 7)
        #expect(await store.minimumConfidence == 1)
        await store.setMinimumConfidence(-3)
        #expect(await store.minimumConfidence == 0)
        await store.setMinimumConfidence(.nan)
        #expect(await store.minimumConfidence == 0)
        #expect(try await DetectionStore.inMemory(minimumConfidence: .nan).minimumConfidence == 0.5)
    }

    @Test func droppedDetectionsDoNotAskForALocation() async throws {
        let provider = StoreCountingLocationProvider(Location(latitude: 1, longitude: 2))
        let store = try DetectionStore.inMemory(locationProvider: provider)
        try await store.record(StoreFixtures.detection(confidence: 0.1), receivedAt: base)
        #expect(await provider.calls == 0)
        try await store.record(StoreFixtures.detection(confidence: 0.9), receivedAt: base)
        #expect(await provider.calls == 1)
    }

    // MARK: - Receipt time and location

    @Test func receiptTimeAndLocationAreStored() async throws {
        let location = Location(latitude: 37.774_929, longitude: -122.419_416, horizontalAccuracy: 12.5)
        let store = try DetectionStore.inMemory(locationProvider: FixedLocationProvider(location))
        let receivedAt = Date(timeIntervalSince1970: 1_704_307_200.123_456)
        let detection = StoreFixtures.detection(.other("Raven (Gunshot Detector)"), confidence: 0.85, ssid: nil, ts: UInt64.max)
        let stored = try #require(try await store.record(detection, receivedAt: receivedAt))
        #expect(stored.detection == detection)
        #expect(stored.receivedAt == receivedAt)
        #expect(stored.location == location)
        #expect(stored.id > 0)
        // The database gives back exactly the same values.
        #expect(try await store.detections() == [stored])
        #expect(await store.recent == [stored])
    }

    @Test func locationIsNilWithoutProviderOrFix() async throws {
        let none = try DetectionStore.inMemory()
        #expect(try await none.record(StoreFixtures.detection(), receivedAt: base)?.location == nil)
        let noFix = try DetectionStore.inMemory(locationProvider: FixedLocationProvider(nil))
        #expect(try await noFix.record(StoreFixtures.detection(), receivedAt: base)?.location == nil)
        let withoutAccuracy = try DetectionStore.inMemory(
            locationProvider: FixedLocationProvider(Location(latitude: -33.86, longitude: 151.21))
        )
        let stored = try await withoutAccuracy.record(StoreFixtures.detection(), receivedAt: base)
        #expect(try await withoutAccuracy.detections().first?.location == Location(latitude: -33.86, longitude: 151.21))
        #expect(stored?.location?.horizontalAccuracy == nil)
    }

    @Test func recordDefaultsToNow() async throws {
        let store = try DetectionStore.inMemory()
        let before = Date()
        let stored = try #require(try await store.record(StoreFixtures.detection()))
        #expect(stored.receivedAt >= before && stored.receivedAt <= Date())
    }

    // MARK: - Recent

    @Test func recentKeepsTheTenNewestNewestFirst() async throws {
        let store = try DetectionStore.inMemory()
        var stored: [StoredDetection] = []
        for index in 0..<15 {
            let detection = StoreFixtures.detection(rssi: -40 - index)
            stored.append(try #require(try await store.record(detection, receivedAt: base + Double(index))))
        }
        let recent = await store.recent
        #expect(recent.count == 10)
        #expect(recent == Array(stored.reversed().prefix(10)))
        #expect(recent.first?.detection.rssi == -54)
        // An old detection arriving late is stored but is not among the most recent.
        let late = try #require(try await store.record(StoreFixtures.detection(), receivedAt: base - 60))
        #expect(await store.recent == recent)
        #expect(try await store.detections().last == late)
        // Same receipt time: the later insert counts as newer.
        let tie = try #require(try await store.record(StoreFixtures.detection(), receivedAt: base + 14))
        #expect(await store.recent.first == tie)
        #expect(await store.recent[1] == stored[14])
    }

    @Test func concurrentRecordsKeepRecentOrdered() async throws {
        let store = try DetectionStore.inMemory(locationProvider: FixedLocationProvider(Location(latitude: 0, longitude: 0)))
        let base = base
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<40 {
                group.addTask {
                    try await store.record(StoreFixtures.detection(rssi: -index), receivedAt: base + Double(index))
                }
            }
            try await group.waitForAll()
        }
        let recent = await store.recent
        #expect(recent.map(\.detection.rssi) == Array((30..<40).reversed()).map { -$0 })
        #expect(try await store.detections().count == 40)
    }

    @Test func recentAndDataSurviveReopening() async throws {
        try await StoreFixtures.withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("nested/flockfinder.sqlite").path
            let location = Location(latitude: 51.5, longitude: -0.12, horizontalAccuracy: 5)
            var recentBefore: [StoredDetection] = []
            do {
                let store = try DetectionStore(path: path, locationProvider: FixedLocationProvider(location))
                for index in 0..<12 {
                    let type = DetectionType.known[index % DetectionType.known.count]
                    try await store.record(
                        StoreFixtures.detection(type, ssid: "net, \"\(index)\"", ts: UInt64(index)),
                        receivedAt: base + Double(index) * 0.25
                    )
                }
                recentBefore = await store.recent
            }
            #expect(FileManager.default.fileExists(atPath: path))
            let reopened = try DetectionStore(path: path, minimumConfidence: 0.95)
            #expect(await reopened.recent == recentBefore)
            #expect(await reopened.recent.count == 10)
            #expect(await reopened.recent.first?.location == location)
            #expect(try await reopened.detections().count == 12)
            #expect(await reopened.minimumConfidence == 0.95)
            // New records continue the id sequence and lead the recent list.
            let next = try #require(try await reopened.record(StoreFixtures.detection(confidence: 1), receivedAt: base + 100))
            #expect(next.id == 13)
            #expect(await reopened.recent.first == next)
            #expect(await reopened.recent.count == 10)
        }
    }

    // MARK: - Queries

    @Test func countsByType() async throws {
        let store = try DetectionStore.inMemory()
        #expect(try await store.countsByType().isEmpty)
        let types: [DetectionType] = [.ring, .ring, .ring, .flockSafety, .flockSafety, .other("Penguin"), .unknown]
        for (index, type) in types.enumerated() {
            try await store.record(StoreFixtures.detection(type), receivedAt: base + Double(index))
        }
        try await store.record(StoreFixtures.detection(.verkada, confidence: 0.1), receivedAt: base)
        let counts = try await store.countsByType()
        #expect(counts == [.ring: 3, .flockSafety: 2, .other("Penguin"): 1, .unknown: 1])
    }

    @Test func detectionsFilterByTypeAndSince() async throws {
        let store = try DetectionStore.inMemory()
        let types: [DetectionType] = [.ring, .flockSafety, .ring, .other("Pigvision"), .ring, .flockSafety]
        var stored: [StoredDetection] = []
        for (index, type) in types.enumerated() {
            stored.append(try #require(try await store.record(StoreFixtures.detection(type), receivedAt: base + Double(index * 60))))
        }
        #expect(try await store.detections() == stored.reversed())
        #expect(try await store.detections(type: .ring) == [stored[4], stored[2], stored[0]])
        #expect(try await store.detections(type: .other("Pigvision")) == [stored[3]])
        #expect(try await store.detections(type: .axis).isEmpty)
        // `since` is inclusive.
        #expect(try await store.detections(since: base + 120) == [stored[5], stored[4], stored[3], stored[2]])
        #expect(try await store.detections(since: base + 120.001) == [stored[5], stored[4], stored[3]])
        #expect(try await store.detections(type: .flockSafety, since: base + 60) == [stored[5], stored[1]])
        #expect(try await store.detections(type: .flockSafety, since: base + 1000).isEmpty)
    }

    // MARK: - Paths

    @Test func defaultPathFollowsTheEnvironment() {
        #expect(DetectionStore.defaultPath(environment: ["TETHER_DATA_DIR": "/data", "XDG_DATA_HOME": "/xdg"], homeDirectory: "/home/u")
            == "/data/flockfinder.sqlite")
        #expect(DetectionStore.defaultPath(environment: ["XDG_DATA_HOME": "/xdg"], homeDirectory: "/home/u")
            == "/xdg/tether/flockfinder.sqlite")
        #expect(DetectionStore.defaultPath(environment: ["XDG_DATA_HOME": "relative", "TETHER_DATA_DIR": ""], homeDirectory: "/home/u")
            == "/home/u/.local/share/tether/flockfinder.sqlite")
        #expect(DetectionStore.defaultPath(environment: [:], homeDirectory: "/home/u")
            == "/home/u/.local/share/tether/flockfinder.sqlite")
        #expect(DetectionStore.defaultPath().hasSuffix("/flockfinder.sqlite"))
    }
}
