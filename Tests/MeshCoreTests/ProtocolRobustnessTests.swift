import Foundation
import PropertyBased
import Testing

@testable import MeshCore

/// A small deterministic generator (SplitMix64), so failures reproduce.
struct ProtocolSeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

@Suite struct ProtocolRobustnessTests {
    typealias S = ProtocolTestSupport

    /// Every code byte the decoders know, plus a few they do not.
    static let interestingCodes: [UInt8] =
        MeshCoreResponseCode.allCases.map(\.rawValue) + MeshCorePushCode.allCases.map(\.rawValue)
        + MeshCoreCommandCode.allCases.map(\.rawValue) + [0x19, 0x7F, 0x91, 0xFF]

    @Test(arguments: ProtocolFrameSamples.all)
    func everyTruncationIsRejectedUnlessItIsItselfAFrame(_ sample: ProtocolFrameSample) {
        for length in 0..<sample.bytes.count {
            let prefix = sample.bytes.prefix(length)
            do {
                let frame = try MeshCoreFrame(decoding: prefix)
                #expect(
                    sample.decodablePrefixLengths.contains(length),
                    "\(sample.name): the \(length)-byte prefix decoded as \(frame)")
                // A shorter frame that decodes is a complete frame in its own right.
                #expect(try MeshCoreFrame(decoding: frame.encoded()) == frame)
                if prefix != Data([0x01]) {
                    #expect(frame.encoded() == prefix, "\(sample.name) prefix \(length)")
                }
            } catch {
                #expect(
                    !sample.decodablePrefixLengths.contains(length),
                    "\(sample.name): the \(length)-byte prefix threw \(error)")
                if length == 0 {
                    #expect(error == .empty)
                }
            }
        }
    }

    @Test func truncationErrorsSayWhatWasMissing() {
        #expect(throws: MeshCoreDecodeError.truncated(code: 3, needed: 148, got: 100)) {
            try MeshCoreFrame(decoding: S.hex("03 " + ProtocolFrameSamples.aliceBodyHex).prefix(100))
        }
        #expect(throws: MeshCoreDecodeError.truncated(code: 0x0D, needed: 80, got: 2)) {
            try MeshCoreFrame(decoding: S.hex("0D 0D"))
        }
        #expect(throws: MeshCoreDecodeError.truncated(code: 5, needed: 58, got: 57)) {
            try MeshCoreFrame(decoding: Data([0x05]) + Data(count: 56))
        }
        #expect(throws: MeshCoreDecodeError.truncated(code: 0x10, needed: 20, got: 18)) {
            try MeshCoreFrame(decoding: S.hex("10 00 00 00 A1 A2 A3 A4 A5 A6 FF 02 80 00 92 65 0A 0B"))
        }
        #expect(throws: MeshCoreDecodeError.truncated(code: 0x0C, needed: 7, got: 5)) {
            try MeshCoreFrame(decoding: S.hex("0C 7C 10 00 01"))
        }
    }

    @Test func oversizedFramesAreRejected() throws {
        #expect(throws: MeshCoreDecodeError.tooLarge(177)) {
            try MeshCoreFrame(decoding: Data([0x88]) + Data(count: 176))
        }
        #expect(throws: MeshCoreDecodeError.tooLarge(5000)) {
            try MeshCoreFrame(decoding: Data(repeating: 0x00, count: 5000))
        }
        // 176 bytes is allowed, and newer firmware may append fields to fixed layouts.
        let longest = try MeshCoreFrame(decoding: Data([0x88]) + Data(count: 175))
        #expect(longest == .rxLog(snr: 0, rssi: 0, packet: Data(count: 173)))
        let extended = try MeshCoreFrame(decoding: S.hex("09 80 00 92 65 01 02 03"))
        #expect(extended == .currentTime(1_704_067_200))
    }

    @Test func randomBytesNeverCrashTheFrameDecoder() async {
        await propertyCheck(count: 2_000, input: Gen.uint8().array(of: 0...300)) { bytes in
            Self.exercise(frame: Data(bytes))
        }
    }

    @Test func plausibleFramesNeverCrashTheFrameDecoder() async {
        await propertyCheck(
            count: 3_000, input: Gen.element(of: Self.interestingCodes), Gen.uint8().array(of: 0...180)
        ) { code, payload in
            Self.exercise(frame: Data([code ?? 0] + payload))
        }
    }

    @Test func randomBytesNeverCrashTheCommandDecoder() async {
        await propertyCheck(
            count: 3_000, input: Gen.element(of: Self.interestingCodes), Gen.uint8().array(of: 0...200)
        ) { code, payload in
            Self.exercise(command: Data([code ?? 0] + payload))
        }
    }

    /// The parsers of what arrives inside frames, from links and from users: cards, share links,
    /// telemetry, neighbour lists, access lists, anonymous answers, discovery answers. None may
    /// trap, and what decodes encodes back to a value that decodes the same.
    @Test func randomBytesNeverCrashTheBodyParsers() async {
        await propertyCheck(count: 1_500, input: Gen.uint8().array(of: 0...260)) { bytes in
            let data = Data(bytes)
            if let card = try? MeshContactCard(packet: data) {
                #expect((try? MeshContactCard(packet: card.packet)) == card)
                _ = card.advert.isSignatureValid
                _ = card.advert.contact
            }
            _ = try? MeshContactCard(uri: "meshcore://" + data.map { String(format: "%02x", $0) }.joined())
            _ = try? MeshShareLink(String(decoding: data, as: UTF8.self))
            let telemetry = MeshTelemetry(lpp: data)
            #expect(MeshTelemetry(lpp: telemetry.lpp) == telemetry)
            for prefix in [0, 4, 6, 32, 40] { _ = try? MeshNeighbours(decoding: data, prefixLength: prefix) }
            _ = MeshAccessEntry.list(decoding: data)
            for kind in MeshAnonymousRequest.Kind.allCases { _ = try? MeshAnonymousResponse(decoding: data, kind: kind) }
            _ = MeshNodeDiscovery.Answer(payload: data)
            _ = MeshBinaryRequest(decoding: data)
            _ = MeshAnonymousRequest(decoding: data)
            _ = try? MeshNodeStatus(decoding: data)
            _ = MeshAdvertData(decoding: data)
            if let figures = try? MeshMinMaxAverage(decoding: data) { #expect((try? MeshMinMaxAverage(decoding: figures.encoded)) == figures) }
            _ = MeshOwnerInfo(text: String(decoding: data, as: UTF8.self), withVersion: true)
        }
    }

    @Test func mutatedSamplesNeverCrash() {
        var rng = ProtocolSeededGenerator(seed: 0x4D65_7368_436F_7265)
        let samples = ProtocolFrameSamples.all.map(\.bytes)
        for _ in 0..<20_000 {
            var bytes = samples.randomElement(using: &rng)!
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                switch Int.random(in: 0..<4, using: &rng) {
                case 0 where !bytes.isEmpty:
                    let index = bytes.startIndex + Int.random(in: 0..<bytes.count, using: &rng)
                    bytes[index] = UInt8.random(in: 0...255, using: &rng)
                case 1 where !bytes.isEmpty:
                    bytes.removeLast(Int.random(in: 0...bytes.count, using: &rng))
                case 2:
                    bytes.append(contentsOf: (0..<Int.random(in: 0...8, using: &rng)).map { _ in
                        UInt8.random(in: 0...255, using: &rng)
                    })
                default:
                    // Exercise slices whose indices do not start at zero.
                    bytes = (Data([0xEE]) + bytes).dropFirst()
                }
            }
            Self.exercise(frame: bytes)
            Self.exercise(command: bytes)
        }
    }

    @Test func seededRandomFramesNeverCrash() {
        var rng = ProtocolSeededGenerator(seed: 176)
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...200, using: &rng)
            let bytes = Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) })
            Self.exercise(frame: bytes)
            Self.exercise(command: bytes)
        }
    }

    /// Decodes `frame`; if that works, the result must re-encode and decode again.
    static func exercise(frame: Data) {
        do {
            let decoded = try MeshCoreFrame(decoding: frame)
            #expect(decoded.code == frame.first)
            _ = try? MeshCoreFrame(decoding: decoded.encoded())
        } catch {
            #expect(!frame.isEmpty || error == .empty)
            #expect(frame.count <= MeshCoreFrameLimits.maximumFrameSize || error == .tooLarge(frame.count))
        }
    }

    /// Decodes `frame` as a command; if that works, its encoding must decode again.
    static func exercise(command frame: Data) {
        do {
            let decoded = try MeshCoreCommand(decoding: frame)
            #expect(decoded.code == frame.first)
            if let encoded = try? decoded.encoded() {
                _ = try? MeshCoreCommand(decoding: encoded)
            }
        } catch {
            #expect(!frame.isEmpty || error == .empty)
        }
    }
}
