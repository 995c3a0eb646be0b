import Foundation
import Testing

@testable import Kiro

/// The device's reassembly of packets sliced across writes (firmware-facts, long packets).
struct ProtocolAssemblerTests {
    static let time = KiroCommand.time(TimeSync(dateTime: "2026-01-30T09:30:00"))
    static let timePacket = protocolHex("05 00 06 1A 01 1E 09 1E 00")
    static let timePacketWithCRC = protocolHex("05 00 06 1A 01 1E 09 1E 00 3F D7")
    static let modePacket = protocolHex("12 00 01 01")
    static let dayPack = KiroCommand.dayPack(ProtocolEncoderTests.threeTaskDayPack)
    static let dayPackPacket = protocolHex("10 01 0B") + ProtocolEncoderTests.threeTaskDayPackPayload

    private func t(_ milliseconds: Int) -> Duration { .milliseconds(milliseconds) }

    @Test func wholePacketInOneWrite() {
        var assembler = KiroPacketAssembler()
        #expect(assembler.push(Self.timePacket, at: .zero) == [.success(Self.time)])
        #expect(assembler.bufferedByteCount == 0)
    }

    @Test(arguments: [false, true])
    func splitAtEveryOffset(_ checksum: Bool) {
        let packet = checksum
            ? Self.dayPackPacket + protocolHex("77 55")
            : Self.dayPackPacket
        for split in 1..<packet.count {
            var assembler = KiroPacketAssembler(checksum: checksum)
            #expect(assembler.push(packet.prefix(split), at: t(0)).isEmpty, "split \(split)")
            #expect(assembler.bufferedByteCount == split)
            #expect(assembler.push(packet.dropFirst(split), at: t(100)) == [.success(Self.dayPack)], "split \(split)")
            #expect(assembler.bufferedByteCount == 0)
        }
    }

    @Test func splitIntoThreeWritesAtEveryPairOfOffsets() {
        let packet = Self.timePacketWithCRC
        for first in 1..<packet.count {
            for second in first..<packet.count {
                var assembler = KiroPacketAssembler(checksum: true)
                var results = assembler.push(packet[0..<first], at: t(0))
                results += assembler.push(packet[first..<second], at: t(10))
                results += assembler.push(packet[second...], at: t(20))
                #expect(results == [.success(Self.time)], "\(first), \(second)")
            }
        }
    }

    @Test func oneByteAtATime() {
        var assembler = KiroPacketAssembler()
        var results: [Result<KiroCommand, KiroPacketError>] = []
        for (index, byte) in Self.dayPackPacket.enumerated() {
            results += assembler.push(Data([byte]), at: t(index * 10))
        }
        #expect(results == [.success(Self.dayPack)])
    }

