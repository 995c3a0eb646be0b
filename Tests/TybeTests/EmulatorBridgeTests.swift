import Foundation
import Testing
@testable import TetherCore
@testable import TetherSimulator
@testable import Tybe
@testable import TybeEmulator

private let a = KeyStroke(.a)
private let b = KeyStroke(.b)
private let c = KeyStroke(.c)

@Suite("Tybe bridge emulator: status, frames, errors", .timeLimit(.minutes(2)))
struct EmulatorBridgeTests {
    @Test func advertisesTheContractGATTTable() async throws {
        let world = await EmulatorWorld()
        let peripheral = await world.radio.virtualPeripheral(world.id)
        #expect(await peripheral?.name == "Tybe Zephyr Dev")
        #expect(await peripheral?.advertisement.serviceUUIDs == [TybeGATT.serviceUUID])
        #expect(await peripheral?.characteristic(TybeGATT.textInput)?.properties == [.write, .writeWithoutResponse])
        #expect(await peripheral?.characteristic(TybeGATT.status)?.properties == [.notify, .read])
        #expect(await peripheral?.characteristic(TybeGATT.config)?.properties == [.read, .write])
        #expect(await peripheral?.characteristic(TybeGATT.control)?.properties == [.write, .writeWithoutResponse])
        #expect(await peripheral?.linkParameters.preferredMTU == 185)
        #expect(await peripheral?.linkParameters.connectionInterval == .milliseconds(15))
    }

    @Test func sendsAStatusWhenTheClientSubscribes() async throws {
        let world = await EmulatorWorld()
        try await world.connect()
        let first = try await world.status().status
        // Before any frame: seq 0, no ACK, no error; the subscription probe found the dongle.
        #expect(first == TybeStatus(bridgeReady: true, ackReceived: false, dongleLinked: true, seq: 0, errorCode: 0))
        #expect(first.bytes == Data([0x05, 0x00, 0x00, 0x00]))
        try await world.advance(.milliseconds(500))
        #expect(await world.log.count == 1)
        #expect(await world.bridge { $0.statusesSent } == [first])
    }

    @Test func everyFrameGetsAStatusWithTheDongleACK() async throws {
        let world = await EmulatorWorld()
        try await world.connect()
        try await world.status()
        for (seq, stroke) in zip(UInt8(1)...3, [a, b, c]) {
            let status = try await world.send(seq: seq, [stroke])
            #expect(status == TybeStatus(bridgeReady: true, ackReceived: true, dongleLinked: true, seq: seq, errorCode: 0))
        }
        // Write with response is accepted as well.
        let status = try await world.send(seq: 4, [KeyStroke(.d, .leftShift)], type: .withResponse)
        #expect(status.ackReceived && status.isOK)
        try await world.drain()
        #expect(await world.hostText == "abcD")
        #expect(await world.bridge { $0.framesReceived } == 4)
        #expect(await world.bridge { $0.lastSeq } == 4)
    }

    @Test func heartbeatEveryTwoSecondsCarriesTheLastSeq() async throws {
        let world = await EmulatorWorld()
        try await world.connect()
        try await world.status()
        try await world.send(seq: 9, [a])
        try await world.advance(.milliseconds(6_500))
        let entries = await world.log.entries
        let heartbeats = entries.dropFirst(2)
        #expect(heartbeats.count == 3)
        // Heartbeats describe the last frame (seq 9, which the dongle acknowledged) with no error.
        #expect(heartbeats.allSatisfy { $0.status == TybeStatus(bridgeReady: true, ackReceived: true, dongleLinked: true, seq: 9, errorCode: 0) })
        let times = heartbeats.map(\.at)
        for (earlier, later) in zip(times, times.dropFirst()) {
            #expect(abs((later - earlier - .seconds(2)).seconds) < 0.03)
        }
    }

