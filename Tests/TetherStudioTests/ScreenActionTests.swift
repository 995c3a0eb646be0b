#if os(macOS) || os(Linux)
import FlockFinder
import FlockFinderEmulator
import FlockFinderStorage
import Foundation
import GripFit
import GripFitEmulator
import Testing
import TetherCore
@testable import TetherStudio

/// Actions of the GripFit and FlockFinder screens the per-screen tests leave out, each checked
/// by what it changes.
@Suite("Tether Studio: screen actions")
struct ScreenActionTests {
    @MainActor
    @Test func gripFitRateResetPeakRawCalibrationSimulatorControlsAndDisconnect() async throws {
        let world = await DeviceScreenWorld()
        let emulator = world.emulators.gripFit
        let screen = GripFitScreen(central: world.central, store: InMemoryGripSessionStore(), emulator: emulator)
        await screen.start()
        // The default world's hand squeezes every 5 s by itself.
        #expect(screen.state().autoSqueezes)
        try await screen.perform("scan", ["on": .bool(true)])
        let found = try await until(screen, 10, "a GripFit found") { !$0.devices.isEmpty }
        try await screen.perform("connect", ["id": .string(found.devices[0].id)])
        let connected = try await until(screen, 10, "connected and its sensor ready") { $0.connection == "connected" && $0.readiness == "ready" }
        #expect(connected.sampleIntervalMs != 50)

        // The rate shown is the one the device confirmed.
        try await screen.perform("rate", ["ms": .number(50)])
        #expect(screen.state().commandError == nil)
        _ = try await until(screen, 10, "the 50 ms rate confirmed") { $0.sampleIntervalMs == 50 }
        #expect(await emulator.rateMs == 50)

        // No squeezes by themselves: the one squeeze scripted next is the only one to come.
        try await screen.perform("simulateSqueezes", ["on": .bool(false)])
        #expect(!screen.state().autoSqueezes)
        #expect(await emulator.profile.period == nil)
        // A peak no automatic squeeze reaches, so the best peak seen is this squeeze's, ended.
        try await screen.perform("simulateSqueeze", ["peak": .number(1_500_000)])
        _ = try await until(screen, 10, "the scripted squeeze's peak") { ($0.bestPeak ?? 0) > 1_200_000 }
        try await screen.perform("resetPeak")
        #expect(screen.state().bestPeak == nil)
        try await screen.perform("simulateSqueezes", ["on": .bool(true)])
        #expect(screen.state().autoSqueezes)
        #expect(await emulator.profile.period != nil)

        // Linear, then raw again: force = raw once more (the baseline keeps raw above zero).
        try await screen.perform("calibrate", ["slope": .number(0.001), "zeroOffset": .number(0)])
        _ = try await until(screen, 10, "calibrated readings") { state in
            state.chart.last.map { $0[2] != 0 && abs($0[1] - $0[2] * 0.001) < 1e-6 } == true
        }
        try await screen.perform("calibrate", ["raw": .bool(true)])
        #expect(screen.state().calibration == nil)
        _ = try await until(screen, 10, "raw readings") { state in state.chart.last.map { $0[2] != 0 && $0[1] == $0[2] } == true }

        // The device reports the HX711 fault and its end.
        try await screen.perform("simulateSensorFault", ["on": .bool(true)])
        _ = try await until(screen, 10, "the sensor not ready") { $0.readiness == "notReady" }
        try await screen.perform("simulateSensorFault", ["on": .bool(false)])
        _ = try await until(screen, 10, "the sensor ready again") { $0.readiness == "ready" }

        try await screen.perform("disconnect")
        let disconnected = try await until(screen, 10, "disconnected") { $0.connection == "disconnected" }
        #expect(disconnected.dot == "red")
        await screen.stop()
    }

    @MainActor
    @Test func flockFinderDisconnectConnectPingAndReset() async throws {
        let world = await DeviceScreenWorld()
        let flock = world.emulators.flock
        let screen = FlockFinderScreen(central: world.central, store: try DetectionStore.inMemory(), emulator: flock)
        await screen.start()
        // The scan connects to the first detector by itself: Disconnect drops it, Connect brings it back.
        try await screen.perform("scan", ["on": .bool(true)])
        let scanned = try await until(screen, 15, "the detector connected by the scan") { $0.connection == "Connected" }
        let id = try #require(scanned.devices.first { $0.advertisesService }?.id)
        try await screen.perform("disconnect")
        let dropped = try await until(screen, 10, "disconnected") { $0.connection == "Disconnected" }
        #expect(dropped.dot == "red")
        try await screen.perform("connect", ["id": .string(id)])
        _ = try await until(screen, 15, "connected again") { $0.connection == "Connected" }

        // The detector answers PING with a "pong" status, streaming or not.
        try await screen.perform("command", ["command": .string("PING")])
        _ = try await until(screen, 10, "the pong") { $0.stream.contains { $0.evt == "status" && $0.text == "pong" } }

        // RESET zeroes the detector's counters: two detections counted before it, none after.
        await flock.burst(2)
        try await screen.perform("command", ["command": .string("STATUS")])
        _ = try await until(screen, 10, "two detections counted") { $0.stream.contains { $0.text.hasPrefix("wifi=2 ble=0 ") } }
        try await screen.perform("command", ["command": .string("RESET")])
        try await screen.perform("command", ["command": .string("STATUS")])
        let reset = try await until(screen, 10, "the counters zeroed") { $0.stream.contains { $0.text.hasPrefix("wifi=0 ble=0 ") } }
        #expect(reset.connection == "Connected" && reset.commandError == nil)
        await screen.stop()
    }
}
#endif
