import Foundation
import Testing
@testable import TetherCore
@testable import TetherSimulator

@Suite("Random fault sequences", .timeLimit(.minutes(3)))
struct ChaosTests {
    enum Fault: CaseIterable {
        case outOfRange, backInRange, powerOff, powerOn, peripheralDisconnect, writeStalls, idle
    }

    /// Whatever happens to the link, once the world is healthy again the connection comes
    /// back by itself, every queued write has finished (one way or the other), and data flows.
    @Test(arguments: [UInt64(1), 2, 3, 4, 5, 6])
    func connectionRecoversAfterAnyFaultSequence(seed: UInt64) async throws {
        let h = await Harness(osAutoReconnect: seed.isMultiple(of: 2))
        var configuration = Harness.echoConfiguration
        configuration.reconnectPolicy = ReconnectPolicy(
            schedule: .exponential(initial: .milliseconds(500), multiplier: 2, maximum: .seconds(4), maxAttempts: nil),
            useOSAutoReconnect: seed.isMultiple(of: 2))
        let connection = try await h.connected(configuration)
        var rng = SplitMix64(seed: seed)
        var writers: [Task<Void, any Error>] = []
        for step in 0..<10 {
            let fault = Fault.allCases[Int(rng.next() % UInt64(Fault.allCases.count))]
            switch fault {
            case .outOfRange: await h.radio.setInRange(h.echoID, false)
            case .backInRange: await h.radio.setInRange(h.echoID, true)
            case .powerOff: await h.radio.setCentralState(.poweredOff)
            case .powerOn: await h.radio.setCentralState(.poweredOn)
            case .peripheralDisconnect: await h.radio.peripheralDisconnect(h.echoID)
            case .writeStalls: await h.radio.inject(FaultRule(.write, action: .noResponse, count: 1))
            case .idle: break
            }
            writers.append(Task { try await connection.write(Data([UInt8(step)]), to: EchoPeripheral.input, type: .withResponse) })
            await h.advance(.milliseconds(Int(rng.next() % 6_000)))
        }
        await h.radio.setCentralState(.poweredOn)
        await h.radio.setInRange(h.echoID, true)
        await h.radio.clearFaults()
        try await h.until(limit: .seconds(120)) { await connection.isConnected }
        let all = writers
        // Every write ends: delivered, timed out, or failed with the link; none hangs.
        try await h.run(limit: .seconds(60)) { for writer in all { _ = await writer.result } }
        let stream = await connection.notifications(for: EchoPeripheral.output)
        try await h.run { try await connection.write(Data("alive".utf8), to: EchoPeripheral.input, type: .withResponse) }
        let echo = try await h.run { () -> Data? in
            for await value in stream where value == Data("alive".utf8) { return value }
            return nil
        }
        #expect(echo == Data("alive".utf8))
        #expect(await h.radio.statistics[h.echoID]?.writesDropped ?? 0 == 0)
    }
}