    @Test func controlRequestStatusAnswersAndOtherValuesAreIgnored() async throws {
        let world = await EmulatorWorld()
        try await world.connect()
        try await world.status()
        try await world.send(seq: 3, [a])
        var start = await world.log.count
        try await world.write(Data([0x01]), to: TybeGATT.control, type: .withResponse)
        let answer = try await world.status(from: start).status
        #expect(answer == TybeStatus(bridgeReady: true, ackReceived: true, dongleLinked: true, seq: 3, errorCode: 0))
        // Without response works too.
        start = await world.log.count
        try await world.write(Data([0x01]), to: TybeGATT.control, type: .withoutResponse)
        try await world.status(from: start)
        start = await world.log.count
        try await world.write(Data([0x02]), to: TybeGATT.control, type: .withResponse)
        try await world.write(Data([0x01, 0x01]), to: TybeGATT.control, type: .withResponse)
        try await world.advance(.milliseconds(300))
        #expect(await world.log.count == start)
    }

    @Test func duplicateSeqIsDroppedAndTheFilterResetsOnReconnection() async throws {
        let world = await EmulatorWorld()
        try await world.connect()
        try await world.status()
        #expect(try await world.send(seq: 5, [a]).isOK)
        let duplicate = try await world.send(seq: 5, [b])
        #expect(duplicate.error == .duplicateSeq)
        #expect(!duplicate.ackReceived)
        #expect(duplicate.seq == 5)
        // Only the previous frame's seq counts: 6 then 5 is not a duplicate.
        #expect(try await world.send(seq: 6, [c]).isOK)
        #expect(try await world.send(seq: 5, [a]).isOK)
        try await world.drain()
        #expect(await world.hostText == "aca")

        try await world.disconnect()
        try await world.connect()
        let start = await world.log.count
        try await world.status(from: start)
        // A new connection: the same seq as the last frame of the previous one goes through.
        let status = try await world.send(seq: 5, [b])
        #expect(status.isOK && status.ackReceived)
        try await world.drain()
        #expect(await world.hostText == "acab")
    }

    @Test(arguments: [(4, 30), (16, 60)])
    func queueFullAnswersBusyAndTheFrameCanBeSentAgain(capacity: Int, count: Int) async throws {
        let world = await EmulatorWorld(queueCapacity: capacity)
        try await world.connect()
        try await world.status()
        let letters = HIDKey.letters
        let frames = (0..<count).map { EmulatorWorld.frame(seq: UInt8($0), [KeyStroke(letters[$0 % 26])]) }
        let start = await world.log.count
        // Fire all frames without waiting for statuses, as a compose-mode client would.
        let connection = world.connection
        try await world.run {
            for frame in frames { try await connection.write(frame, to: TybeGATT.textInput, type: .withoutResponse) }
        }
        try await world.until { await world.bridge { $0.framesReceived } == count }
        try await world.drain()
        try await world.advance(.milliseconds(100))
        let answers = await world.log.entries.dropFirst(start).map(\.status)
        let busy = answers.filter { $0.error == .busy }
        let acked = answers.filter { $0.ackReceived && $0.isOK }
        #expect(!busy.isEmpty)
        #expect(busy.count + acked.count == count)
        #expect(busy.allSatisfy { !$0.ackReceived })
        // The host typed exactly the acknowledged frames, in order.
        let expected = String(acked.map { Character(String(UnicodeScalar(UInt8(ascii: "a") + $0.seq % 26))) })
        #expect(await world.hostText == expected)

        // BUSY frames are not duplicates: sent again one at a time, they all go through.
        for status in busy {
            let again = try await world.send(seq: status.seq, [KeyStroke(letters[Int(status.seq) % 26])])
            #expect(again.isOK && again.ackReceived)
        }
        try await world.drain()
        #expect(await world.hostText.count == count)
    }

    @Test func malformedFramesAreRejected() async throws {
        let world = await EmulatorWorld()
        try await world.connect()
        try await world.status()
        let cases: [(Data, UInt8)] = [
            (Data([0x07, 0x06, 0x01, 0x04, 0x00]), 0x07),                 // len says 6, 3 bytes follow
            (Data([0x08, 0x00, 0x01, 0x04, 0x00]), 0x08),                 // len says 0, 3 bytes follow
            (Data([0x09]), 0x09),                                         // no len byte
            (Data([0x0A, 0xFE]) + Data(repeating: 0x01, count: 254), 0x0A), // len 254 > 253
        ]
        for (bytes, seq) in cases {
            let start = await world.log.count
            try await world.write(bytes, type: .withResponse)
            let status = try await world.status(from: start).status
            #expect(status.error == .malformedFrame)
            #expect(status.seq == seq)
            #expect(!status.ackReceived)
        }
        try await world.drain()
        #expect(await world.hostText == "")
        // A rejected frame does not enter the duplicate filter.
        #expect(try await world.send(seq: 0x0A, [a]).isOK)
    }

