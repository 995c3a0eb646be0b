import Foundation
import Testing

@testable import Kiro

/// Device → app events (§5), in both id forms (firmware-facts, "Event format conflict").
struct ProtocolEventTests {
    let decoder = KiroEventDecoder()

    static let idEventTypes: [EventLogType] = [
        .enterTaskIn, .completeTask, .skipTask, .selectedTaskChanged, .wheelSelect, .viewEventDetail,
    ]
    /// "task-1".
    static let shortID = "74 61 73 6B 2D 31"
    /// "abcdefgh-1234-5678-90ab-cdefghijklmn", 36 bytes.
    static let uuid = "abcdefgh-1234-5678-90ab-cdefghijklmn"
    static let uuidHex = """
        61 62 63 64 65 66 67 68 2D 31 32 33 34 2D 35 36
        37 38 2D 39 30 61 62 2D 63 64 65 66 67 68 69 6A 6B 6C 6D 6E
        """
    /// 2026-01-30T09:30:00Z.
    static let stamp: UInt32 = 0x697C_7A18

    private func code(_ type: EventLogType) -> String { String(format: "%02X", type.code) }

    @Test(arguments: idEventTypes)
    func innerLengthFormWithTimestamp(_ type: EventLogType) {
        let bytes = protocolHex("\(code(type)) 0B 06 \(Self.shortID) 69 7C 7A 18")
        let event = KiroEvent(type: type, id: "task-1", timestamp: Self.stamp)
        #expect(event.encoded() == bytes)
        #expect(event.encoded(form: .innerLength) == bytes)
        #expect(decoder.decodeResult(bytes) == .success(event))
    }

    @Test(arguments: idEventTypes)
    func innerLengthFormWithoutTimestamp(_ type: EventLogType) {
        let bytes = protocolHex("\(code(type)) 07 06 \(Self.shortID)")
        let event = KiroEvent(type: type, id: "task-1")
        #expect(event.encoded() == bytes)
        #expect(decoder.decodeResult(bytes) == .success(event))
    }

    @Test(arguments: idEventTypes)
    func legacyFormWithoutTimestamp(_ type: EventLogType) {
        let bytes = protocolHex("\(code(type)) 06 \(Self.shortID)")
        let event = KiroEvent(type: type, id: "task-1")
        #expect(event.encoded(form: .legacy) == bytes)
        #expect(decoder.decodeResult(bytes) == .success(event))
    }

    @Test(arguments: idEventTypes)
    func legacyFormWithTrailingTimestamp(_ type: EventLogType) {
        let bytes = protocolHex("\(code(type)) 06 \(Self.shortID) 69 7C 7A 18")
        let event = KiroEvent(type: type, id: "task-1", timestamp: Self.stamp)
        #expect(event.encoded(form: .legacy) == bytes)
        #expect(decoder.decodeResult(bytes) == .success(event))
    }

    /// 36-byte UUIDs make the inner form's id-length byte `0x24`, the printable `$`, so the
    /// forms must be told apart by structure.
    @Test(arguments: idEventTypes)
    func bothFormsWithA36ByteUUID(_ type: EventLogType) {
        let c = code(type)
        let plain = KiroEvent(type: type, id: Self.uuid)
        let stamped = KiroEvent(type: type, id: Self.uuid, timestamp: Self.stamp)
        let cases: [(String, KiroEvent, KiroEventForm)] = [
            ("\(c) 25 24 \(Self.uuidHex)", plain, .innerLength),
            ("\(c) 29 24 \(Self.uuidHex) 69 7C 7A 18", stamped, .innerLength),
            ("\(c) 24 \(Self.uuidHex)", plain, .legacy),
            ("\(c) 24 \(Self.uuidHex) 69 7C 7A 18", stamped, .legacy),
        ]
        for (text, event, form) in cases {
            let bytes = protocolHex(text)
            #expect(event.encoded(form: form) == bytes, "\(text)")
            #expect(decoder.decodeResult(bytes) == .success(event), "\(text)")
        }
    }

    /// §7.2 with the 36-byte id its length byte announces (the printed example lists only 35
    /// bytes, see the next test).
    @Test func completeTaskExample() {
        let bytes = protocolHex("11 24 \(Self.uuidHex)")
        #expect(decoder.event(bytes) == KiroEvent(type: .completeTask, id: Self.uuid))
        // The later firmware form quoted in firmware-facts: 11 29 24 <36-byte id> <ts4>.
        let modern = protocolHex("11 29 24 \(Self.uuidHex) 69 7C 7A 18")
        #expect(decoder.event(modern) == KiroEvent(type: .completeTask, id: Self.uuid, timestamp: Self.stamp))
        #expect(decoder.event(modern)?.date == Date(timeIntervalSince1970: 1_769_765_400))
    }

