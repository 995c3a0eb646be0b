import Foundation
import Testing
import TetherTesting
@testable import GripFit
@testable import TetherCore
@testable import TetherSimulator

@Suite("Squeezes and the grip-test view model", .timeLimit(.minutes(2)))
struct GripTestViewModelTests {
    static let epoch = Date(timeIntervalSince1970: 1_800_000_000)

    /// Readings every 100 ms along `profile` with its noise, as the device would send them.
    static func readings(_ profile: ForceProfile, seconds: Int) -> [GripReading] {
        var rng = SplitMix64(seed: 3)
        return (0..<(seconds * 10)).map { index in
            let t = Duration.milliseconds(index * 100)
            let raw = profile.value(at: t, noiseSample: rng.nextUnit())
            return GripReading(raw: raw, force: Double(raw), receivedAt: epoch.addingTimeInterval(t.seconds))
        }
    }

    @Test func oneSqueezeIsFoundWithItsPeakAndDuration() throws {
        var detector = SqueezeDetector()
        // One squeeze at 1 s: 1 s ramp, 1.5 s hold, 0.8 s release, 420 000 counts over 84 000.
        let profile = ForceProfile(squeezes: [.init(start: .seconds(1), peak: 420_000)])
        var ended: [Squeeze] = []
        for reading in Self.readings(profile, seconds: 8) {
            if let squeeze = detector.push(reading) { ended.append(squeeze) }
        }
        #expect(ended.count == 1)
        guard let squeeze = ended.first else { return }
        #expect(abs(squeeze.peak - 420_000) < 1_000, "peak \(squeeze.peak)")
        // Above 20 000 from early in the ramp to late in the release: most of its 3.3 s.
        #expect(squeeze.duration > 2.5 && squeeze.duration < 3.3, "duration \(squeeze.duration)")
        #expect(squeeze.average > 200_000 && squeeze.average < squeeze.peak)
        #expect(detector.current == nil)
        #expect(abs((detector.rest ?? 0) - 84_000) < 1_000)
    }

    @Test func noiseAtTheThresholdDoesNotCutOneSqueezeIntoMany() {
        var detector = SqueezeDetector(threshold: 1_000)
        // Rest at 0, then a plateau just above the threshold with noise of ±400.
        let plateau: [Double] = (0..<40).map { index -> Double in index % 2 == 0 ? 1_600 : 800 }
        let force: [Double] = [0, 0, 0] + plateau + [0, 0]
        var ended: [Squeeze] = []
        for (index, value) in force.enumerated() {
            let reading = GripReading(raw: Int32(value), force: value, receivedAt: Self.epoch.addingTimeInterval(Double(index) / 10))
            if let squeeze = detector.push(reading) { ended.append(squeeze) }
        }
        #expect(ended.count == 1)
        #expect(ended.first?.sampleCount == 40)
    }

    @Test func idleReadingsFollowDriftWithoutASqueeze() {
        var detector = SqueezeDetector()
        var ended = 0
        // A slow drift of 30 000 counts over 60 s: never a squeeze.
        for index in 0..<600 {
            let value = 84_000 + Double(index) * 50
            let reading = GripReading(raw: Int32(value), force: value, receivedAt: Self.epoch.addingTimeInterval(Double(index) / 10))
            if detector.push(reading) != nil { ended += 1 }
            #expect(detector.current == nil)
        }
        #expect(ended == 0)
    }

    @Test func unreadableForceIsIgnored() {
        var detector = SqueezeDetector()
        #expect(detector.push(GripReading(raw: 0, force: .nan, receivedAt: Self.epoch)) == nil)
        #expect(detector.rest == nil)
    }

    @MainActor @Test func tareAndRateReportTheirOutcomeAsValues() async throws {
        let time = TestTime()
        let manager = MockBLEManager(clock: time.clock)
        let model = GripTestViewModel(manager: manager)
        await model.start()
        /// Lets virtual time pass until `condition` holds, failing after 20 s of it.
        func until(_ what: String, _ condition: @escaping @Sendable @MainActor () async -> Bool) async throws {
            try await time.until(limit: .seconds(20), what: what) { await condition() }
        }
        // No link: refused, and the screen can say why.
        #expect(await model.tare() == false)
        #expect(model.commandError == .notConnected)
        #expect(await model.setSampleRate(ms: 50) == false)
        await model.startScanning()
        try await until("a device") { await !manager.discoveredDevices.isEmpty }
        await model.connect(to: try #require(await manager.discoveredDevices.first))
        try await until("connected") { await manager.connectionState == .connected }
        #expect(await model.tare())
        #expect(model.commandError == nil)
        #expect(await model.setSampleRate(ms: 50))
        // Readings and the device's details belong to that link: a disconnect clears them.
        try await until("readings and the device's details") { !model.chartReadings.isEmpty && model.deviceInfo != nil }
        await model.disconnect()
        try await until("disconnected") { model.connectionState == .disconnected }
        #expect(model.chartReadings.isEmpty && model.latestReading == nil)
        #expect(model.deviceInfo == nil && model.sampleIntervalMs == nil && model.readiness == .unknown)
    }

    @MainActor @Test func theViewModelFollowsTheManagerAndSavesARecordedSession() async throws {
        let time = TestTime()
        let timeline = Timeline(clock: time.clock)
        let now: @Sendable () -> Date = { Self.epoch.addingTimeInterval(timeline.now.seconds) }
        let manager = MockBLEManager(clock: time.clock, now: now)
        let store = InMemoryGripSessionStore()
        let model = GripTestViewModel(manager: manager, store: store, chartWindow: 20, now: now)
        await model.start()
        /// Lets virtual time pass until `condition` holds (at most `limit`).
        func until(_ what: String, limit: Duration = .seconds(20), _ condition: @escaping @Sendable @MainActor () -> Bool) async throws {
            try await time.until(limit: limit, what: what) { await condition() }
        }
        await model.startScanning()
        try await until("a device") { !model.devices.isEmpty }
        let device = try #require(model.devices.first)
        await model.connect(to: device)
        try await until("connected") { model.connectionState == .connected }
        try await until("device info") { model.deviceInfo != nil && model.readiness == .ready }
        #expect(model.deviceInfo?.firmwareVersion == "1.0-mock")
        model.startRecording()
        #expect(model.isRecording)
        // The standard profile squeezes every 5 s: one is over within 6 s.
        try await until("a squeeze", limit: .seconds(8)) { model.lastSqueeze != nil }
        let squeeze = try #require(model.lastSqueeze)
        #expect(abs(squeeze.peak - 420_000) < 2_000, "peak \(squeeze.peak)")
        #expect(model.bestPeak == squeeze.peak)
        #expect(model.chartReadings.count == 20, "the chart keeps its window")
        #expect(model.chartReadings.last == model.latestReading)
        let stopped = await model.stopRecording()
        let summary = try #require(stopped)
        #expect(!model.isRecording)
        #expect(summary.sampleCount > 30)
        #expect(summary.maxForce > 400_000)
        let stored = await store.allSessions()
        #expect(stored == [summary])
        #expect(model.lastSavedSession == summary)
        #expect(model.saveError == nil)
        await model.disconnect()
        try await until("disconnected") { model.connectionState == .disconnected }
        #expect(model.error == nil)
        model.stop()
    }
}