    @Test func unknownOpcodeSendsTheKeysBeforeIt() async throws {
        let world = await EmulatorWorld()
        try await world.connect()
        try await world.status()
        let status = try await world.send(frameBytes: EmulatorWorld.frame(seq: 1, opcodes: [0x01, 0x04, 0x00, 0x01, 0x05, 0x00, 0x09, 0x01, 0x06, 0x00]))
        #expect(status.error == .unknownOpcode)
        #expect(status.ackReceived)
        try await world.drain()
        #expect(await world.hostText == "ab")
    }

    @Test func invalidKeycodesAreSkipped() async throws {
        let world = await EmulatorWorld()
        try await world.connect()
        try await world.status()
        let status = try await world.send(frameBytes: EmulatorWorld.frame(seq: 1, opcodes: [0x01, 0x04, 0x00, 0x01, 0x03, 0x00, 0x01, 0xE8, 0x00, 0x01, 0x05, 0x00]))
        #expect(status.error == .invalidKey)
        #expect(status.ackReceived)
        try await world.drain()
        #expect(await world.hostText == "ab")
        // 0x04 and 0xE7 are the inclusive bounds.
        let edge = try await world.send(frameBytes: EmulatorWorld.frame(seq: 2, opcodes: [0x01, 0xE7, 0x00]))
        #expect(edge.isOK)
    }

    @Test func emptyFrameIsAcknowledged() async throws {
        let world = await EmulatorWorld()
        try await world.connect()
        try await world.status()
        let status = try await world.send(frameBytes: Data([0x11, 0x00]))
        #expect(status.isOK && status.ackReceived && status.seq == 0x11)
    }

    @Test func toggleInputSourceOpcodeSwitchesTheHost() async throws {
        let world = await EmulatorWorld()
        try await world.connect()
        try await world.status()
        let status = try await world.send(frameBytes: EmulatorWorld.frame(seq: 1, opcodes: [0x02, 0x01, 0x0B, 0x00, 0x01, 0x0F, 0x00]))
        #expect(status.isOK)
        try await world.drain()
        #expect(await world.bridge { $0.dongle.host.inputSource } == .korean)
        // h l on the Korean host: ㅗ + ㅣ, a compound vowel.
        #expect(await world.hostText == "ㅚ")
    }

    @Test func configReadAndChannelWrite() async throws {
        let world = await EmulatorWorld()
        try await world.connect()
        let bytes = try await world.read(TybeGATT.config)
        #expect(bytes == Data([0x01, 0x01, 0x02, 0x00, 0xE7, 0xE7, 0xE7, 0xE7, 0xE7, 40]))
        #expect(TybeConfig(bytes) == TybeConfig(firmwareMajor: 1, firmwareMinor: 2, firmwarePatch: 0, esbAddress: [0xE7, 0xE7, 0xE7, 0xE7, 0xE7], esbChannel: 40))

        for channel in [UInt8(0), 100, 77] {
            try await world.write(Data([channel]), to: TybeGATT.config, type: .withResponse)
            #expect(await world.bridge { $0.esbChannel } == channel)
        }
        #expect(TybeConfig(try await world.read(TybeGATT.config))?.esbChannel == 77)

        for bad in [Data([101]), Data([0xFF]), Data([5, 5]), Data()] {
            await #expect(throws: BLEError.writeFailed(.att(ATTError(0x13)))) {
                try await world.write(bad, to: TybeGATT.config, type: .withResponse)
            }
        }
        #expect(await world.bridge { $0.esbChannel } == 77)
        #expect(TybeBridgeEmulator.valueNotAllowed == ATTError(0x13))
    }

    @Test func statusCanBeRead() async throws {
        let world = await EmulatorWorld()
        try await world.connect()
        try await world.status()
        try await world.send(seq: 0x42, [a])
        let value = try await world.read(TybeGATT.status)
        #expect(TybeStatus(value) == TybeStatus(bridgeReady: true, ackReceived: true, dongleLinked: true, seq: 0x42, errorCode: 0))
    }
}
