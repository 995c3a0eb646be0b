import Clocks
import Foundation
import TetherCore
import TetherSimulator
import Tybe
import TybeEmulator

/// Tybe figures for `tether bench`.
enum TybeBench {
    /// p99 wall time of `TybeClient.send` (planning, framing, queueing and the driver write) per key.
    static func keyLatencyP99(keys: Int = 1_000) async throws -> (p50: Double, p99: Double) {
        let radio = VirtualRadio(clock: ContinuousClock())
        let bridge = TybeBridgeEmulator()
        await radio.add(bridge.makePeripheral())
        let central = Central(driver: await SimulatedDriver(radio: radio))
        let client = TybeClient(central: central)
        try await client.connect()
        let stroke = KeyStroke(.a)
        var samples: [Double] = []
        samples.reserveCapacity(keys)
        for index in 0..<keys {
            let start = ContinuousClock.now
            try await client.send(stroke)
            samples.append((ContinuousClock.now - start).seconds * 1_000_000)
            // A fast typist's pace (3 keys per connection event) keeps the controller's buffer
            // from filling, so this measures software time, not flow-control waits.
            if index % 3 == 2 { try await Task.sleep(for: .milliseconds(16)) }
        }
        await client.reset()
        samples.sort()
        return (samples[samples.count / 2], samples[Int(Double(samples.count) * 0.99)])
    }

    /// Delivers 2,000 Korean characters at MTU 185 and a 15 ms interval in virtual time; returns
    /// the link-capacity time over the measured time (1.0 = the link is the only limit).
    static func koreanDelivery(characters: Int = 2_000, keyInterval: Duration = .milliseconds(8)) async throws -> (fraction: Double, seconds: Double, bytes: Int) {
        let clock = TestClock<Duration>()
        let radio = VirtualRadio(clock: clock)
        let bridge = TybeBridgeEmulator(queueCapacity: 32, dongle: TybeDongle(keyInterval: keyInterval))
        let peripheral = bridge.makePeripheral()
        await { @SimulationActor in peripheral.linkParameters = LinkParameters(preferredMTU: 185, connectionInterval: .milliseconds(15)) }()
        await radio.add(peripheral)
        let central = Central(driver: await SimulatedDriver(radio: radio), clock: clock)
        let client = TybeClient(central: central, clock: clock, window: 16)
        let advance: @Sendable (Duration) async -> Void = { await clock.advance(by: $0) }
        try await VirtualTime.run(step: .milliseconds(5), advance: advance) { try await client.connect() }
        let syllables = "가나다라마바사아자차카타파하한글키보드"
        let text = String((0..<characters).map { syllables[syllables.index(syllables.startIndex, offsetBy: $0 % syllables.count)] })
        let start = radio.timeline.now
        let result = try await VirtualTime.run(step: .milliseconds(1), advance: advance) { try await client.compose(text) }
        let elapsed = (radio.timeline.now - start).seconds
        let frames = TybeFrameBuilder.chunk(opcodes: result.plan.opcodes, startingSeq: 0, maxFrameBytes: 182)
        let bytes = frames.reduce(0) { $0 + $1.bytes.count }
        let parameters = await { @SimulationActor in peripheral.linkParameters }()
        let ideal = Double(bytes) / parameters.writeWithoutResponseCapacity(mtu: 185)
        return (ideal / elapsed, elapsed, bytes)
    }
}
