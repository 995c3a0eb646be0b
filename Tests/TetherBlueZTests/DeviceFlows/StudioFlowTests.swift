#if os(Linux)
import Foundation
import GripFit
import GripFitEmulator
import TetherBlueZ
import TetherCore
import TetherSimulator
@testable import TetherStudio
import TetherTesting
import Testing

/// Tether Studio's screens on the BlueZ driver: the GripFit screen (the same one the simulator
/// serves) over a `Central` on `BlueZDriver`, the GripFit emulator hosted by
/// `BlueZPeripheralHost` on another bluezoo adapter, in real time.
@Suite("Tether Studio over BlueZ")
struct StudioFlowTests {
    @MainActor
    @Test func theGripFitScreenScansConnectsChartsTaresAndRecordsOverBlueZ() async throws {
        SimulationLogging.bootstrapForTests()
        let emulator = GripFitEmulator(firmwareVersion: "3.1.4", profile: .idle)
        let id = PeripheralID(UUID())
        let pair = try await BlueZPair.make(recordingEvents: false) { radio in
            radio.add(emulator.makePeripheral(id: id))
            return id
        }
        let central = await pair.makeCentral()
        let screen = GripFitScreen(central: central, store: InMemoryGripSessionStore())
        await screen.start()
        func act(_ name: String, _ arguments: [String: StudioValue] = [:]) async throws {
            try await screen.perform(StudioAction(device: "gripfit", name: name, arguments: arguments))
        }
        do {
            try await act("scan", ["on": .bool(true)])
            // Other tests' GripFits are on the bus too: this pair's is picked, as a user picks theirs.
            let own = pair.remoteID.description
            _ = try await observedValue(Patience.seconds(20), "the pair's GripFit listed", { screen.state() }) { $0.devices.contains { $0.id == own } }
            try await act("connect", ["id": .string(own)])
            let live = try await observedValue(Patience.seconds(30), "readings on the chart", { screen.state() }) {
                $0.connection == "connected" && $0.chart.count >= 5 && $0.firmware == "3.1.4"
            }
            #expect(live.dot == "green")
            // At rest the HX711 reads its ~84 000 baseline; Tare zeroes it.
            try await act("tare")
            #expect(screen.state().commandError == nil)
            _ = try await observedValue(Patience.seconds(10), "readings near zero", { screen.state() }) { ($0.latest?[1]).map { abs($0) < 2_000 } == true }
            try await act("record", ["on": .bool(true)])
            await onSimulationActor { emulator.squeeze(in: .milliseconds(100), peak: 300_000) }
            _ = try await observedValue(Patience.seconds(15), "the squeeze", { screen.state() }) { ($0.lastSqueeze?.peak ?? 0) > 250_000 }
            try await act("record", ["on": .bool(false)])
            #expect(screen.state().sessions.count == 1)
            #expect((screen.state().sessions.first?.maxForce ?? 0) > 250_000)
            try await act("disconnect")
            _ = try await observedValue(Patience.seconds(10), "disconnected", { screen.state() }) { $0.dot == "red" }
        } catch {
            await screen.stop()
            await pair.close()
            throw error
        }
        await screen.stop()
        await pair.close()
    }
}
#endif
