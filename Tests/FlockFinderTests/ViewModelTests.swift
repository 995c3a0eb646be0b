import Foundation
import Testing
@testable import FlockFinder
@testable import FlockFinderEmulator
@testable import TetherCore
@testable import TetherSimulator

@Suite("FlockFinder view model", .timeLimit(.minutes(2)))
struct FlockFinderViewModelTests {
    @MainActor @Test func followsTheClientCountsByTypeAndFiltersByConfidence() async throws {
        let world = try await ClientWorld()
        let model = FlockFinderViewModel(client: world.client, detectionLimit: 3)
        await model.start()
        try await world.connect()
        await world.emulator {
            $0.add(.raven(path: FlockEmitter.fixed(10)))        // BLE: 0.85
            $0.add(.flockCamera(path: FlockEmitter.fixed(10)))  // WiFi: 0.9
        }
        try await world.time.until { await MainActor.run(body: { !(model.detections.count < 2 || model.connectionState != .connected) }) }
        #expect(model.connectionState == .connected)
        #expect(model.countsByType[.flockSafety] == 1)
        #expect(model.countsByType.count == 2, "\(model.countsByType)")
        model.minimumConfidence = 0.88
        #expect(model.visibleDetections.map(\.detection.confidence) == [0.9])
        // Bounded: a burst keeps the newest `detectionLimit`, and counts every one.
        await world.emulator { $0.burst(6) }
        try await world.time.until { await MainActor.run(body: { !(model.countsByType.values.reduce(0, +) < 8) }) }
        #expect(model.detections.count == 3)
        // Commands are written on the link: virtual time must move for their answers.
        try await world.run { await model.setStreaming(true) }
        #expect(model.isStreaming)
        #expect(model.commandError == nil)
        try await world.time.until { await MainActor.run(body: { !(model.streamEvents.isEmpty) }) }
        try await world.run { await model.disconnect() }
        try await world.time.until { await MainActor.run(body: { !(model.connectionState != .disconnected) }) }
        #expect(!model.isStreaming)
        model.clear()
        #expect(model.detections.isEmpty && model.countsByType.isEmpty)
        model.stop()
    }
}

/// A preview from the FlockFinder product alone: no radio, no driver, no client.
@MainActor @Suite struct ViewModelPreviewTests {
    @Test func aPreviewShowsItsDetectionsNewestFirstAndItsIntentsSaySoInsteadOfActing() async {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let older = ReceivedDetection(detection: Detection(type: .flockSafety, rssi: -60, confidence: 0.95), receivedAt: now)
        let newer = ReceivedDetection(detection: Detection(type: .ring, rssi: -80, confidence: 0.4), receivedAt: now.addingTimeInterval(5))
        let model = FlockFinderViewModel(preview: [older, newer])
        #expect(model.detections == [newer, older])
        #expect(model.countsByType == [.flockSafety: 1, .ring: 1])
        #expect(model.connectionState == .connected)
        model.minimumConfidence = 0.5
        #expect(model.visibleDetections == [older])
        await model.start()
        await model.startScanning()
        #expect(model.commandError == "a preview has no detector")
        #expect(model.connectionState == .connected, "a preview's intents change nothing")
        model.clear()
        #expect(model.detections.isEmpty && model.countsByType.isEmpty)
    }
}
