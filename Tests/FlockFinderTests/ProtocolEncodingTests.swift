import Foundation
import Testing

@testable import FlockFinder

@Suite("FlockFinder firmware JSON and parse reports")
struct ProtocolEncodingTests {
    private func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

    // MARK: - firmwareJSON

    @Test func detectionJSONHasTheFirmwareShape() {
        let detection = Detection(
            type: .flockSafety, rssi: -62, confidence: 0.98, mac: "3C:71:BF:12:34:56",
            ssid: "FLOCK-S3-1234", deviceUptimeMs: 1_704_307_200
        )
        #expect(text(detection.firmwareJSON())
            == #"{"type":"Flock Safety","mac":"3c:71:bf:12:34:56","ssid":"FLOCK-S3-1234","rssi":-62,"confidence":0.98,"ts":1704307200}"#)
    }

    @Test func absentFieldsAreWrittenAsTheFirmwareDoes() {
        let detection = Detection(type: .unknown, rssi: -78, confidence: 0.45)
        #expect(text(detection.firmwareJSON())
            == #"{"type":"Unknown","mac":"","ssid":"","rssi":-78,"confidence":0.45,"ts":0}"#)
    }

    @Test(arguments: [
        (0.9, "0.9"), (0.85, "0.85"), (1.0, "1"), (0.0, "0"), (0.5, "0.5"), (0.95, "0.95"),
        (0.1 + 0.2, "0.30000000000000004"), (1e-7, "1e-07"), (-0.0, "0"),
    ])
    func confidenceIsPrintedShortestWithoutTrailingZero(_ value: Double, _ expected: String) {
        #expect(FirmwareJSONWriter.formatNumber(value) == expected)
        #expect(Double(expected) == value)
    }

    @Test func nonFiniteNumbersBecomeNull() {
        #expect(FirmwareJSONWriter.formatNumber(.nan) == "null")
        #expect(FirmwareJSONWriter.formatNumber(.infinity) == "null")
    }

    @Test func stringsAreEscaped() throws {
        let detection = Detection(
            type: .other("Raven \"X\""), rssi: -50, confidence: 0.85, mac: nil,
            ssid: "a\\b\n\r\t\u{08}\u{0C}\u{01}\u{1F}é😀/"
        )
        let json = text(detection.firmwareJSON())
        #expect(json == #"{"type":"Raven \"X\"","mac":"","ssid":"a\\b\n\r\t\b\f\u0001\u001f\#u{e9}😀/","rssi":-50,"confidence":0.85,"ts":0}"#)
        let parsed = try ProtocolFixtures.quietParser.parseDetection(detection.firmwareJSON()).get()
        #expect(parsed.ssid == detection.ssid)
        #expect(parsed.type == detection.type)
    }

    @Test func streamEventJSONHasTheFirmwareShape() {
        #expect(text(StreamEvent.wifiScan(ssid: "Net", mac: "aa:bb", rssi: -60, channel: 6, frameType: .beacon, ts: 9).firmwareJSON())
            == #"{"evt":"wifi_scan","ssid":"Net","mac":"aa:bb","rssi":-60,"ch":6,"type":"beacon","ts":9}"#)
        #expect(text(StreamEvent.bleScan(name: "N", mac: "cc", rssi: -1, advertisesService: false, ts: 0).firmwareJSON())
            == #"{"evt":"ble_scan","name":"N","mac":"cc","rssi":-1,"svc":false,"ts":0}"#)
        #expect(text(StreamEvent.status(message: "ok", ts: 1).firmwareJSON()) == #"{"evt":"status","msg":"ok","ts":1}"#)
        #expect(text(StreamEvent.channel(1, ts: 2).firmwareJSON()) == #"{"evt":"channel","ch":1,"ts":2}"#)
    }

    @Test func streamEventsNameTheirEvtAndTimestamp() {
        let events: [(StreamEvent, String, UInt64)] = [
            (.wifiScan(ssid: "", mac: "", rssi: 0, channel: 1, frameType: .probe, ts: 1), "wifi_scan", 1),
            (.bleScan(name: "", mac: "", rssi: 0, advertisesService: true, ts: 2), "ble_scan", 2),
            (.status(message: "", ts: 3), "status", 3),
            (.channel(4, ts: 4), "channel", 4),
        ]
        for (event, evt, ts) in events {
            #expect(event.evt == evt)
            #expect(event.ts == ts)
        }
    }

    // MARK: - Reports