    /// The example exactly as printed: length 0x24 but 35 id bytes. A short packet is truncated,
    /// not a shorter id, so it is rejected rather than guessed at.
    @Test func completeTaskExampleAsPrintedIsTruncated() {
        let bytes = protocolHex("""
            11 24
            61 62 63 64 65 66 67 68 2D 31 32 33 34 2D 35 36
            37 38 2D 39 30 61 62 2D 63 64 65 66 67 68 69 6A
            6B 6C 6D
            """)
        guard case .failure(.malformed) = decoder.decodeResult(bytes) else {
            Issue.record("expected malformed, got \(decoder.decodeResult(bytes))")
            return
        }
    }

    @Test func requestRefreshExample() {
        #expect(decoder.event(protocolHex("20 00")) == KiroEvent(type: .requestRefresh))
    }

    @Test(arguments: [EventLogType.requestRefresh, .deviceWake, .deviceSleep])
    func eventsWithoutPayload(_ type: EventLogType) {
        let bytes = Data([type.code, 0x00])
        #expect(KiroEvent(type: type).encoded() == bytes)
        #expect(KiroEvent(type: type).encoded(form: .legacy) == bytes)
        // Fields that do not belong to the type are not written.
        #expect(KiroEvent(type: type, id: "x", timestamp: 5, batteryLevel: 3).encoded() == bytes)
        #expect(decoder.decodeResult(bytes) == .success(KiroEvent(type: type)))
        // Payload bytes a later firmware might add are ignored when the length is consistent.
        #expect(decoder.decodeResult(Data([type.code, 0x02, 0xAA, 0xBB])) == .success(KiroEvent(type: type)))
        #expect(isMalformed(Data([type.code, 0x01])))
        #expect(isMalformed(Data([type.code, 0x00, 0x00])))
        #expect(isMalformed(Data([type.code])))
    }

    @Test func lowBattery() {
        #expect(KiroEvent(type: .lowBattery, batteryLevel: 15).encoded() == protocolHex("40 01 0F"))
        #expect(KiroEvent(type: .lowBattery, batteryLevel: 15).encoded(form: .legacy) == protocolHex("40 01 0F"))
        #expect(KiroEvent(type: .lowBattery, batteryLevel: 150).encoded() == protocolHex("40 01 64"))
        #expect(KiroEvent(type: .lowBattery).encoded() == protocolHex("40 01 00"))
        #expect(decoder.decodeResult(protocolHex("40 01 0F")) == .success(KiroEvent(type: .lowBattery, batteryLevel: 15)))
        #expect(decoder.decodeResult(protocolHex("40 01 00")) == .success(KiroEvent(type: .lowBattery, batteryLevel: 0)))
        #expect(decoder.decodeResult(protocolHex("40 01 64")) == .success(KiroEvent(type: .lowBattery, batteryLevel: 100)))
        #expect(decoder.decodeResult(protocolHex("40 01 FF")) == .success(KiroEvent(type: .lowBattery, batteryLevel: 100)))
        #expect(isMalformed(protocolHex("40 00")))
        #expect(isMalformed(protocolHex("40 01")))
        #expect(isMalformed(protocolHex("40 02 0F")))
    }

    @Test func unknownTypesAreReportedAndIgnored() {
        for byte in [UInt8(0x00), 0x01, 0x16, 0x21, 0x32, 0x41, 0x99, 0xFF] {
            #expect(decoder.decodeResult(Data([byte, 0x00])) == .failure(.unknownType(byte)))
            #expect(decoder.event(Data([byte, 0x02, 0x01, 0x02])) == nil)
            // Expected from newer firmware: a client ignores them quietly.
            #expect(KiroEventDecodeError.unknownType(byte).isExpected)
        }
        #expect(decoder.decodeResult(Data([0x7E])) == .failure(.unknownType(0x7E)))
    }

    @Test func emptyNotification() {
        #expect(decoder.decodeResult(Data()) == .failure(.empty))
        #expect(decoder.event(Data()) == nil)
    }

    @Test(arguments: [
        "11",                       // no length byte
        "11 00",                    // no id at all
        "11 01 00",                 // inner form with an empty id; as legacy, a control-character id
        "13 05 41 42",              // truncated
        "13 02 FF FE",              // invalid UTF-8 id
        "13 03 02 C3 28",           // invalid UTF-8 in both readings
        "14 03 61 62 63 00",        // one stray byte: neither form, nor a timestamp
        "15 02 61 62 01 02 03",     // three stray bytes
        "12 07 06 74 61 73 6B 2D",  // inner form missing its last id byte
        "10 0B 06 74 61 73 6B 2D 31 69 7C 7A",  // inner form missing a timestamp byte
        "14 02 0A 0D",              // a control-character id
    ])
    func malformedIDEvents(_ text: String) {
        let bytes = protocolHex(text)
        #expect(isMalformed(bytes), "\(text)")
        #expect(decoder.event(bytes) == nil)
        // Worth a warning: not something a client meets in normal use.
        #expect(decoder.decodeResult(bytes).failure?.isExpected == false)
    }

