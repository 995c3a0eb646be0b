import ArgumentParser
import Foundation
import TetherCore
import TetherSimulator

/// `tether demo`: an end-to-end story on the simulator, printed as a timeline.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run an end-to-end story on the simulator and print its timeline.",
        discussion: "Scan, connect, discover, subscribe, echo data, lose the link, reconnect automatically, disconnect. Exits non-zero if any step fails.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let environment = try await Environment.makeSimulated("the demo needs the simulator (it injects faults into the virtual radio)")
        guard let radio = environment.radio else {
            throw CLIError("the demo needs the simulator (it injects a link loss)")
        }
        guard let emulators = environment.emulators else {
            throw CLIError("the demo needs the simulator's default world")
        }
        let context = DemoContext(central: environment.central, radio: radio, emulators: emulators, timeline: DemoTimeline())
        do {
            // One chapter per device, in the registry's order (the echo peripheral's first).
            for device in CLIDevices.all {
                try await device.demoChapter(context)
            }
            print("\nDemo passed.")
        } catch {
            context.timeline.fail("\(CLIError.from(error).message)")
            throw CLIError("demo failed: \(CLIError.from(error).message)")
        }
    }
}

/// Prints timestamped steps.
final class DemoTimeline: @unchecked Sendable {
    private let start = ContinuousClock.now
    private let lock = NSLock()
    private(set) var failures = 0

    private func stamp() -> String {
        let ms = Int((ContinuousClock.now - start).seconds * 1000)
        return String(format: "%6d.%03d s", ms / 1000, ms % 1000)
    }

    private func line(_ mark: String, _ text: String) {
        lock.lock()
        defer { lock.unlock() }
        print("\(stamp())  \(mark) \(terminalSafe(text))")
        flushOutput()
    }

    func step(_ text: String) { line("▶", text) }
    func ok(_ text: String) { line("✓", text) }
    func info(_ text: String) { line("·", text) }
    func fail(_ text: String) {
        lock.lock(); failures += 1; lock.unlock()
        line("✗", text)
    }
}

/// The demo's story, step by step; each step has a deadline so a hang becomes a failure.
struct DemoStory {
    let central: Central
    let radio: VirtualRadio
    let timeline: DemoTimeline

    func run() async throws {
        print("Tether demo — simulated radio, echo peripheral\n")
        let state = await central.settledState()
        guard state == .poweredOn else { throw BLEError.bluetoothUnavailable(state) }
        timeline.ok("Bluetooth is \(state)")

        timeline.step("Scanning for 1.5 s")
        let stream = try await central.scan(timeout: .milliseconds(1500))
        var seen: [DiscoveredPeripheral] = []
        for await peripheral in stream {
            seen.append(peripheral)
            timeline.info("found \(peripheral.displayName ?? "(unnamed)") \(DiscoveredPeripheral.describe(rssi: peripheral.rssi))")
        }
        guard let echo = seen.first(where: { $0.advertisement.serviceUUIDs.contains(EchoPeripheral.service) }) else {
            throw CLIError("the echo peripheral was not found")
        }
        timeline.ok("\(seen.count) peripheral(s); echo is \(echo.id)")

        let connection = await central.connection(to: echo.id, configuration: ConnectionConfiguration(
            services: [EchoPeripheral.service],
            requiredCharacteristics: [EchoPeripheral.input, EchoPeripheral.info],
            notifyCharacteristics: [EchoPeripheral.output],
            reconnectPolicy: .threeAttempts))
        let events = await connection.events()
        let timeline = self.timeline
        let watcher = Task {
            for await event in events {
                switch event {
                case .phaseChanged(let phase): timeline.info("phase → \(phase.name)")
                case .disconnected(_, let error): timeline.info("link lost: \(error?.errorDescription ?? "no error")")
                case .reconnectScheduled(let attempt, let delay): timeline.info("reconnect attempt \(attempt) in \(delay)")
                case .reconnected: timeline.info("reconnected")
                default: break
                }
            }
        }
        defer { watcher.cancel() }

        timeline.step("Connecting (discover services and characteristics, subscribe)")
        try await within(15, "connect") { try await connection.connect() }
        let mtu = try await connection.maximumWriteValueLength(for: .withoutResponse) + 3
        timeline.ok("connected; ATT MTU \(mtu)")

        let info = try await within(6, "read") { try await connection.read(EchoPeripheral.info) }
        timeline.ok("read firmware: \(String(decoding: info, as: UTF8.self))")

        try await echoRoundTrip(connection, Data("hello, tether".utf8), type: .withResponse)
        let bulk = Data((0..<600).map { UInt8(truncatingIfNeeded: $0 * 7) })
        try await echoRoundTrip(connection, bulk, type: .withoutResponse)

        timeline.step("Injecting a link loss: the echo peripheral walks out of range")
        let reconnected = Task { () -> Bool in
            for await event in await connection.events() {
                if case .reconnected = event { return true }
                if case .failed = event { return false }
            }
            return false
        }
        await radio.setInRange(echo.id, false)
        try await Task.sleep(for: .milliseconds(2500))
        timeline.step("The peripheral is back in range")
        await radio.setInRange(echo.id, true)
        let back = try await within(15, "automatic reconnection") { await reconnected.value }
        guard back else { throw CLIError("automatic reconnection failed") }
        timeline.ok("reconnected automatically")
        try await echoRoundTrip(connection, Data("still here".utf8), type: .withResponse)

        timeline.step("Disconnecting")
        await connection.disconnect()
        let phase = await connection.phase
        guard phase == .idle else { throw CLIError("expected idle after disconnect, got \(phase)") }
        timeline.ok("clean disconnect; phase is idle")
    }

    private func echoRoundTrip(_ connection: ConnectionStateMachine, _ payload: Data, type: WriteType) async throws {
        timeline.step("Writing \(payload.count) bytes \(type == .withResponse ? "with" : "without") response; expecting the echo")
        // Arm the listener before the write that provokes the reply.
        let echoes = await connection.notifications(for: EchoPeripheral.output)
        let collector = Task { () -> Data in
            var received = Data()
            for await chunk in echoes {
                received.append(chunk)
                if received.count >= payload.count { break }
            }
            return received
        }
        try await within(10, "write") { try await connection.write(payload, to: EchoPeripheral.input, type: type) }
        let received = try await within(10, "echo") { await collector.value }
        guard received == payload else { throw CLIError("echo mismatch: sent \(payload.count) bytes, got \(received.count)") }
        timeline.ok("echo matched (\(received.count) bytes)")
    }
}
