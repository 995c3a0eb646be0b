import Foundation
import Testing
@testable import GripFit
@testable import TetherSimulator

/// The manager's outcome APIs: one call that connects, commands that return once the device
/// confirms them (or throw why not), timed on the test clock.
@Suite(.timeLimit(.minutes(3)))
struct CommandOutcomeTests {
    @Test func connectToFirstDeviceReturnsOnceConnected() async throws {
        let world = await GripFitWorld()
        let manager = world.manager
        let device = try await world.run { try await manager.connectToFirstDevice() }
        #expect(device.id == world.id)
        #expect(await manager.connectionState == .connected)
        // Already connected: the same device, at once.
        #expect(try await world.run { try await manager.connectToFirstDevice() }.id == world.id)
    }

    @Test func connectToFirstDeviceThrowsTheScanTimeout() async throws {
        let world = await GripFitWorld(withDevice: false)
        let manager = world.manager
        let start = world.radio.timeline.now
        let outcome = try await world.run { () -> GripFitError? in
            do { try await manager.connectToFirstDevice(); return nil } catch { return error as? GripFitError }
        }
        #expect(outcome == .scanTimeout)
        #expect(await manager.connectionState == .error(.scanTimeout))
        #expect(world.radio.timeline.now - start >= .seconds(10))
    }

    @Test func tareRateAndPingReturnTheDevicesConfirmation() async throws {
        let world = await GripFitWorld()
        try await world.connect()
        let manager = world.manager
        try await world.run { try await manager.tare() }
        #expect(try await world.run { try await manager.changeSampleRate(ms: 5) } == 20, "clamped, and the device confirms what it applied")
        #expect(try await world.run { try await manager.changeSampleRate(ms: 250) } == 250)
        try await world.run { try await manager.ping() }
        let commands = await { @SimulationActor in world.emulator.commandsReceived }()
        #expect(commands.suffix(4) == ["CMD:TARE", "CMD:RATE:20", "CMD:RATE:250", "CMD:PING"])
    }

    @Test func aFaultySensorRefusesTheTareAndASilentDeviceTimesOut() async throws {
        let world = await GripFitWorld()
        try await world.connect()
        let manager = world.manager, emulator = world.emulator
        await { @SimulationActor in emulator.setSensorFault(true); emulator.answersPing = false }()
        let tare = try await world.run { () -> GripFitCommandError? in
            do { try await manager.tare(); return nil } catch { return error as? GripFitCommandError }
        }
        #expect(tare == .sensorNotReady)
        let start = world.radio.timeline.now
        let ping = try await world.run { () -> GripFitCommandError? in
            do { try await manager.ping(timeout: .seconds(2)); return nil } catch { return error as? GripFitCommandError }
        }
        #expect(ping == .noConfirmation(command: "CMD:PING"))
        let waited = world.radio.timeline.now - start
        #expect(waited >= .seconds(2) && waited < .milliseconds(2_100), "\(waited)")
    }

    @Test func commandsNeedALink() async throws {
        let world = await GripFitWorld()
        await #expect(throws: GripFitCommandError.notConnected) { try await world.manager.tare() }
    }

    @Test func disconnectingEndsACommandThatWaitsAtOnce() async throws {
        let world = await GripFitWorld()
        try await world.connect()
        let manager = world.manager, emulator = world.emulator
        await { @SimulationActor in emulator.answersPing = false }()
        let start = world.radio.timeline.now
        let ping = Task { () -> GripFitCommandError? in
            do { try await manager.ping(timeout: .seconds(30)); return nil } catch { return error as? GripFitCommandError }
        }
        // Disconnect once the ping has gone out.
        try await world.time.until { await { @SimulationActor in emulator.commandsReceived.contains("CMD:PING") }() }
        let outcome = try await world.run { () -> GripFitCommandError? in
            await manager.disconnect()
            return await ping.value
        }
        #expect(outcome == .linkLost)
        #expect(world.radio.timeline.now - start < .seconds(30), "not the timeout")
    }
}