    /// A legacy id of `L` bytes that starts with the byte `L − 1` also reads as the inner form;
    /// the decoder documents that the inner form wins. Real ids (UUIDs, short ids) never do this.
    @Test func ambiguousPacketPrefersTheInnerForm() {
        let bytes = protocolHex("13 25 24 \(Self.uuidHex)")  // legacy reading: "$" + uuid
        #expect(decoder.event(bytes) == KiroEvent(type: .selectedTaskChanged, id: Self.uuid))
        // A 6-byte legacy id starting with 0x05 would be a control character, so it is never
        // ambiguous in practice; the inner reading is the only valid one.
        #expect(decoder.event(protocolHex("13 06 05 61 62 63 64 65")) == KiroEvent(type: .selectedTaskChanged, id: "abcde"))
    }

    @Test func unicodeIDs() {
        let event = KiroEvent(type: .viewEventDetail, id: "회의-😀", timestamp: 1)
        for form in [KiroEventForm.innerLength, .legacy] {
            #expect(decoder.event(event.encoded(form: form)) == event)
        }
        #expect(event.encoded() == protocolHex("15 10 0B ED 9A 8C EC 9D 98 2D F0 9F 98 80 00 00 00 01"))
    }

    @Test func overlongIDsAreTruncatedByWholeCharacters() {
        let long = String(repeating: "가", count: 100)  // 300 bytes
        let inner = Array(KiroEvent(type: .completeTask, id: long, timestamp: 9).encoded())
        // 250 bytes of room after the id length and the timestamp: 83 syllables (249 bytes).
        #expect(inner[1] == 254)
        #expect(inner[2] == 249)
        #expect(decoder.event(Data(inner)) == KiroEvent(type: .completeTask, id: String(repeating: "가", count: 83), timestamp: 9))
        let legacy = Array(KiroEvent(type: .completeTask, id: long).encoded(form: .legacy))
        #expect(legacy[1] == 255)
        #expect(decoder.event(Data(legacy)) == KiroEvent(type: .completeTask, id: String(repeating: "가", count: 85)))
    }

    @Test func decodeAllSplitsBackToBackPackets() {
        let stream = protocolHex("""
            10 0B 06 \(Self.shortID) 69 7C 7A 18
            20 00
            11 24 \(Self.uuidHex) 69 7C 7A 20
            99 02 AA BB
            13 06 \(Self.shortID)
            30 00
            14 06 \(Self.shortID) 69 7C 7A 30
            40 01 0A
            12 29 24 \(Self.uuidHex) 69 7C 7A 40
            31 00
            15 0B
            """)
        #expect(decoder.events(stream) == [
            KiroEvent(type: .enterTaskIn, id: "task-1", timestamp: 0x697C_7A18),
            KiroEvent(type: .requestRefresh),
            KiroEvent(type: .completeTask, id: Self.uuid, timestamp: 0x697C_7A20),
            KiroEvent(type: .selectedTaskChanged, id: "task-1"),
            KiroEvent(type: .deviceWake),
            KiroEvent(type: .wheelSelect, id: "task-1", timestamp: 0x697C_7A30),
            KiroEvent(type: .lowBattery, batteryLevel: 10),
            KiroEvent(type: .skipTask, id: Self.uuid, timestamp: 0x697C_7A40),
            KiroEvent(type: .deviceSleep),
        ])
        // The unknown 0x99 packet is expected (skipped quietly); the truncated last one is not.
        let rejected = decoder.rejections(stream)
        #expect(rejected.first == .unknownType(0x99))
        #expect(rejected.map(\.isExpected) == [true, false])
    }

    @Test func decodeAllLegacyTimestampAtTheEnd() {
        #expect(decoder.events(protocolHex("13 06 \(Self.shortID) 69 7C 7A 18"))
            == [KiroEvent(type: .selectedTaskChanged, id: "task-1", timestamp: Self.stamp)])
        #expect(decoder.events(Data()) == [])
        #expect(decoder.events(protocolHex("20")) == [])
    }

    @Test func errorsDescribeThemselves() {
        #expect(KiroEventDecodeError.unknownType(0x99).description.contains("0x99"))
        #expect(KiroEventDecodeError.malformed("why").description.contains("why"))
        #expect(!KiroEventDecodeError.empty.description.isEmpty)
    }

    private func isMalformed(_ bytes: Data) -> Bool {
        if case .failure(.malformed) = decoder.decodeResult(bytes) { return true }
        return false
    }
}
