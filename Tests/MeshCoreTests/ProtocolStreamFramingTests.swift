import Foundation
import Logging
import PropertyBased
import Testing
import TetherCore

@testable import MeshCore

@Suite struct ProtocolStreamFramingTests {
    typealias S = ProtocolTestSupport
    typealias Reassembler = LengthPrefixedReassembler<ContinuousClock.Instant>

    static let start = ContinuousClock.now

    /// A reassembler that does not log (the tests feed it a lot of garbage on purpose).
    static func quiet(
        _ direction: MeshCoreStreamDirection, idleTimeout: Duration? = .seconds(2)
    ) -> Reassembler {
        MeshCoreStreamFraming.reassembler(
            receiving: direction, idleTimeout: idleTimeout,
            logger: Logger(label: "protocol-tests") { _ in SwiftLogNoOpLogHandler() })
    }

    @Test func framesCarryMarkerAndLittleEndianLength() {
        #expect(MeshCoreStreamDirection.toRadio.marker == 0x3C)
        #expect(MeshCoreStreamDirection.fromRadio.marker == 0x3E)
        #expect(MeshCoreStreamFraming.frame(S.hex("05"), direction: .toRadio) == S.hex("3C 01 00 05"))
        let contact = S.hex("03 " + ProtocolFrameSamples.aliceBodyHex)
        let framed = MeshCoreStreamFraming.frame(contact, direction: .fromRadio)
        #expect(framed.prefix(3) == S.hex("3E 94 00"))
        #expect(framed.dropFirst(3) == contact)
        let long = Data(count: 0x0123)
        #expect(MeshCoreStreamFraming.frame(long, direction: .fromRadio).prefix(3) == S.hex("3E 23 01"))
    }

    @Test func reassemblerIsConfiguredForMeshCore() {
        let reassembler: Reassembler = MeshCoreStreamFraming.reassembler(receiving: .fromRadio)
        #expect(reassembler.marker == 0x3E)
        #expect(reassembler.endianness == .little)
        #expect(reassembler.maxFrameLength == MeshCoreStreamFraming.maximumFrameLength)
        #expect(reassembler.maxFrameLength > MeshCoreFrameLimits.maximumFrameSize)
        #expect(reassembler.idleTimeout == .seconds(2))
        let radioSide: Reassembler = MeshCoreStreamFraming.reassembler(receiving: .toRadio, idleTimeout: nil)
        #expect(radioSide.marker == 0x3C)
        #expect(radioSide.idleTimeout == nil)
    }

    @Test func reassemblesAcrossEverySplitPoint() {
        let payloads = ProtocolFrameSamples.all.prefix(12).map(\.bytes)
        let stream = payloads.reduce(into: Data()) {
            $0.append(MeshCoreStreamFraming.frame($1, direction: .fromRadio))
        }
        for split in 0...stream.count {
            var reassembler = Self.quiet(.fromRadio)
            var received = reassembler.push(stream.prefix(split), at: Self.start)
            received += reassembler.push(stream.dropFirst(split), at: Self.start)
            #expect(received == payloads, "split at \(split)")
        }
    }

    @Test func reassemblesArbitraryChunkings() async {
        let payloads = ProtocolFrameSamples.all.map(\.bytes)
        let stream = payloads.reduce(into: Data()) {
            $0.append(MeshCoreStreamFraming.frame($1, direction: .toRadio))
        }
        await propertyCheck(count: 300, input: Gen.int(in: 1...40).array(of: 1...400)) { sizes in
            var reassembler = Self.quiet(.toRadio)
            var received: [Data] = []
            var offset = 0
            var sizeIndex = 0
            while offset < stream.count {
                let size = sizes[sizeIndex % sizes.count]
                sizeIndex += 1
                let end = min(stream.count, offset + size)
                received += reassembler.push(stream[offset..<end], at: Self.start)
                offset = end
            }
            #expect(received == payloads)
            #expect(reassembler.pendingByteCount == 0)
        }
    }

    @Test func garbageBeforeAMarkerIsSkipped() throws {
        var reassembler = Self.quiet(.fromRadio)
        let frame = MeshCoreStreamFraming.frame(S.hex("09 80 00 92 65"), direction: .fromRadio)
        let received = reassembler.push(S.hex("00 FF 12 3C 01 00") + frame, at: Self.start)
        #expect(received == [S.hex("09 80 00 92 65")])
        #expect(reassembler.skippedByteCount == 6)
        #expect(try MeshCoreFrame(decoding: received[0]) == .currentTime(1_704_067_200))
    }

    @Test func oversizedLengthIsDiscardedAndBounded() {
        var reassembler = Self.quiet(.fromRadio)
        // 0x012D = 301 bytes: one more than allowed.
        let good = MeshCoreStreamFraming.frame(S.hex("83"), direction: .fromRadio)
        let received = reassembler.push(S.hex("3E 2D 01") + Data(repeating: 0x55, count: 400) + good, at: Self.start)
        #expect(received == [S.hex("83")])
        #expect(reassembler.discardedFrameCount == 1)

        // Memory stays bounded whatever arrives: at most the header plus 300 bytes are held.
        var bounded = Self.quiet(.fromRadio)
        var rng = ProtocolSeededGenerator(seed: 300)
        var stream = S.hex("3E 2C 01") + Data(repeating: 0x00, count: 299)
        stream += Data((0..<20_000).map { _ in UInt8.random(in: 0...255, using: &rng) })
        var offset = 0
        while offset < stream.count {
            let end = min(stream.count, offset + Int.random(in: 1...64, using: &rng))
            _ = bounded.push(stream[offset..<end], at: Self.start)
            #expect(bounded.pendingByteCount <= MeshCoreStreamFraming.maximumFrameLength + 3)
            offset = end
        }
        #expect(bounded.discardedFrameCount > 0)

        // 300 bytes, above the 176-byte frame limit, still comes through whole.
        var tolerant = Self.quiet(.fromRadio)
        let big = Data([0x88]) + Data(repeating: 0x01, count: 299)
        #expect(tolerant.push(MeshCoreStreamFraming.frame(big, direction: .fromRadio), at: Self.start) == [big])
    }

    @Test func zeroLengthHeaderIsDiscarded() {
        var reassembler = Self.quiet(.fromRadio)
        let received = reassembler.push(S.hex("3E 00 00 3E 01 00 0A"), at: Self.start)
        #expect(received == [S.hex("0A")])
        #expect(reassembler.discardedFrameCount == 1)
    }

    @Test func partialFrameIsDroppedAfterTheIdleTimeout() {
        var reassembler = Self.quiet(.fromRadio)
        #expect(reassembler.push(S.hex("3E 05 00 09 80"), at: Self.start).isEmpty)
        let later = Self.start.advanced(by: .seconds(3))
        let received = reassembler.push(S.hex("3E 01 00 0A"), at: later)
        #expect(received == [S.hex("0A")])
        #expect(reassembler.discardedFrameCount == 1)
    }

    @Test func framesForTheOtherDirectionAreIgnored() {
        var reassembler = Self.quiet(.fromRadio)
        let outgoing = MeshCoreStreamFraming.frame(S.hex("16 03"), direction: .toRadio)
        #expect(reassembler.push(outgoing, at: Self.start).isEmpty)
        #expect(reassembler.pendingByteCount == 0)
    }
}