    private func report(_ message: FlockMessage) throws -> [String: Any] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try ProtocolFixtures.jsonObject(try encoder.encode(FlockParseReport(message)))
    }

    @Test func detectionReportHasEveryKeyWithExplicitNulls() throws {
        let full = try report(.detection(Detection(
            type: .ring, rssi: -71, confidence: 0.85, mac: "a4:83:e7:ab:cd:ef", ssid: "Ring Doorbell Pro",
            deviceUptimeMs: 1_704_307_200
        )))
        #expect(Set(full.keys) == ["type", "detectionType", "rssi", "confidence", "mac", "ssid", "deviceUptimeMs", "proximity", "id", "receivedAt", "latitude", "longitude", "horizontalAccuracy"])
        #expect(full["type"] as? String == "detection")
        #expect(full["detectionType"] as? String == "Ring")
        #expect(full["id"] is NSNull && full["receivedAt"] is NSNull && full["latitude"] is NSNull)
        #expect(full["rssi"] as? Int == -71)
        #expect(full["confidence"] as? Double == 0.85)
        #expect(full["mac"] as? String == "a4:83:e7:ab:cd:ef")
        #expect(full["ssid"] as? String == "Ring Doorbell Pro")
        #expect((full["deviceUptimeMs"] as? NSNumber)?.int64Value == 1_704_307_200)
        #expect(full["proximity"] as? String == "medium")

        let sparse = try report(.detection(Detection(type: .other("Penguin"), rssi: -40, confidence: 0.9)))
        #expect(Set(sparse.keys) == ["type", "detectionType", "rssi", "confidence", "mac", "ssid", "deviceUptimeMs", "proximity", "id", "receivedAt", "latitude", "longitude", "horizontalAccuracy"])
        #expect(sparse["detectionType"] as? String == "Penguin")
        #expect(sparse["mac"] is NSNull)
        #expect(sparse["ssid"] is NSNull)
        #expect(sparse["deviceUptimeMs"] is NSNull)
        #expect(sparse["proximity"] as? String == "veryClose")
    }

    @Test func detectionReportTextContainsNulls() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = text(try encoder.encode(FlockParseReport(.detection(Detection(type: .nest, rssi: -90, confidence: 1)))))
        #expect(json == #"{"confidence":1,"detectionType":"Nest","deviceUptimeMs":null,"horizontalAccuracy":null,"id":null,"latitude":null,"longitude":null,"mac":null,"proximity":"far","receivedAt":null,"rssi":-90,"ssid":null,"type":"detection"}"#)
    }

    @Test func streamReportsCarryTheirFields() throws {
        let wifi = try report(.stream(.wifiScan(ssid: "Net", mac: "aa", rssi: -60, channel: 6, frameType: .probe, ts: 10)))
        #expect(Set(wifi.keys) == ["type", "evt", "ssid", "mac", "rssi", "ch", "frameType", "deviceUptimeMs"])
        #expect(wifi["type"] as? String == "stream")
        #expect(wifi["evt"] as? String == "wifi_scan")
        #expect(wifi["ch"] as? Int == 6)
        #expect(wifi["frameType"] as? String == "probe")
        #expect(wifi["deviceUptimeMs"] as? Int == 10)

        let ble = try report(.stream(.bleScan(name: "FS Ext Battery", mac: "bb", rssi: -70, advertisesService: true, ts: 11)))
        #expect(Set(ble.keys) == ["type", "evt", "name", "mac", "rssi", "svc", "deviceUptimeMs"])
        #expect(ble["name"] as? String == "FS Ext Battery")
        #expect(ble["svc"] as? Bool == true)

        let status = try report(.stream(.status(message: "hello", ts: 12)))
        #expect(Set(status.keys) == ["type", "evt", "msg", "deviceUptimeMs"])
        #expect(status["msg"] as? String == "hello")

        let channel = try report(.stream(.channel(11, ts: 13)))
        #expect(Set(channel.keys) == ["type", "evt", "ch", "deviceUptimeMs"])
        #expect(channel["evt"] as? String == "channel")
        #expect(channel["ch"] as? Int == 11)
    }

    @Test func invalidReportCarriesTheRawTextAndReason() throws {
        let invalid = try report(.invalid(raw: #"{"type":"Ri"#, reason: .notJSON("malformed or truncated JSON")))
        #expect(Set(invalid.keys) == ["type", "input", "reason"])
        #expect(invalid["type"] as? String == "invalid")
        #expect(invalid["input"] as? String == #"{"type":"Ri"#)
        #expect(invalid["reason"] as? String == "not a JSON object: malformed or truncated JSON")
    }

    @Test func reportTypeMatchesTheMessage() {
        #expect(FlockParseReport(.detection(Detection(type: .axis, rssi: 0, confidence: 0))).type == "detection")
        #expect(FlockParseReport(.stream(.channel(1, ts: 0))).type == "stream")
        #expect(FlockParseReport(.invalid(raw: "", reason: .notJSON("empty payload"))).type == "invalid")
    }
}
