import Foundation
import Testing

@testable import FlockFinder

@Suite("FlockFinder parser robustness against truncated and hostile input")
struct ProtocolRobustnessTests {
    private let parser = ProtocolFixtures.quietParser

    private static let validPayloads =
        ProtocolFixtures.firmwareDetections + [
            ProtocolFixtures.specSchemaExample, ProtocolFixtures.specFlockExample,
            ProtocolFixtures.specRingExample, ProtocolFixtures.specUnknownExample,
        ]

    @Test(arguments: validPayloads)
    func everyTruncationOfAValidDetectionIsRejected(_ payload: String) {
        let data = ProtocolFixtures.data(payload)
        #expect(parser.parseDetection(data).isSuccess)
        for length in 0..<data.count {
            let prefix = data.prefix(length)
            #expect(!parser.parseDetection(prefix).isSuccess, "prefix of \(length) bytes")
            guard case .invalid(let raw, _) = parser.decode(prefix) else {
                Issue.record("prefix of \(length) bytes was accepted")
                continue
            }
            #expect(raw == String(decoding: prefix, as: UTF8.self))
        }
    }

    @Test(arguments: ProtocolFixtures.firmwareStreamEvents)
    func everyTruncationOfAStreamEventIsRejected(_ payload: String) {
        let data = ProtocolFixtures.data(payload)
        for length in 0..<data.count {
            #expect(!parser.parseStream(data.prefix(length)).isSuccess, "prefix of \(length) bytes")
        }
    }

    @Test func truncationInsideAMultiByteCharacterIsRejected() {
        let data = ProtocolFixtures.data(#"{"type":"Ring","ssid":"카메라","rssi":-60,"confidence":0.9}"#)
        let cut = data.prefix(25)  // splits the UTF-8 of 카
        #expect(parser.parseDetection(cut) == .failure(.notJSON("invalid UTF-8")))
    }

    @Test func payloadsOverTheBoundAreRejectedBeforeParsing() {
        let huge = Data(repeating: UInt8(ascii: "["), count: 5_000_000)
        #expect(parser.parseDetection(huge) == .failure(.tooLarge(5_000_000)))
        guard case .invalid(let raw, .tooLarge(5_000_000)) = parser.decode(huge) else {
            Issue.record("huge payload not reported as too large")
            return
        }
        #expect(raw.utf8.count == FlockFinderBLEConstants.maxPayloadBytes, "raw text is capped")
    }

    @Test func theBoundIsInclusive() throws {
        let prefix = #"{"type":"Ring","rssi":-60,"confidence":0.9,"ssid":""#
        let suffix = #""}"#
        let padding = FlockFinderBLEConstants.maxPayloadBytes - prefix.utf8.count - suffix.utf8.count
        let exact = ProtocolFixtures.data(prefix + String(repeating: "x", count: padding) + suffix)
        #expect(exact.count == 1024)
        #expect(try parser.parseDetection(exact).get().ssid?.count == padding)
        let over = ProtocolFixtures.data(prefix + String(repeating: "x", count: padding + 1) + suffix)
        #expect(parser.parseDetection(over) == .failure(.tooLarge(1025)))
    }

    @Test func deepNestingIsRejectedWithoutRecursingDeeply() {
        let deep = String(repeating: "[", count: 1000) + String(repeating: "]", count: 1000)
        #expect(parser.parseDetection(ProtocolFixtures.data(String(deep.prefix(1024))))
            == .failure(.notJSON("nested deeper than 16 levels")))
        let nestedField = #"{"type":"Ring","rssi":-60,"confidence":0.9,"x":"# + String(repeating: "{\"a\":", count: 100)
            + "1" + String(repeating: "}", count: 100) + "}"
        #expect(parser.parseDetection(ProtocolFixtures.data(nestedField)) == .failure(.notJSON("nested deeper than 16 levels")))
        // Brackets inside strings do not count.
        let bracketsInString = #"{"type":"Ring","rssi":-60,"confidence":0.9,"ssid":"\#(String(repeating: "[{", count: 100))"}"#
        #expect(parser.parseDetection(ProtocolFixtures.data(bracketsInString)).isSuccess)
        // Moderate nesting in an ignored field is fine.
        let moderate = #"{"type":"Ring","rssi":-60,"confidence":0.9,"x":[[[[[[[[{"a":[1]}]]]]]]]]}"#
        #expect(parser.parseDetection(ProtocolFixtures.data(moderate)).isSuccess)
    }

    @Test(arguments: [
        "", " ", "null", "true", "42", #""Ring""#, "[]", #"[{"type":"Ring","rssi":-60,"confidence":0.9}]"#,
        "{", "}", "{}", "{,}", #"{"type"}"#, #"{'type':'Ring'}"#, "NaN", "{type:\"Ring\"}",
        #"{"type":"Ring","rssi":-60,"confidence":NaN}"#,
        #"{"type":"Ring","rssi":-60,"confidence":0.9}{"#, #"{"type":"Ring","rssi":-60,"confidence":.9}"#,
        #"{"type":"Ring","rssi":-60,"confidence":0.9} trailing"#, "PING", "\u{0}\u{0}\u{0}",
    ])
    func garbageIsRejected(_ text: String) {
        let result = parser.parseDetection(ProtocolFixtures.data(text))
        guard case .failure(let error) = result else {
            Issue.record("accepted \(text.debugDescription)")
            return
        }
        if case .notJSON = error {} else if text != "{}" {
            Issue.record("\(text.debugDescription) gave \(error)")
        }
        #expect(!parser.parseStream(ProtocolFixtures.data(text)).isSuccess)
    }

    @Test func emptyObjectIsMissingItsType() {
        #expect(parser.parseDetection(ProtocolFixtures.data("{}")) == .failure(.missingField("type")))
        #expect(parser.parseStream(ProtocolFixtures.data("{}")) == .failure(.missingField("evt")))
    }

    @Test func invalidUTF8IsRejected() {
        var bytes = Array(#"{"type":"Ring","ssid":"#.utf8)
        bytes += [0x22, 0xFF, 0xFE, 0xC0, 0x80, 0x22]  // "\xFF\xFE" plus an overlong NUL
        bytes += Array(#","rssi":-60,"confidence":0.9}"#.utf8)
        let data = Data(bytes)
        #expect(parser.parseDetection(data) == .failure(.notJSON("invalid UTF-8")))
        guard case .invalid(let raw, _) = parser.decode(data) else {
            Issue.record("invalid UTF-8 accepted")
            return
        }
        #expect(raw.contains("\u{FFFD}"), "raw text is repaired, not dropped")
    }

    @Test func utf16JSONIsRejected() throws {
        let utf16 = try #require(#"{"type":"Ring","rssi":-60,"confidence":0.9}"#.data(using: .utf16))
        #expect(!parser.parseDetection(utf16).isSuccess)
    }

    @Test func randomGarbageNeverCrashes() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let count = Int.random(in: 0...1_100, using: &rng)
            let data = Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) })
            _ = parser.decode(data)
        }
    }
}

extension Result {
    /// Whether this is a success.
    fileprivate var isSuccess: Bool {
        if case .success = self { true } else { false }
    }
}
