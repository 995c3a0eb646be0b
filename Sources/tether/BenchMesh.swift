import Foundation
import MeshCore
import TetherCore

/// MeshCore figures for `tether bench`: codec speed and the session's per-command cost.
enum MeshBench {
    /// Frames decoded per second (millions), over a mix of the frames a session sees most.
    static func decodeRate(rounds: Int = 200_000) throws -> Double {
        let key = Data((0..<32).map { UInt8($0) })
        let frames: [Data] = [
            MeshCoreFrame.contact(MeshContact(publicKey: key, type: .chat, name: "Alice", lastAdvert: 1, lastModified: 2)).encoded(),
            MeshCoreFrame.channelMessage(ChannelMessage(channelIndex: 0, pathLength: 2, timestamp: 1, text: "Bob: storm coming over the ridge", snr: 6.25)).encoded(),
            MeshCoreFrame.sent(SentResult(isFlood: true, expectedAck: 0xA1B2_C3D4, suggestedTimeout: 4000)).encoded(),
            MeshCoreFrame.ok(value: nil).encoded(),
        ]
        var decoded = 0
        let start = ContinuousClock.now
        for round in 0..<rounds {
            if case .ok = try MeshCoreFrame(decoding: frames[round & 3]) { decoded += 2 } else { decoded += 1 }
        }
        let elapsed = (ContinuousClock.now - start).seconds
        guard decoded > rounds else { throw CLIError("nothing decoded") }
        return Double(rounds) / elapsed / 1_000_000
    }

    /// Microseconds per command through `MeshCoreSession` over a `MockTransport` whose radio
    /// answers at once: serialization, encoding, reply matching and decoding, no link.
    static func commandRoundTrip(commands: Int = 20_000) async throws -> Double {
        let mock = MockTransport(streamsEndOnDisconnect: false)
        let session = MeshCoreSession(transport: mock)
        let sent = await mock.sentFrames()
        let selfInfo = MeshCoreFrame.selfInfo(SelfInfo(publicKey: Data(repeating: 7, count: 32), name: "Bench")).encoded()
        let time = MeshCoreFrame.currentTime(1_767_225_600).encoded()
        let radio = Task {
            for await frame in sent {
                await mock.simulateReceive(frame.first == 0x01 ? selfInfo : time)
            }
        }
        defer { radio.cancel() }
        try await session.start()
        let start = ContinuousClock.now
        for _ in 0..<commands { _ = try await session.deviceTime() }
        let elapsed = (ContinuousClock.now - start).seconds
        return elapsed / Double(commands) * 1_000_000
    }
}