    @Test func severalPacketsInOneWrite() {
        var assembler = KiroPacketAssembler()
        let pet = protocolHex("01 00 09 05 4D 6F 63 68 69 4D 54 2A")
        let results = assembler.push(Self.timePacket + Self.modePacket + pet, at: .zero)
        #expect(results == [
            .success(Self.time),
            .success(.deviceMode(.focus)),
            .success(.petStatus(PetStatus(name: "Mochi", mood: .missingYou, stage: .teen, progress: 42))),
        ])
    }

    @Test func packetsStraddlingWrites() {
        var assembler = KiroPacketAssembler()
        let stream = Self.timePacket + Self.dayPackPacket + Self.modePacket
        var results = assembler.push(stream.prefix(20), at: t(0))
        #expect(results == [.success(Self.time)])
        results = assembler.push(stream.dropFirst(20).prefix(250), at: t(50))
        #expect(results.isEmpty)
        results = assembler.push(stream.dropFirst(270), at: t(100))
        #expect(results == [.success(Self.dayPack), .success(.deviceMode(.focus))])
    }

    @Test func idleTimeoutDiscardsAPartialPacket() {
        var assembler = KiroPacketAssembler()
        #expect(assembler.push(Self.dayPackPacket.prefix(100), at: t(0)).isEmpty)
        // The write after the silence starts a new packet.
        #expect(assembler.push(Self.timePacket, at: t(2_500)) == [.failure(.timedOut), .success(Self.time)])
        #expect(assembler.bufferedByteCount == 0)
    }

    @Test func silenceIsMeasuredFromTheLastByte() {
        var assembler = KiroPacketAssembler()
        #expect(assembler.push(Self.dayPackPacket.prefix(100), at: t(0)).isEmpty)
        #expect(assembler.push(Self.dayPackPacket.dropFirst(100).prefix(100), at: t(1_900)).isEmpty)
        #expect(assembler.push(Self.dayPackPacket.dropFirst(200), at: t(3_800)) == [.success(Self.dayPack)])
    }

    @Test func pollingWithEmptyDataExpiresAtTheTimeout() {
        var assembler = KiroPacketAssembler(idleTimeout: .seconds(2))
        #expect(assembler.push(Self.timePacket.prefix(4), at: t(1_000)).isEmpty)
        #expect(assembler.push(Data(), at: t(2_999)).isEmpty)
        #expect(assembler.bufferedByteCount == 4)
        #expect(assembler.push(Data(), at: t(3_000)) == [.failure(.timedOut)])
        #expect(assembler.bufferedByteCount == 0)
        // Nothing pending: no further reports.
        #expect(assembler.push(Data(), at: t(9_000)).isEmpty)
    }

    @Test func aCustomTimeout() {
        var assembler = KiroPacketAssembler(idleTimeout: .milliseconds(300))
        #expect(assembler.push(Self.timePacket.prefix(5), at: t(0)).isEmpty)
        #expect(assembler.push(Self.timePacket.dropFirst(5), at: t(299)) == [.success(Self.time)])
        #expect(assembler.push(Self.timePacket.prefix(5), at: t(1_000)).isEmpty)
        #expect(assembler.push(Self.timePacket.dropFirst(5), at: t(1_300)).first == .failure(.timedOut))
    }

    @Test func checksumMismatchDropsOnlyThatPacket() {
        var assembler = KiroPacketAssembler(checksum: true)
        var corruptPayload = Self.timePacketWithCRC
        corruptPayload[5] ^= 0x01
        var corruptCRC = Self.timePacketWithCRC
        corruptCRC[10] ^= 0x80
        let results = assembler.push(corruptPayload + corruptCRC + Self.timePacketWithCRC, at: .zero)
        #expect(results == [.failure(.checksumMismatch), .failure(.checksumMismatch), .success(Self.time)])
    }

    @Test func checksumRoundTripForEveryCommandType() throws {
        var assembler = KiroPacketAssembler(checksum: true)
        for command in ProtocolRoundTripTests.sampleCommands {
            #expect(assembler.push(try command.packet(checksum: true), at: .zero) == [.success(command)])
        }
    }

    @Test func unknownTypeIsSkippedByItsLength() {
        var assembler = KiroPacketAssembler()
        let results = assembler.push(protocolHex("7F 00 02 AA BB") + Self.timePacket, at: .zero)
        #expect(results == [.failure(.unknownType(0x7F)), .success(Self.time)])
    }

    @Test func malformedPayloadIsReportedAndTheStreamContinues() {
        var assembler = KiroPacketAssembler()
        let badMonth = protocolHex("05 00 06 1A 0D 01 00 00 00")
        let results = assembler.push(badMonth + Self.timePacket, at: .zero)
        #expect(results.count == 2)
        if case .failure(.malformed) = results.first {} else { Issue.record("expected malformed, got \(results)") }
        #expect(results.last == .success(Self.time))
    }

    @Test func oversizedHeaderIsDropped() {
        var assembler = KiroPacketAssembler(maxPacketLength: 64)
        let results = assembler.push(protocolHex("10 00 F0 01 02 03"), at: .zero)
        #expect(results.count == 1)
        if case .failure(.malformed) = results.first {} else { Issue.record("expected malformed, got \(results)") }
        #expect(assembler.bufferedByteCount == 0)
        #expect(assembler.push(Self.timePacket, at: t(10)) == [.success(Self.time)])
        // The default limit fits the largest possible day pack.
        var roomy = KiroPacketAssembler()
        #expect(roomy.push(Self.dayPackPacket, at: .zero) == [.success(Self.dayPack)])
    }

    @Test func resetDropsAPartialPacket() {
        var assembler = KiroPacketAssembler()
        #expect(assembler.push(Self.timePacket.prefix(7), at: .zero).isEmpty)
        assembler.reset()
        #expect(assembler.bufferedByteCount == 0)
        #expect(assembler.push(Self.modePacket, at: t(1)) == [.success(.deviceMode(.focus))])
    }

    @Test func errorsDescribeThemselves() {
        #expect(KiroPacketError.unknownType(0x7F).description.contains("0x7F"))
        #expect(KiroPacketError.malformed("why").description.contains("why"))
        #expect(!KiroPacketError.checksumMismatch.description.isEmpty)
        #expect(!KiroPacketError.timedOut.description.isEmpty)
    }
}
