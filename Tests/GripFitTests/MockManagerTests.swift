import Foundation
import Testing
import TetherTesting
@testable import GripFit
@testable import TetherCore
@testable import TetherSimulator

@Suite("MockBLEManager for previews", .timeLimit(.minutes(3)))
struct MockManagerTests {
    struct Preview {
        let time = TestTime()
        var clock: ManualClock { time.clock }
        let mock: MockBLEManager

        init() {
            let timeline = Timeline(clock: time.clock)
            mock = MockBLEManager(clock: time.clock, now: { Date(timeIntervalSince1970: timeline.now.seconds) })
        }

        func run<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
            try await time.run(limit: .seconds(60), operation)
        }

        func states(until final: GripFitConnectionState) async throws -> [GripFitConnectionState] {
            let mock = self.mock
            return try await run {
                var seen: [GripFitConnectionState] = []
                for await state in await mock.connectionStates() {
                    seen.append(state)
                    if state == final { break }
                }
                return seen
            }
        }

        func readings(count: Int) async throws -> [GripReading] {
            let mock = self.mock
            return try await run {
                var all: [GripReading] = []
                for await reading in await mock.readings() {
                    all.append(reading)
                    if all.count == count { break }
                }
                return all
            }
        }
    }

    @Test func cyclesThroughScanningConnectingConnectedWithRealisticDelays() async throws {
        let preview = Preview()
        await preview.mock.startScanning()
        let device = try await preview.run { () -> GripFitDevice? in
            for await devices in await preview.mock.discoveredDeviceUpdates() where !devices.isEmpty { return devices[0] }
            return nil
        }
        #expect(device == MockBLEManager.device)
        let start = preview.clock.now
        await preview.mock.connect(to: MockBLEManager.device)
        #expect(await preview.mock.connectionState == .connecting)
        #expect(try await preview.states(until: .connected).last == .connected)
        let elapsed = start.duration(to: preview.clock.now)
        #expect(elapsed >= .milliseconds(500) && elapsed < .milliseconds(600))
        #expect(await preview.mock.deviceInfo != nil)
        #expect(await preview.mock.sensorReadiness == .ready)
    }

    @Test func readingsFollowASqueezeCurveEveryHundredMilliseconds() async throws {
        let preview = Preview()
        await preview.mock.connect(to: MockBLEManager.device)
        let readings = try await preview.readings(count: 50)
        let gaps = zip(readings, readings.dropFirst()).map { $1.receivedAt.timeIntervalSince($0.receivedAt) }
        #expect(gaps.allSatisfy { abs($0 - 0.1) < 0.001 })
        let values = readings.map(\.raw)
        let peak = try #require(values.max())
        let peakIndex = try #require(values.firstIndex(of: peak))
        // Starts near the baseline, rises to a peak, and comes back down: not random numbers.
        #expect(values[0] < 100_000)
        #expect(peak > 400_000)
        #expect(peakIndex > 5 && peakIndex < 45)
        #expect(values.last! < peak / 2)
    }

    @Test func tarePingAndRateAreAnsweredAtOnce() async throws {
        let preview = Preview()
        await preview.mock.connect(to: MockBLEManager.device)
        _ = try await preview.states(until: .connected)
        let statuses = await preview.mock.statuses()
        await preview.mock.sendTare()
        await preview.mock.sendPing()
        await preview.mock.setSampleRate(ms: 5_000)
        var iterator = statuses.makeAsyncIterator()
        #expect(await iterator.next() == .tared)
        #expect(await iterator.next() == .pong)
        #expect(await iterator.next() == .rate(ms: 1000))
        let after = try await preview.readings(count: 2)
        #expect(abs(after[1].receivedAt.timeIntervalSince(after[0].receivedAt) - 1.0) < 0.001)
    }

    @Test func disconnectStopsReadings() async throws {
        let preview = Preview()
        await preview.mock.connect(to: MockBLEManager.device)
        _ = try await preview.states(until: .connected)
        await preview.mock.disconnect()
        #expect(await preview.mock.connectionState == .disconnected)
        #expect(await preview.mock.sensorReadiness == .unknown)
    }
}
