import Foundation
import GripFit
import TetherCore
import TetherSimulator
import TetherWorld
import GripFitEmulator

/// The demo's GripFit chapter: connect, tare, a squeeze, a rate change, link loss and
/// recovery, and the session summary.
struct GripFitDemoChapter {
    let central: Central
    let radio: VirtualRadio
    let emulator: GripFitEmulator
    let timeline: DemoTimeline

    func run() async throws {
        print("\nGripFit — grip-strength dynamometer\n")
        let manager = BLEManager(central: central)
        let watcher = Task {
            for await state in await manager.connectionStates() { timeline.info("gripfit state → \(state)") }
        }
        defer { watcher.cancel() }

        timeline.step("Scanning for _GRIPFIT and connecting")
        let device = try await within(20, "GripFit connection") { try await GripFitFlow.findAndConnect(manager) }
        timeline.ok("connected to \(device.name), firmware \(await manager.deviceInfo?.firmwareVersion ?? "?"), sensor \(await manager.sensorReadiness.rawValue)")

        timeline.step("Tare (the device rests on the desk)")
        await emulator.setProfile(.idle)
        try await manager.tare()
        timeline.ok("S:TARED — readings are now relative to the resting load")

        timeline.step("A squeeze: ramp, hold, release (recording 3.2 s)")
        await emulator.squeeze(in: .milliseconds(200), peak: 380_000)
        let record = try await GripFitFlow.record(manager, seconds: 3.2, output: .none)
        let summary = record.summary
        guard summary.maxForce > 300_000, summary.sampleCount >= 25 else {
            throw CLIError("the squeeze did not show: peak \(summary.maxForce), \(summary.sampleCount) samples")
        }
        timeline.ok(String(format: "peak %.0f counts, average %.0f, %d samples", summary.maxForce, summary.averageForce, summary.sampleCount))

        timeline.step("Rate change to 50 ms")
        try await manager.changeSampleRate(ms: 50)
        let fast = try await GripFitFlow.record(manager, seconds: 1, output: .none)
        guard fast.summary.sampleCount >= 15 else { throw CLIError("expected ~20 readings at 50 ms, got \(fast.summary.sampleCount)") }
        timeline.ok("S:RATE:50 — \(fast.summary.sampleCount) readings in 1 s")

        timeline.step("Link loss: the GripFit leaves range for 3 s")
        let states = await manager.connectionStates()
        await radio.setInRange(DefaultWorld.IDs.gripFit, false)
        try await Task.sleep(for: .seconds(3))
        await radio.setInRange(DefaultWorld.IDs.gripFit, true)
        let recovered = try await within(20, "GripFit recovery") { () -> Bool in
            var sawDrop = false
            for await state in states {
                if state == .connecting { sawDrop = true }
                if state == .connected, sawDrop { return true }
            }
            return false
        }
        guard recovered else { throw CLIError("the GripFit did not reconnect") }
        let after = try await GripFitFlow.record(manager, seconds: 0.5, output: .none)
        timeline.ok("reconnected with backoff; readings flow again (\(after.summary.sampleCount) in 0.5 s)")

        timeline.step("Session summary, saved and read back")
        let store: any GripSessionStore = InMemoryGripSessionStore()
        try await store.save(record)
        guard let saved = try await store.allSessions().first else { throw CLIError("the session was not saved") }
        timeline.ok(GripFitFlow.describe(saved))
        await manager.disconnect()
        timeline.ok("GripFit disconnected")
    }
}
