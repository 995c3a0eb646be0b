import Foundation
import Testing

@testable import FlockFinder
@testable import FlockFinderStorage

@Suite("FlockFinder detection store exports")
struct StoreExportTests {
    private let base = StoreFixtures.base

    /// A store with awkward values: SSIDs needing quoting, a missing location, missing fields.
    private func populatedStore() async throws -> (DetectionStore, [StoredDetection]) {
        let provider = StoreCountingLocationProvider(Location(latitude: 37.7749, longitude: -122.4194, horizontalAccuracy: 8))
        let store = try DetectionStore.inMemory(locationProvider: provider)
        var stored: [StoredDetection] = []
        let detections = [
            Detection(type: .flockSafety, rssi: -62, confidence: 0.9, mac: "70:c9:4e:12:34:56", ssid: "Flock, \"Main St\"", deviceUptimeMs: 734_512),
            Detection(type: .other("Raven (Gunshot Detector)"), rssi: -81, confidence: 0.85, mac: "cc:cc:cc:de:ad:01"),
            Detection(type: .ring, rssi: -45, confidence: 1, mac: nil, ssid: "line\r\nbreak", deviceUptimeMs: 0),
            Detection(type: .other("Penguin, \"the\" camera"), rssi: -99, confidence: 0.5, ssid: "plain", deviceUptimeMs: UInt64.max),
        ]
        for (index, detection) in detections.enumerated() {
            stored.append(try #require(try await store.record(detection, receivedAt: base + Double(index) * 1.5)))
        }
        return (store, stored)
    }

    @Test func csvHasTheHeaderAndQuotesPerRFC4180() async throws {
        let (store, stored) = try await populatedStore()
        let csv = try await store.exportCSV()
        #expect(csv.hasPrefix("receivedAt,type,rssi,confidence,proximity,mac,ssid,deviceUptimeMs,latitude,longitude\r\n"))
        #expect(csv.hasSuffix("\r\n"))
        #expect(csv.contains(#","Flock, ""Main St""","#))
        #expect(csv.contains("\"line\r\nbreak\""))

        let records = StoreFixtures.parseCSV(csv)
        #expect(records.count == 1 + stored.count)
        #expect(records[0] == DetectionStore.csvHeader)
        #expect(records.dropFirst().allSatisfy { $0.count == 10 })

        // Rows are in receipt order; every field reads back.
        for (record, expected) in zip(records.dropFirst(), stored) {
            let detection = expected.detection
            let receivedAt = try Date(record[0], strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
            #expect(abs(receivedAt.timeIntervalSince(expected.receivedAt)) < 0.001)
            #expect(record[1] == detection.type.name)
            #expect(Int(record[2]) == detection.rssi)
            #expect(Double(record[3]) == detection.confidence)
            #expect(record[4] == detection.proximity.rawValue)
            #expect(record[5] == (detection.mac ?? ""))
            #expect(record[6] == (detection.ssid ?? ""))
            #expect(record[7] == (detection.deviceUptimeMs.map { String($0) } ?? ""))
            #expect(Double(record[8]) == expected.location?.latitude)
            #expect(Double(record[9]) == expected.location?.longitude)
        }
        #expect(records[1][0] == "2024-01-03T18:40:00.000Z")
        #expect(records[1][3] == "0.9")
        #expect(records[3][3] == "1")
        #expect(records[2][6] == "" && records[2][7] == "")
    }

    @Test func csvOfAnEmptyStoreIsJustTheHeader() async throws {
        let store = try DetectionStore.inMemory()
        #expect(try await store.exportCSV() == DetectionStore.csvHeader.joined(separator: ",") + "\r\n")
    }

    @Test func csvLeavesAbsentLocationsEmpty() async throws {
        let store = try DetectionStore.inMemory()
        try await store.record(StoreFixtures.detection(), receivedAt: base)
        let records = StoreFixtures.parseCSV(try await store.exportCSV())
        #expect(records[1][8] == "" && records[1][9] == "")
    }

    @Test func csvFieldQuotingRules() {
        #expect(DetectionStore.csvField("plain") == "plain")
        #expect(DetectionStore.csvField("") == "")
        #expect(DetectionStore.csvField("a,b") == "\"a,b\"")
        #expect(DetectionStore.csvField("say \"hi\"") == "\"say \"\"hi\"\"\"")
        #expect(DetectionStore.csvField("a\nb") == "\"a\nb\"")
        #expect(DetectionStore.csvField("a\rb") == "\"a\rb\"")
        #expect(DetectionStore.csvField("a\r\nb") == "\"a\r\nb\"")
    }

    /// An SSID is anyone's to choose: `=HYPERLINK(…)` must reach a spreadsheet as text.
    @Test func csvCellsFromTheAirNeverStartAFormula() async throws {
        let store = try DetectionStore.inMemory()
        try await store.record(Detection(type: .other("=1+1"), rssi: -75, confidence: 0.9, mac: "@SUM(A1)", ssid: "=HYPERLINK(\"http://x\",\"y\")"),
                               receivedAt: base)
        try await store.record(Detection(type: .flockSafety, rssi: -60, confidence: 0.9, mac: nil, ssid: "+cmd|' /C calc'!A0"), receivedAt: base)
        try await store.record(Detection(type: .flockSafety, rssi: -61, confidence: 0.9, mac: nil, ssid: "-2+3"), receivedAt: base)
        let records = StoreFixtures.parseCSV(try await store.exportCSV())
        #expect(records[1][1] == "'=1+1")
        #expect(records[1][5] == "'@SUM(A1)")
        #expect(records[1][6] == "'=HYPERLINK(\"http://x\",\"y\")")
        #expect(records[2][6] == "'+cmd|' /C calc'!A0")
        #expect(records[3][6] == "'-2+3")
        // Numbers Tether writes keep their sign.
        #expect(records[2][2] == "-60")
        #expect(DetectionStore.csvText("plain") == "plain" && DetectionStore.csvText("") == "")
        #expect(DetectionStore.csvText("\tx") == "'\tx")
    }

    @Test func jsonExportRoundTrips() async throws {
        let (store, stored) = try await populatedStore()
        let data = try await store.exportJSON()
        let decoded = try DetectionStore.decodeJSONExport(data)
        #expect(decoded.count == stored.count)
        for (back, original) in zip(decoded, stored) {
            #expect(back.id == original.id)
            #expect(back.detection == original.detection)
            #expect(back.location == original.location)
            #expect(abs(back.receivedAt.timeIntervalSince(original.receivedAt)) < 0.001)
        }
    }

    @Test func jsonExportIsAFlatArrayWithExplicitNulls() async throws {
        let store = try DetectionStore.inMemory()
        try await store.record(
            Detection(type: .other("Penguin"), rssi: -75, confidence: 0.9, mac: "aa:bb:cc:dd:ee:ff", ssid: nil),
            receivedAt: base
        )
        let array = try #require(try JSONSerialization.jsonObject(with: try await store.exportJSON()) as? [[String: Any]])
        #expect(array.count == 1)
        let object = try #require(array.first)
        #expect(Set(object.keys) == [
            "type", "id", "receivedAt", "detectionType", "rssi", "confidence", "proximity", "mac", "ssid",
            "deviceUptimeMs", "latitude", "longitude", "horizontalAccuracy",
        ])
        #expect(object["type"] as? String == "detection")
        #expect(object["receivedAt"] as? String == "2024-01-03T18:40:00.000Z")
        #expect(object["detectionType"] as? String == "Penguin")
        #expect(object["rssi"] as? Int == -75)
        #expect(object["proximity"] as? String == "medium")
        #expect(object["mac"] as? String == "aa:bb:cc:dd:ee:ff")
        #expect(object["ssid"] is NSNull)
        #expect(object["deviceUptimeMs"] is NSNull)
        #expect(object["latitude"] is NSNull)
    }

