import Foundation
import Testing
@testable import TetherCore
@testable import TetherSimulator
@testable import Tybe

@Suite("Tybe chain: client frames → bridge → dongle → host", .timeLimit(.minutes(2)))
struct EmulatorChainTests {
    @Test func englishHostReceivesAllPrintableASCII() async throws {
        let world = await EmulatorWorld()
        try await world.connect()
        try await world.status()
        let text = String((0x20...0x7E).map { Character(UnicodeScalar(UInt8($0))) }) + "\nline two\tend"
        let statuses = try await world.type(text)
        #expect(statuses.count > 1)
        #expect(statuses.allSatisfy { $0.isOK && $0.ackReceived && $0.dongleLinked })
        try await world.drain()
        #expect(await world.hostText == text)
    }

    @Test func koreanHostComposesHangulFromThePlannedKeys() async throws {
        let world = await EmulatorWorld(inputSource: .korean)
        try await world.connect()
        try await world.status()
        let text = "안녕하세요 괜찮아요, 읽어요! 뷁 닭 값 123"
        let statuses = try await world.type(text, maxFrameBytes: 20)
        #expect(statuses.allSatisfy { $0.isOK && $0.ackReceived })
        try await world.drain()
        #expect(await world.hostText == text)
    }

    @Test func keyboardModeOneFramePerKey() async throws {
        let world = await EmulatorWorld(inputSource: .korean)
        try await world.connect()
        try await world.status()
        // Each captured key is its own frame; seq wraps 255 → 0.
        var seq: UInt8 = 254
        for key: HIDKey in [.d, .k, .s, .s, .u, .d, .g, .k, .t, .p, .d, .y] {
            let status = try await world.send(seq: seq, [KeyStroke(key)])
            #expect(status.isOK && status.ackReceived && status.seq == seq)
            seq &+= 1
        }
        try await world.drain()
        #expect(await world.hostText == "안녕하세요")
        // The same keys on an English host are just letters.
        let english = await EmulatorWorld()
        try await english.connect()
        try await english.status()
        _ = try await english.type("dkssudgktpdy")
        try await english.drain()
        #expect(await english.hostText == "dkssudgktpdy")
    }

    @Test func keysTakeTheRadioAndUSBTime() async throws {
        let world = await EmulatorWorld()
        try await world.connect()
        try await world.status()
        let start = world.now
        let frame = EmulatorWorld.frame(seq: 1, Array(repeating: KeyStroke(.x), count: 25))
        try await world.send(frameBytes: frame)
        try await world.drain()
        // 25 keys at 8 ms each: at least 200 ms after the write went out.
        #expect(world.now - start >= .milliseconds(200))
        #expect(world.now - start < .milliseconds(300))
        #expect(await world.hostText == String(repeating: "x", count: 25))
        #expect(await world.bridge { $0.dongle.host.keystrokes.count } == 25)
    }
}
