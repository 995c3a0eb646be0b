import Foundation
import PropertyBased
import Testing

@testable import FlockFinder

/// Random protocol values for the property tests.
private enum ProtocolRandom {
    /// Characters that stress escaping: quotes, backslashes, control characters, non-ASCII.
    static let pool: [Character] = Array(
        "abcXYZ019 -_.,:;!?()[]{}<>/@#$%^&*+=~`'" + "\"\\\n\r\t\u{01}\u{08}\u{0C}\u{1F}\u{7F}"
            + "éüß카메라日本😀🚨")
    static let hex: [Character] = Array("0123456789abcdef")

    static func text(_ range: ClosedRange<Int>, _ rng: inout some RandomNumberGenerator) -> String {
        String((0..<Int.random(in: range, using: &rng)).map { _ in pool.randomElement(using: &rng)! })
    }

    static func mac(_ rng: inout some RandomNumberGenerator) -> String {
        (0..<6).map { _ in String((0..<2).map { _ in hex.randomElement(using: &rng)! }) }.joined(separator: ":")
    }

    static func type(_ rng: inout some RandomNumberGenerator) -> DetectionType {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: .other(["Penguin", "Pigvision", "Raven (Gunshot Detector)"].randomElement(using: &rng)!)
        case 1: DetectionType(name: text(1...20, &rng))
        default: DetectionType.known.randomElement(using: &rng)!
        }
    }

    static func detection(_ rng: inout some RandomNumberGenerator) -> Detection {
        Detection(
            type: type(&rng),
            rssi: Int.random(in: -130...20, using: &rng),
            confidence: Bool.random(using: &rng)
                ? Double.random(in: 0...1, using: &rng) : [0, 1, 0.5, 0.85, 0.9].randomElement(using: &rng)!,
            mac: Bool.random(using: &rng) ? mac(&rng) : nil,
            ssid: Bool.random(using: &rng) ? text(1...32, &rng) : nil,
            deviceUptimeMs: Bool.random(using: &rng) ? UInt64.random(in: 0...UInt64.max, using: &rng) : nil
        )
    }

    static func streamEvent(_ rng: inout some RandomNumberGenerator) -> StreamEvent {
        let ts = UInt64.random(in: 0...UInt64(UInt32.max), using: &rng)
        switch Int.random(in: 0..<4, using: &rng) {
        case 0:
            return .wifiScan(
                ssid: text(0...32, &rng), mac: mac(&rng), rssi: Int.random(in: -100...0, using: &rng),
                channel: Int.random(in: 1...14, using: &rng), frameType: Bool.random(using: &rng) ? .probe : .beacon, ts: ts
            )
        case 1:
            return .bleScan(
                name: text(0...29, &rng), mac: mac(&rng), rssi: Int.random(in: -100...0, using: &rng),
                advertisesService: Bool.random(using: &rng), ts: ts
            )
        case 2:
            return .status(message: text(0...60, &rng), ts: ts)
        default:
            return .channel(Int.random(in: 1...14, using: &rng), ts: ts)
        }
    }

    /// What parsing the firmware JSON of `detection` must give: the firmware writes absent
    /// MAC/SSID as "" (read back as nil) and an absent ts as 0.
    static func expectedAfterRoundTrip(_ detection: Detection) -> Detection {
        var expected = detection
        expected.mac = detection.mac?.lowercased()
        expected.deviceUptimeMs = detection.deviceUptimeMs ?? 0
        return expected
    }
}

@Suite("FlockFinder protocol properties")
struct ProtocolPropertyTests {
    private static let detections = Generator<Detection, Shrink.None<Detection>>(run: { rng in
        ProtocolRandom.detection(&rng)
    })
    private static let streamEvents = Generator<StreamEvent, Shrink.None<StreamEvent>>(run: { rng in
        ProtocolRandom.streamEvent(&rng)
    })

    private let parser = ProtocolFixtures.quietParser

    @Test func arbitraryBytesNeverCrash() async {
        await propertyCheck(count: 2_000, input: Gen.uint8().array(of: 0...1_200)) { bytes in
            let data = Data(bytes)
            let message = parser.decode(data)
            if bytes.count > FlockFinderBLEConstants.maxPayloadBytes {
                #expect(message == .invalid(raw: FlockMessageParser.rawText(data), reason: .tooLarge(bytes.count)))
            }
            _ = parser.parseDetection(data)
            _ = parser.parseStream(data)
        }
    }

    @Test func asciiSoupNeverCrashes() async {
        // JSON-ish characters reach deeper into the decoder than uniform random bytes do.
        let alphabet = Array(#"{}[]":,0123456789.-+eE truefalsnl\u"#)
        let soup = Gen.int(in: 0...(alphabet.count - 1)).array(of: 0...200)
        await propertyCheck(count: 2_000, input: soup) { indices in
            _ = parser.decode(Data(String(indices.map { alphabet[$0] }).utf8))
        }
    }

    @Test func mutatedValidPayloadsNeverCrash() async {
        await propertyCheck(
            count: 1_000, input: Self.detections, Gen.int(in: 0...300), Gen.uint8(), Gen.int(in: 0...2)
        ) { detection, position, byte, operation in
            var bytes = Array(detection.firmwareJSON())
            let index = position % (bytes.count + 1)
            switch operation {
            case 0 where index < bytes.count: bytes[index] = byte
            case 1: bytes.insert(byte, at: index)
            default: if index < bytes.count { bytes.remove(at: index) }
            }
            _ = parser.decode(Data(bytes))
        }
    }

    @Test func detectionsRoundTripThroughFirmwareJSON() async {
        await propertyCheck(count: 1_000, input: Self.detections) { detection in
            let data = detection.firmwareJSON()
            let expected = ProtocolRandom.expectedAfterRoundTrip(detection)
            #expect(parser.parseDetection(data) == .success(expected))
            #expect(parser.decode(data) == .detection(expected))
            // Re-encoding what was parsed gives the same bytes.
            #expect(expected.firmwareJSON() == data)
        }
    }

    @Test func streamEventsRoundTripThroughFirmwareJSON() async {
        await propertyCheck(count: 1_000, input: Self.streamEvents) { event in
            let data = event.firmwareJSON()
            #expect(parser.parseStream(data) == .success(event))
            #expect(parser.decode(data) == .stream(event))
        }
    }

    @Test func everyTruncationOfRandomDetectionsIsRejected() async {
        await propertyCheck(count: 100, input: Self.detections) { detection in
            let data = detection.firmwareJSON()
            for length in 0..<data.count {
                guard case .invalid = parser.decode(data.prefix(length)) else {
                    Issue.record("accepted a \(length)-byte prefix of \(String(decoding: data, as: UTF8.self))")
                    return
                }
            }
        }
    }

    @Test func proximityIsMonotonicInRSSI() async {
        let order: [Proximity] = [.far, .medium, .close, .veryClose]
        await propertyCheck(count: 1_000, input: Gen.int(in: -200...50), Gen.int(in: 0...60)) { rssi, step in
            let near = try #require(order.firstIndex(of: Proximity(rssi: rssi + step)))
            let far = try #require(order.firstIndex(of: Proximity(rssi: rssi)))
            #expect(near >= far)
        }
    }
}