    @Test func anExportOfTheEarlierSchemaStillReads() throws {
        // Before records carried `"type":"detection"`, `type` was the detection type.
        let legacy = Data(#"[{"id":3,"receivedAt":"2024-01-03T18:40:00.000Z","type":"Penguin","rssi":-75,"confidence":0.9,"proximity":"medium","mac":null,"ssid":null,"deviceUptimeMs":5,"latitude":1.5,"longitude":2.5,"horizontalAccuracy":null}]"#.utf8)
        let decoded = try DetectionStore.decodeJSONExport(legacy)
        #expect(decoded.count == 1)
        #expect(decoded.first?.id == 3)
        #expect(decoded.first?.detection.type == .other("Penguin"))
        #expect(decoded.first?.detection.deviceUptimeMs == 5)
        #expect(decoded.first?.location == Location(latitude: 1.5, longitude: 2.5))
    }

    @Test func aRecordThatWasNeverStoredIsRefusedWithItsReason() throws {
        let parsed = Data(#"[{"type":"detection","detectionType":"Ring","rssi":-70,"confidence":0.5,"proximity":"medium","id":null,"receivedAt":null}]"#.utf8)
        #expect(throws: DetectionRecordError.missing("id")) { try DetectionStore.decodeJSONExport(parsed) }
        let other = Data(#"[{"type":"stream","detectionType":"Ring","rssi":-70,"confidence":0.5,"proximity":"medium"}]"#.utf8)
        #expect(throws: DecodingError.self) { try DetectionStore.decodeJSONExport(other) }
    }

    @Test func jsonExportOfAnEmptyStoreIsAnEmptyArray() async throws {
        let store = try DetectionStore.inMemory()
        let data = try await store.exportJSON()
        #expect(try JSONSerialization.jsonObject(with: data) as? [Any] != nil)
        #expect(try DetectionStore.decodeJSONExport(data).isEmpty)
    }
}
