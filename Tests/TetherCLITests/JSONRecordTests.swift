import Foundation
import Testing
import FlockFinder
import GripFit
import Kiro
import MeshCore
import TetherCore
@testable import tether

/// Every `--json` line is an object whose `type` names its record, with timestamps in ISO 8601
/// with milliseconds, and a record kind has one shape whichever command prints it.
@Suite struct JSONRecordTests {
    private static let moment = Date(timeIntervalSince1970: 1_764_089_556.789)

    private func object(_ value: some Encodable) throws -> [String: Any] {
        let line = jsonLine(value)
        #expect(!line.contains("\n"), "one record per line")
        return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    private func expectTimestamp(_ value: Any?, _ comment: Comment? = nil) {
        let text = value as? String ?? ""
        #expect(text.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "not ISO 8601 with milliseconds: \(text)")
    }

    @Test func gripFitReadingsAndSessionsShareTheirShapes() throws {
        let reading = try object(ReadingLine(GripReading(raw: 834_572, force: 12.5, receivedAt: Self.moment)))
        #expect(reading["type"] as? String == "reading")
        #expect(Set(reading.keys) == ["type", "raw", "force", "receivedAt"])
        expectTimestamp(reading["receivedAt"])
        #expect(reading["receivedAt"] as? String == "2025-11-25T16:52:36.789Z")

        // `parse` prints the same record type, with the fields a line alone can tell.
        let parsed = try object(GripFitParseReport(.success(.reading(834_572)), raw: "R:834572"))
        #expect(parsed["type"] as? String == "reading")
        #expect(Set(parsed.keys).isSubset(of: Set(reading.keys)))
        #expect(parsed["raw"] as? Int == reading["raw"] as? Int)

        let summary = GripSessionSummary(id: UUID(), startedAt: Self.moment, duration: 3, maxForce: 20, averageForce: 10, sampleCount: 30)
        let session = try object(SessionLine(summary))
        #expect(session["type"] as? String == "session")
        expectTimestamp(session["startedAt"])
        #expect(session["samples"] == nil)
        let unsaved = try object(SessionLine(GripSessionRecord(summary: summary, samples: [GripSample(offset: 0.1, raw: 5, force: 1)])))
        #expect(Set(unsaved.keys) == Set(session.keys).union(["samples"]))
        #expect((unsaved["samples"] as? [Any])?.count == 1)
    }

    @Test func detectionsHaveOneShapeInWatchParseHistoryAndExport() throws {
        let detection = Detection(type: .ring, rssi: -71, confidence: 0.85, mac: "a4:83:e7:ab:cd:ef")
        let stored = StoredDetection(id: 4, detection: detection, receivedAt: Self.moment, location: Location(latitude: 1, longitude: 2))
        let watched = try object(watchRecord(ReceivedDetection(detection: detection, receivedAt: Self.moment, stored: stored, storageFailure: nil)))
        let unstored = try object(watchRecord(ReceivedDetection(detection: detection, receivedAt: Self.moment, stored: nil, storageFailure: "disk full")))
        let history = try object(DetectionRecord(stored))
        let parsed = try object(FlockParseReport(.detection(detection)))
        for record in [watched, unstored, history, parsed] {
            #expect(record["type"] as? String == "detection")
            #expect(record["detectionType"] as? String == "Ring")
        }
        #expect(Set(history.keys) == Set(parsed.keys))
        #expect(Set(watched.keys) == Set(history.keys).union(["stored"]))
        #expect(Set(unstored.keys) == Set(history.keys).union(["stored", "storageFailure"]))
        #expect(watched["id"] as? Int == 4 && watched["stored"] as? Bool == true)
        #expect(unstored["id"] is NSNull && unstored["stored"] as? Bool == false)
        expectTimestamp(watched["receivedAt"])
        expectTimestamp(unstored["receivedAt"])
        #expect(NSDictionary(dictionary: history) == NSDictionary(dictionary: watched.filter { $0.key != "stored" }))
    }

    @Test func kiroRecordsAreTypedAndStampedInISO8601() throws {
        let event = try object(KiroEventReport(KiroEvent(type: .enterTaskIn, id: "t1", timestamp: 1_764_089_556)))
        #expect(event["type"] as? String == "event")
        #expect(event["eventType"] as? String == EventLogType.enterTaskIn.rawValue)
        #expect(event["taskId"] as? String == "t1")
        #expect(event["timestamp"] as? String == "2025-11-25T16:52:36.000Z")
        let focus = try object(FocusLine(FocusSession(taskId: "t1", start: Self.moment, end: Self.moment.addingTimeInterval(60), outcome: .completed), focus: 60))
        #expect(focus["type"] as? String == "focusSession")
        expectTimestamp(focus["start"])
        expectTimestamp(focus["end"])
    }

    @Test func meshMessagesHaveOneShapeWhetherSentStoredOrHeard() throws {
        let incoming = MeshMessage(direction: .incoming, kind: .direct, peer: "a1b2c3d4e5f6", text: "hi", timestamp: 1_764_089_556, status: .received)
        let heard = try #require(MeshListenLine(.message(incoming), names: ["a1b2c3d4e5f6": "Ana"]))
        let heardObject = try object(heard)
        let storedObject = try object(MeshMessageLine(incoming, contact: "Ana"))
        #expect(heardObject["type"] as? String == "message")
        #expect(NSDictionary(dictionary: heardObject) == NSDictionary(dictionary: storedObject))
        #expect(heardObject["contact"] as? String == "Ana")
        #expect(heardObject["messageKind"] as? String == "direct")
        expectTimestamp(heardObject["sentAt"])

        let sent = MeshMessage(direction: .outgoing, kind: .direct, peer: "a1b2c3d4e5f6", text: "yo", timestamp: 1, status: .delivered, ack: 0xDEAD_BEEF, roundTrip: 812)
        let sentObject = try object(MeshMessageLine(sent, contact: "Ana"))
        #expect(Set(sentObject.keys) == Set(storedObject.keys))
        #expect(sentObject["ack"] as? String == "deadbeef")

        let ack = try object(try #require(MeshListenLine(.acknowledged(ack: 0xDEAD_BEEF, roundTrip: 812), names: [:])))
        #expect(ack["type"] as? String == "ack" && ack["ack"] as? String == "deadbeef" && ack["roundTripMs"] as? Int == 812)
        let notStored = try object(try #require(MeshListenLine(.messageNotStored(reason: "disk full"), names: [:])))
        #expect(notStored["type"] as? String == "notStored" && notStored["reason"] as? String == "disk full")

        let time = try object(MeshTimeReport(radio: 1_764_089_556, local: Self.moment))
        #expect(time["type"] as? String == "time")
        expectTimestamp(time["radio"])
        expectTimestamp(time["local"])
        #expect(time["driftSeconds"] as? Int == 0)
    }

    @Test func aRecordThatCannotBeEncodedSaysSoOnItsLine() throws {
        // An uncalibrated scale can make a force infinite; JSON has no such number.
        let line = try object(ReadingLine(GripReading(raw: 1, force: .infinity, receivedAt: Self.moment)))
        #expect(line["type"] as? String == "unencodable")
        #expect(line["record"] as? String == "ReadingLine")
        #expect((line["reason"] as? String)?.isEmpty == false)
    }

    @Test func everyOtherRecordNamesItsType() throws {
        #expect(try object(AdapterRow(driver: "bluez", name: "hci0"))["type"] as? String == "adapter")
        let peripheral = DiscoveredPeripheral(id: PeripheralID(UUID()), name: "GripFit", advertisement: AdvertisementData(), rssi: -50)
        #expect(try object(ScanRecord(peripheral))["type"] as? String == "peripheral")
    }
}
