import Foundation
import Testing

@testable import FlockFinder

@Suite("FlockFinder detection and stream parsing")
struct ProtocolParserTests {
    private let parser = ProtocolFixtures.quietParser

    private func detection(_ text: String) -> Result<Detection, FlockParseError> {
        parser.parseDetection(ProtocolFixtures.data(text))
    }

    private func stream(_ text: String) -> Result<StreamEvent, FlockParseError> {
        parser.parseStream(ProtocolFixtures.data(text))
    }

    // MARK: - Spec examples

    @Test func parsesTheSpecSchemaExample() throws {
        let parsed = try detection(ProtocolFixtures.specSchemaExample).get()
        #expect(parsed == Detection(
            type: .flockSafety, rssi: -55, confidence: 0.95,
            mac: "AA:BB:CC:DD:EE:FF", ssid: "FLOCK-CAM-001", deviceUptimeMs: 123_456_789
        ))
        #expect(parsed.proximity == .close)
    }

    @Test func parsesTheSpecFlockSafetyExample() throws {
        let parsed = try detection(ProtocolFixtures.specFlockExample).get()
        #expect(parsed == Detection(
            type: .flockSafety, rssi: -62, confidence: 0.98,
            mac: "3C:71:BF:12:34:56", ssid: "FLOCK-S3-1234", deviceUptimeMs: 1_704_307_200
        ))
    }

    @Test func parsesTheSpecRingExample() throws {
        let parsed = try detection(ProtocolFixtures.specRingExample).get()
        #expect(parsed == Detection(
            type: .ring, rssi: -71, confidence: 0.85,
            mac: "A4:83:E7:AB:CD:EF", ssid: "Ring Doorbell Pro", deviceUptimeMs: 1_704_307_200
        ))
        #expect(parsed.proximity == .medium)
    }

    @Test func parsesTheSpecUnknownExampleWithoutSSID() throws {
        let parsed = try detection(ProtocolFixtures.specUnknownExample).get()
        #expect(parsed == Detection(
            type: .unknown, rssi: -78, confidence: 0.45, mac: "00:11:22:33:44:55", ssid: nil,
            deviceUptimeMs: 1_704_307_200
        ))
    }

    // MARK: - Firmware payloads

    @Test func parsesFirmwareWiFiDetections() throws {
        let flock = try detection(ProtocolFixtures.firmwareWiFiFlock).get()
        #expect(flock == Detection(
            type: .flockSafety, rssi: -67, confidence: 0.9, mac: "70:c9:4e:12:34:56",
            ssid: "Flock-A1B2C3", deviceUptimeMs: 734_512
        ))
        let penguin = try detection(ProtocolFixtures.firmwareWiFiPenguin).get()
        #expect(penguin.type == .other("Penguin"))
        #expect(penguin.type.name == "Penguin")
        #expect(penguin.confidence == 0.9)
        let pigvision = try detection(ProtocolFixtures.firmwareWiFiPigvision).get()
        #expect(pigvision.type == .other("Pigvision"))
        #expect(pigvision.proximity == .far)
        #expect(pigvision.deviceUptimeMs == 1000)
    }

    @Test func parsesFirmwareBLEDetections() throws {
        let flock = try detection(ProtocolFixtures.firmwareBLEFlock).get()
        #expect(flock == Detection(
            type: .flockSafety, rssi: -49, confidence: 0.85, mac: "58:8e:81:11:22:33",
            ssid: "FS Ext Battery", deviceUptimeMs: 42
        ))
        #expect(flock.proximity == .veryClose)
        let raven = try detection(ProtocolFixtures.firmwareBLERaven).get()
        #expect(raven == Detection(
            type: .other("Raven (Gunshot Detector)"), rssi: -81, confidence: 0.85,
            mac: "cc:cc:cc:de:ad:01", ssid: nil, deviceUptimeMs: 3_600_000
        ))
        let axis = try detection(ProtocolFixtures.firmwareBLENameDerived).get()
        #expect(axis.type == .axis)
        #expect(axis.deviceUptimeMs == 4_294_967_295)
    }

    @Test(arguments: ProtocolFixtures.firmwareDetections)
    func firmwareDetectionsReencodeByteForByte(_ payload: String) throws {
        let parsed = try detection(payload).get()
        #expect(String(decoding: parsed.firmwareJSON(), as: UTF8.self) == payload)
    }

    @Test func parsesFirmwareStreamEvents() throws {
        #expect(try stream(ProtocolFixtures.firmwareWiFiScan).get()
            == .wifiScan(ssid: "HomeNet", mac: "aa:bb:cc:dd:ee:ff", rssi: -60, channel: 6, frameType: .probe, ts: 1000))
        #expect(try stream(ProtocolFixtures.firmwareWiFiBeacon).get()
            == .wifiScan(ssid: "", mac: "70:c9:4e:00:00:01", rssi: -40, channel: 11, frameType: .beacon, ts: 2000))
        #expect(try stream(ProtocolFixtures.firmwareBLEScan).get()
            == .bleScan(name: "FS Ext Battery", mac: "58:8e:81:11:22:33", rssi: -70, advertisesService: true, ts: 3000))
        #expect(try stream(ProtocolFixtures.firmwareBLEScanNoName).get()
            == .bleScan(name: "", mac: "11:22:33:44:55:66", rssi: -99, advertisesService: false, ts: 3001))
        #expect(try stream(ProtocolFixtures.firmwareStatus).get() == .status(message: "Scanning started", ts: 5))
        #expect(try stream(ProtocolFixtures.firmwareChannel).get() == .channel(13, ts: 123_456))
    }

    @Test(arguments: ProtocolFixtures.firmwareStreamEvents)
    func firmwareStreamEventsReencodeByteForByte(_ payload: String) throws {
        let event = try stream(payload).get()
        #expect(String(decoding: event.firmwareJSON(), as: UTF8.self) == payload)
        #expect(parser.decode(ProtocolFixtures.data(payload)) == .stream(event))
    }

    // MARK: - Required and optional fields

    @Test(arguments: ["type", "rssi", "confidence"])
    func missingRequiredFieldIsRejected(_ key: String) throws {
        var object: [String: Any] = ["type": "Ring", "rssi": -60, "confidence": 0.7, "mac": "aa:bb:cc:dd:ee:ff"]
        object[key] = nil
        let data = try JSONSerialization.data(withJSONObject: object)
        #expect(parser.parseDetection(data) == .failure(.missingField(key)))
        object[key] = NSNull()
        let withNull = try JSONSerialization.data(withJSONObject: object)
        #expect(parser.parseDetection(withNull) == .failure(.missingField(key)))
    }

    @Test func onlyTheRequiredFieldsAreNeeded() throws {
        let parsed = try detection(#"{"type":"Verkada","rssi":-40,"confidence":0.6}"#).get()
        #expect(parsed == Detection(type: .verkada, rssi: -40, confidence: 0.6))
        #expect(parsed.mac == nil && parsed.ssid == nil && parsed.deviceUptimeMs == nil)
    }

    @Test func emptyAndNullOptionalFieldsAreAbsent() throws {
        let empty = try detection(#"{"type":"Nest","mac":"","ssid":"","rssi":-40,"confidence":0.6}"#).get()
        #expect(empty.mac == nil && empty.ssid == nil)
        let null = try detection(#"{"type":"Nest","mac":null,"ssid":null,"ts":null,"rssi":-40,"confidence":0.6}"#).get()
        #expect(null.mac == nil && null.ssid == nil && null.deviceUptimeMs == nil)
        // A zero uptime is a value, not an absence.
        #expect(try detection(#"{"type":"Nest","rssi":-40,"confidence":0.6,"ts":0}"#).get().deviceUptimeMs == 0)
    }

    @Test func extraFieldsAreIgnored() throws {
        let payload = #"""
            {"version":2,"type":"Arlo","extra":{"nested":[1,2,{"deep":true}]},"rssi":-45,"list":[],
             "confidence":0.7,"flag":false,"note":"hi","n":null,"big":1e300}
            """#
        #expect(try detection(payload).get() == Detection(type: .arlo, rssi: -45, confidence: 0.7))
    }

    @Test func keysAreCaseSensitive() {
        #expect(detection(#"{"Type":"Arlo","rssi":-45,"confidence":0.7}"#) == .failure(.missingField("type")))
    }

    // MARK: - Numbers

    @Test func integersAndFloatsAreBothAccepted() throws {
        let floats = try detection(#"{"type":"Wyze","rssi":-55.0,"confidence":1,"ts":1000.0}"#).get()
        #expect(floats.rssi == -55)
        #expect(floats.confidence == 1)
        #expect(floats.deviceUptimeMs == 1000)
        let exponent = try detection(#"{"type":"Wyze","rssi":-5.5e1,"confidence":9e-1,"ts":1e3}"#).get()
        #expect(exponent.rssi == -55)
        #expect(exponent.confidence == 0.9)
        #expect(exponent.deviceUptimeMs == 1000)
        #expect(try detection(#"{"type":"Wyze","rssi":-55,"confidence":0}"#).get().confidence == 0)
    }

    @Test func largeUptimesKeepFullPrecision() throws {
        let max = try detection(#"{"type":"Eufy","rssi":-55,"confidence":0.5,"ts":18446744073709551615}"#).get()
        #expect(max.deviceUptimeMs == UInt64.max)
        let odd = try detection(#"{"type":"Eufy","rssi":-55,"confidence":0.5,"ts":9007199254740993}"#).get()
        #expect(odd.deviceUptimeMs == 9_007_199_254_740_993)
    }

    @Test(arguments: [
        (#"{"type":"Lorex","rssi":-55.5,"confidence":0.5}"#, "rssi"),
        (#"{"type":"Lorex","rssi":"-55","confidence":0.5}"#, "rssi"),
        (#"{"type":"Lorex","rssi":true,"confidence":0.5}"#, "rssi"),
        (#"{"type":"Lorex","rssi":[-55],"confidence":0.5}"#, "rssi"),
        (#"{"type":"Lorex","rssi":1e30,"confidence":0.5}"#, "rssi"),
        (#"{"type":"Lorex","rssi":-55,"confidence":"0.5"}"#, "confidence"),
        (#"{"type":"Lorex","rssi":-55,"confidence":true}"#, "confidence"),
        (#"{"type":"Lorex","rssi":-55,"confidence":1.0000001}"#, "confidence"),
        (#"{"type":"Lorex","rssi":-55,"confidence":-0.01}"#, "confidence"),
        (#"{"type":"Lorex","rssi":-55,"confidence":95}"#, "confidence"),
        (#"{"type":"Lorex","rssi":-55,"confidence":0.5,"ts":-1}"#, "ts"),
        (#"{"type":"Lorex","rssi":-55,"confidence":0.5,"ts":1.5}"#, "ts"),
        (#"{"type":"Lorex","rssi":-55,"confidence":0.5,"ts":"1000"}"#, "ts"),
        (#"{"type":"Lorex","rssi":-55,"confidence":0.5,"ts":1e20}"#, "ts"),
        (#"{"type":"Lorex","rssi":-55,"confidence":0.5,"mac":42}"#, "mac"),
        (#"{"type":"Lorex","rssi":-55,"confidence":0.5,"ssid":{"a":1}}"#, "ssid"),
        (#"{"type":7,"rssi":-55,"confidence":0.5}"#, "type"),
        (#"{"type":"","rssi":-55,"confidence":0.5}"#, "type"),
        (#"{"type":["Ring"],"rssi":-55,"confidence":0.5}"#, "type"),
    ])
    func invalidFieldsAreRejected(_ payload: String, _ key: String) {
        #expect(detection(payload) == .failure(.invalidField(key)))
    }

    @Test func confidenceBoundsAreInclusive() throws {
        #expect(try detection(#"{"type":"Dahua","rssi":-55,"confidence":0.0}"#).get().confidence == 0)
        #expect(try detection(#"{"type":"Dahua","rssi":-55,"confidence":1.0}"#).get().confidence == 1)
    }

    // MARK: - Types

    @Test(arguments: DetectionType.known)
    func everyKnownTypeNameParsesCaseInsensitively(_ type: DetectionType) throws {
        for name in [type.name, type.name.lowercased(), type.name.uppercased()] {
            let parsed = try detection(#"{"type":"\#(name)","rssi":-60,"confidence":0.9}"#).get()
            #expect(parsed.type == type)
        }
    }

    @Test func unknownFirmwareTypesAreKeptVerbatim() throws {
        for name in ["Penguin", "Pigvision", "Raven (Gunshot Detector)", "flock", "Ring Doorbell", " Ring", "ÄXIS 📷"] {
            let parsed = try detection(#"{"type":"\#(name)","rssi":-60,"confidence":0.9}"#).get()
            #expect(parsed.type == .other(name))
            #expect(parsed.type.name == name)
        }
    }

    @Test func escapedStringsAreDecoded() throws {
        let parsed = try detection(#"{"type":"Ring","ssid":"a\"b\\c\u00e9\n","rssi":-60,"confidence":0.9}"#).get()
        #expect(parsed.ssid == "a\"b\\cé\n")
    }

    // MARK: - Stream errors

    @Test func streamErrorsNameTheField() {
        #expect(stream(#"{"evt":"sniff","ts":1}"#) == .failure(.unknownEvent("sniff")))
        #expect(stream(#"{"evt":7,"ts":1}"#) == .failure(.invalidField("evt")))
        #expect(stream(#"{"evt":null,"ts":1}"#) == .failure(.missingField("evt")))
        #expect(stream(#"{"evt":"status","msg":"x"}"#) == .failure(.missingField("ts")))
        #expect(stream(#"{"evt":"channel","ch":"6","ts":1}"#) == .failure(.invalidField("ch")))
        #expect(stream(#"{"evt":"ble_scan","name":"x","mac":"m","rssi":-1,"svc":1,"ts":1}"#)
            == .failure(.invalidField("svc")))
        #expect(stream(#"{"evt":"ble_scan","name":"x","mac":"m","rssi":-1,"ts":1}"#)
            == .failure(.missingField("svc")))
        #expect(stream(#"{"evt":"wifi_scan","ssid":"x","mac":"m","rssi":-1,"ch":1,"type":"data","ts":1}"#)
            == .failure(.invalidField("type")))
        #expect(stream(#"{"evt":"wifi_scan","ssid":"x","mac":"m","rssi":-1,"ch":1,"type":"PROBE","ts":1}"#)
            == .failure(.invalidField("type")))
        #expect(stream(#"{"evt":"wifi_scan","mac":"m","rssi":-1,"ch":1,"type":"probe","ts":1}"#)
            == .failure(.missingField("ssid")))
    }

    @Test func streamAcceptsIntegralFloatsAndIgnoresExtraFields() throws {
        let event = try stream(#"{"evt":"channel","ch":6.0,"ts":10,"extra":[1]}"#).get()
        #expect(event == .channel(6, ts: 10))
    }

    // MARK: - Dispatch

    @Test func parseDispatchesOnTheEvtKey() throws {
        let parsed = parser.decode(ProtocolFixtures.data(ProtocolFixtures.firmwareWiFiFlock))
        #expect(parsed == .detection(try detection(ProtocolFixtures.firmwareWiFiFlock).get()))
        #expect(parser.decode(ProtocolFixtures.data(ProtocolFixtures.firmwareStatus))
            == .stream(.status(message: "Scanning started", ts: 5)))
        // An evt key makes it a stream payload even when it also looks like a detection.
        let both = #"{"evt":"nope","type":"Ring","rssi":-60,"confidence":0.9}"#
        #expect(parser.decode(ProtocolFixtures.data(both)) == .invalid(raw: both, reason: .unknownEvent("nope")))
    }

    @Test func theSpecificParsersRejectTheOtherKind() {
        #expect(parser.parseStream(ProtocolFixtures.data(ProtocolFixtures.firmwareWiFiFlock))
            == .failure(.missingField("evt")))
        // A wifi_scan has type and rssi but no confidence.
        #expect(parser.parseDetection(ProtocolFixtures.data(ProtocolFixtures.firmwareWiFiScan))
            == .failure(.missingField("confidence")))
    }

    @Test func decodeReportsInvalidPayloads() {
        let raw = #"{"type":"Ring","rssi":-60"#
        #expect(parser.decode(ProtocolFixtures.data(raw)) == .invalid(raw: raw, reason: .notJSON("malformed or truncated JSON")))
    }

    @Test func parseErrorsDescribeThemselves() {
        #expect(FlockParseError.tooLarge(2000).description == "payload of 2000 bytes exceeds 1024")
        #expect(FlockParseError.missingField("rssi").description == #"missing field "rssi""#)
        #expect(FlockParseError.invalidField("ts").description == #"invalid field "ts""#)
        #expect(FlockParseError.unknownEvent("x").description == #"unknown stream event "x""#)
        #expect(FlockParseError.notJSON("empty payload").description == "not a JSON object: empty payload")
    }
}
