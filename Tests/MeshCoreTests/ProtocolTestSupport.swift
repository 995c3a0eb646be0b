import Foundation
import Testing

@testable import MeshCore

/// Helpers shared by the protocol tests.
enum ProtocolTestSupport {
    /// Parses hex digits, ignoring whitespace.
    static func hex(_ text: String) -> Data {
        let digits = Array(text.filter { !$0.isWhitespace })
        precondition(digits.count.isMultiple(of: 2), "odd number of hex digits")
        var data = Data()
        var index = 0
        while index < digits.count {
            data.append(UInt8(String(digits[index..<index + 2]), radix: 16)!)
            index += 2
        }
        return data
    }

    /// `count` zero bytes written as hex, for the NUL padding of fixed-width fields.
    static func zeros(_ count: Int) -> String {
        String(repeating: "00 ", count: count)
    }

    /// The 32-byte public key 00 01 02 … 1F, as hex.
    static let keyHex = "00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F 10 11 12 13 14 15 16 17 18 19 1A 1B 1C 1D 1E 1F"
    /// The same key as bytes.
    static let key = Data(0..<32)
    /// A second key, E0 E1 … FF.
    static let otherKeyHex = "E0 E1 E2 E3 E4 E5 E6 E7 E8 E9 EA EB EC ED EE EF F0 F1 F2 F3 F4 F5 F6 F7 F8 F9 FA FB FC FD FE FF"
    /// The second key as bytes.
    static let otherKey = Data(0xE0...0xFF)

    /// Formats bytes as spaced hex, for failure messages.
    static func hexString(_ data: Data) -> String {
        data.map { String(format: "%02X", $0) }.joined(separator: " ")
    }
}

/// A hand-written radio frame, what it decodes to, and which of its strict prefixes are
/// themselves complete frames (all others must be rejected).
struct ProtocolFrameSample: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: Data
    let expected: MeshCoreFrame
    let decodablePrefixLengths: Set<Int>

    init(_ name: String, _ hex: String, _ expected: MeshCoreFrame, decodablePrefixes: Set<Int> = []) {
        self.name = name
        self.bytes = ProtocolTestSupport.hex(hex)
        self.expected = expected
        self.decodablePrefixLengths = decodablePrefixes
    }

    var testDescription: String { name }
}

/// Every reply and push the tests know, written out byte by byte.
enum ProtocolFrameSamples {
    typealias S = ProtocolTestSupport

    /// Alice: chat, favourite, flood path, at 47.123456, -122.5.
    static let aliceBodyHex =
        S.keyHex + " 01 01 FF " + S.zeros(64) + "41 6C 69 63 65 " + S.zeros(27)
        + "80 00 92 65  00 0C CF 02  60 CC B2 F8  81 00 92 65"
    static let alice = MeshContact(
        publicKey: S.key, type: .chat, flags: 1, outPath: nil, name: "Alice",
        lastAdvert: 1_704_067_200, latitude: 47.123456, longitude: -122.5,
        lastModified: 1_704_067_201)

    /// Relay 1: repeater with a three-hop path, at 51.5, -0.12.
    static let relayBodyHex =
        S.otherKeyHex + " 02 00 03 A1 B2 C3 " + S.zeros(61) + "52 65 6C 61 79 20 31 " + S.zeros(25)
        + "80 00 92 65  E0 D3 11 03  40 2B FE FF  81 00 92 65"
    static let relay = MeshContact(
        publicKey: S.otherKey, type: .repeater, flags: 0, outPath: Data([0xA1, 0xB2, 0xC3]),
        name: "Relay 1", lastAdvert: 1_704_067_200, latitude: 51.5, longitude: -0.12,
        lastModified: 1_704_067_201)

    /// A direct contact path (out_path_len 0): an empty, known path.
    static let directBodyHex =
        S.otherKeyHex + " 03 00 00 " + S.zeros(64) + "52 65 6C 61 79 20 31 " + S.zeros(25)
        + "00 00 00 00  00 00 00 00  00 00 00 00  00 00 00 00"
    static let direct = MeshContact(
        publicKey: S.otherKey, type: .room, outPath: Data(), name: "Relay 1")

    static let selfInfo = SelfInfo(
        advertType: .chat, txPower: 22, maxTxPower: 22, publicKey: S.key,
        latitude: 47.123456, longitude: -122.5, multiAcks: 1, advertLocationPolicy: 0,
        telemetryModes: 0b0001_0110, manualAddContacts: true, radioFrequency: 869.525,
        radioBandwidth: 250, spreadingFactor: 11, codingRate: 5, name: "MyNode")

    static let deviceInfo = DeviceInfo(
        firmwareVersionCode: 13, maxContacts: 100, maxChannels: 8, blePin: 123_456,
        buildDate: "13 Oct 2025", manufacturer: "Heltec V3", firmwareVersion: "v1.17.0",
        repeatMode: false, pathHashMode: 1)

    static let publicSecret = Data([
        0x8B, 0x33, 0x87, 0xE9, 0xC5, 0xCD, 0xEA, 0x6A, 0xC9, 0xE5, 0xED, 0xBA, 0xA1, 0x15, 0xCD, 0x72,
    ])

    /// A repeater's status (56 bytes): battery 3950 mV, queue 2, noise −115, RSSI −80, 41
    /// received, 26 sent, 12 s on air, up 3600 s, 20/6 sent flood/direct, 30/11 received
    /// flood/direct, no error flags, SNR 6.25 dB, 1/7 duplicates, 30 s receiving, 2 errors.
    static let repeaterStatusHex = "6E 0F 02 00 8D FF B0 FF 29 00 00 00 1A 00 00 00 0C 00 00 00 10 0E 00 00 "
        + "14 00 00 00 06 00 00 00 1E 00 00 00 0B 00 00 00 00 00 19 00 01 00 07 00 1E 00 00 00 02 00 00 00"
    /// A room server's (52 bytes): the same, then 5 posts stored and 3 pushed.
    static let roomStatusHex = "6E 0F 02 00 8D FF B0 FF 29 00 00 00 1A 00 00 00 0C 00 00 00 10 0E 00 00 "
        + "14 00 00 00 06 00 00 00 1E 00 00 00 0B 00 00 00 00 00 19 00 01 00 07 00 05 00 03 00"

    static let all: [ProtocolFrameSample] = [
        .init("OK", "00", .ok(value: nil)),
        .init("OK with value", "00 2A 00 00 00", .ok(value: 42), decodablePrefixes: [1]),
        .init("ERR unsupported", "01 01", .error(.unsupportedCommand), decodablePrefixes: [1]),
        .init("ERR not found", "01 02", .error(.notFound), decodablePrefixes: [1]),
        .init("ERR table full", "01 03", .error(.tableFull), decodablePrefixes: [1]),
        .init("ERR bad state", "01 04", .error(.badState), decodablePrefixes: [1]),
        .init("ERR file I/O", "01 05", .error(.fileIOError), decodablePrefixes: [1]),
        .init("ERR illegal argument", "01 06", .error(.illegalArgument), decodablePrefixes: [1]),
        .init("ERR unknown", "01 2A", .error(.unknown(42)), decodablePrefixes: [1]),
        .init("CONTACTS_START", "02 05 00 00 00", .contactsStart(count: 5)),
        .init("CONTACT flood", "03 " + aliceBodyHex, .contact(alice)),
        .init("CONTACT with path", "03 " + relayBodyHex, .contact(relay)),
        .init("CONTACT direct", "03 " + directBodyHex, .contact(direct)),
        .init("END_OF_CONTACTS", "04 81 00 92 65", .endOfContacts(lastModified: 1_704_067_201)),
        .init(
            "SELF_INFO",
            "05 01 16 16 " + S.keyHex + " 00 0C CF 02  60 CC B2 F8  01 00 16 01"
                + " 95 44 0D 00  90 D0 03 00  0B 05  4D 79 4E 6F 64 65",
            .selfInfo(selfInfo), decodablePrefixes: Set(58...63)),
        .init(
            "SENT", "06 01 DE AD BE EF 88 13 00 00",
            .sent(SentResult(isFlood: true, expectedAck: 0xEFBE_ADDE, suggestedTimeout: 5000))),
        .init(
            "CONTACT_MSG_RECV_V3", "10 1A 00 00 A1 A2 A3 A4 A5 A6 FF 00 80 00 92 65 68 69",
            .contactMessage(ContactMessage(
                senderPrefix: Data([0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6]), pathLength: 0xFF,
                textType: .plain, timestamp: 1_704_067_200, text: "hi", snr: 6.5, isV3: true)),
            decodablePrefixes: [16, 17]),
        .init(
            "CONTACT_MSG_RECV_V3 signed",
            "10 F6 00 00 A1 A2 A3 A4 A5 A6 02 02 80 00 92 65 0A 0B 0C 0D 73 69 67 6E 65 64",
            .contactMessage(ContactMessage(
                senderPrefix: Data([0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6]), pathLength: 2,
                textType: .signedPlain, timestamp: 1_704_067_200,
                authorPrefix: Data([0x0A, 0x0B, 0x0C, 0x0D]), text: "signed", snr: -2.5, isV3: true)),
            decodablePrefixes: Set(20...25)),
        .init(
            "CONTACT_MSG_RECV legacy", "07 A1 A2 A3 A4 A5 A6 01 01 80 00 92 65 68 69",
            .contactMessage(ContactMessage(
                senderPrefix: Data([0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6]), pathLength: 1,
                textType: .cliData, timestamp: 1_704_067_200, text: "hi", snr: nil, isV3: false)),
            decodablePrefixes: [13, 14]),
        .init(
            "CONTACT_MSG_RECV legacy signed",
            "07 A1 A2 A3 A4 A5 A6 00 02 80 00 92 65 0A 0B 0C 0D 73 69 67 6E 65 64",
            .contactMessage(ContactMessage(
                senderPrefix: Data([0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6]), pathLength: 0,
                textType: .signedPlain, timestamp: 1_704_067_200,
                authorPrefix: Data([0x0A, 0x0B, 0x0C, 0x0D]), text: "signed", isV3: false)),
            decodablePrefixes: Set(17...22)),
        .init(
            "CHANNEL_MSG_RECV_V3", "11 14 00 00 00 03 00 80 00 92 65 42 6F 62 3A 20 68 65 6C 6C 6F",
            .channelMessage(ChannelMessage(
                channelIndex: 0, pathLength: 3, textType: .plain, timestamp: 1_704_067_200,
                text: "Bob: hello", snr: 5, isV3: true)),
            decodablePrefixes: Set(11...20)),
        .init(
            "CHANNEL_MSG_RECV legacy",
            "08 01 FF 00 80 00 92 65 43 61 72 6F 6C 3A 20 68 65 79 3A 20 79 6F 75",
            .channelMessage(ChannelMessage(
                channelIndex: 1, pathLength: 0xFF, textType: .plain, timestamp: 1_704_067_200,
                text: "Carol: hey: you", snr: nil, isV3: false)),
            decodablePrefixes: Set(8...22)),
        .init("CURR_TIME", "09 80 00 92 65", .currentTime(1_704_067_200)),
        .init("NO_MORE_MESSAGES", "0A", .noMoreMessages),
        .init(
            "BATT_AND_STORAGE", "0C 7C 10 00 01 00 00 00 10 00 00",
            .batteryAndStorage(BatteryAndStorage(millivolts: 4220, usedKilobytes: 256, totalKilobytes: 4096)),
            decodablePrefixes: [3, 7]),
        .init("BATT_AND_STORAGE short", "0C 7C 10", .batteryAndStorage(BatteryAndStorage(millivolts: 4220))),
        .init(
            "DEVICE_INFO v13",
            "0D 0D 32 08 40 E2 01 00 31 33 20 4F 63 74 20 32 30 32 35 00 "
                + "48 65 6C 74 65 63 20 56 33 " + S.zeros(31)
                + "76 31 2E 31 37 2E 30 " + S.zeros(13) + "00 01",
            .deviceInfo(deviceInfo), decodablePrefixes: [80, 81]),
        .init("DEVICE_INFO v2", "0D 02", .deviceInfo(DeviceInfo(firmwareVersionCode: 2))),
        .init(
            "CHANNEL_INFO", "12 00 50 75 62 6C 69 63 " + S.zeros(26) + "8B 33 87 E9 C5 CD EA 6A C9 E5 ED BA A1 15 CD 72",
            .channelInfo(ChannelInfo(index: 0, name: "Public", secret: publicSecret))),
        .init("DISABLED", "0F", .disabled),
        .init("ADVERT", "80 " + S.keyHex, .advert(publicKey: S.key)),
        .init("PATH_UPDATED", "81 " + S.otherKeyHex, .pathUpdated(publicKey: S.otherKey)),
        .init(
            "SEND_CONFIRMED", "82 DE AD BE EF E8 03 00 00",
            .sendConfirmed(SendConfirmation(ack: 0xEFBE_ADDE, roundTrip: 1000))),
        .init("MSG_WAITING", "83", .messageWaiting),
        .init("NEW_ADVERT", "8A " + relayBodyHex, .newAdvert(relay)),
        .init("CONTACT_DELETED", "8F " + S.keyHex, .contactDeleted(publicKey: S.key)),
        .init("CONTACTS_FULL", "90", .contactsFull),
        .init(
            "LOG_RX_DATA", "88 1C E4 11 22 33", .rxLog(snr: 7, rssi: -28, packet: S.hex("11 22 33")),
            decodablePrefixes: Set(3...5)),
        .init(
            "RAW_DATA", "84 F8 C4 FF 01 02", .rawData(snr: -2, rssi: -60, payload: S.hex("01 02")),
            decodablePrefixes: [4, 5]),
        .init(
            "CONTROL_DATA", "8E 20 C4 00 92 28 78 56 34 12 A1 A2 A3 A4 A5 A6 A7 A8",
            .controlData(snr: 8, rssi: -60, pathLength: 0, payload: S.hex("92 28 78 56 34 12 A1 A2 A3 A4 A5 A6 A7 A8")),
            decodablePrefixes: Set(4...17)),
        .init(
            "LOGIN_SUCCESS", "85 01 A1 A2 A3 A4 A5 A6 80 00 92 65 03 02",
            .loginSuccess(MeshLoginResult(
                serverPrefix: S.hex("A1 A2 A3 A4 A5 A6"), role: 1, serverTime: 1_704_067_200, permissions: .admin, firmwareLevel: 2)),
            decodablePrefixes: [8]),
        .init(
            "LOGIN_SUCCESS legacy", "85 00 A1 A2 A3 A4 A5 A6",
            .loginSuccess(MeshLoginResult(serverPrefix: S.hex("A1 A2 A3 A4 A5 A6"), role: 0))),
        .init("LOGIN_FAIL", "86 00 A1 A2 A3 A4 A5 A6", .loginFailed(serverPrefix: S.hex("A1 A2 A3 A4 A5 A6"))),
        .init(
            "STATUS_RESPONSE repeater",
            "87 00 A1 A2 A3 A4 A5 A6 " + repeaterStatusHex,
            .statusResponse(MeshServerReply(serverPrefix: S.hex("A1 A2 A3 A4 A5 A6"), body: S.hex(Self.repeaterStatusHex))),
            decodablePrefixes: Set(8...63)),
        .init(
            "STATUS_RESPONSE room server",
            "87 00 A1 A2 A3 A4 A5 A6 " + roomStatusHex,
            .statusResponse(MeshServerReply(serverPrefix: S.hex("A1 A2 A3 A4 A5 A6"), body: S.hex(Self.roomStatusHex))),
            decodablePrefixes: Set(8...59)),
        .init(
            "TELEMETRY_RESPONSE", "8B 00 A1 A2 A3 A4 A5 A6 01 74 01 A4 02 67 00 D7",
            .telemetryResponse(MeshServerReply(serverPrefix: S.hex("A1 A2 A3 A4 A5 A6"), body: MeshTelemetry(readings: [
                .init(channel: 1, type: .voltage, value: .number(4.2)),
                .init(channel: 2, type: .temperature, value: .number(21.5)),
            ]))),
            decodablePrefixes: Set(8...15)),
        .init(
            "BINARY_RESPONSE", "8C 00 78 56 34 12 05 00 03 00", .binaryResponse(tag: 0x1234_5678, body: S.hex("05 00 03 00")),
            decodablePrefixes: Set(6...9)),
        .init(
            "PATH_DISCOVERY_RESPONSE", "8D 00 A1 A2 A3 A4 A5 A6 02 0A 0B 41 0C 0D",
            .pathDiscoveryResponse(MeshDiscoveredPath(
                nodePrefix: S.hex("A1 A2 A3 A4 A5 A6"), outPath: S.hex("0A 0B"), inPath: S.hex("0C 0D"), inPathHashSize: 2))),
        .init(
            "TRACE_DATA", "89 00 02 00 01 00 00 00 00 00 00 00 A1 B2 30 28 14",
            .traceData(MeshTraceResult(
                tag: 1, hops: [.init(hash: S.hex("A1"), snr: 12), .init(hash: S.hex("B2"), snr: 10)], finalSNR: 5))),
        .init(
            "EXPORT_CONTACT", "0B 11 22 33", .exportedContact(packet: S.hex("11 22 33")),
            decodablePrefixes: Set(1...3)),
        .init("PRIVATE_KEY", "0E " + S.keyHex + " " + S.otherKeyHex, .privateKey(S.key + S.otherKey)),
        .init("SIGN_START", "13 00 00 20 00 00", .signStart(maximumLength: 8_192)),
        .init("SIGNATURE", "14 " + S.otherKeyHex + " " + S.keyHex, .signature(S.otherKey + S.key)),
        .init(
            "CUSTOM_VARS", "15 67 70 73 3A 31 2C 78 3A 32",
            .customVariables([MeshCustomVariable(name: "gps", value: "1"), MeshCustomVariable(name: "x", value: "2")]),
            decodablePrefixes: [1, 5, 6, 7, 8, 9]),
        .init(
            "ADVERT_PATH", "16 80 00 92 65 42 0A 0B 0C 0D",
            .advertPath(MeshAdvertPath(receivedAt: 1_704_067_200, path: S.hex("0A 0B 0C 0D"), hashSize: 2))),
        .init(
            "TUNING_PARAMS", "17 E8 03 00 00 D0 07 00 00",
            .tuningParameters(MeshTuningParameters(receiveDelayBase: 1, airtimeFactor: 2))),
        .init(
            "STATS core", "18 00 A4 0F 10 0E 00 00 01 00 03",
            .stats(.core(MeshStats.Core(batteryMillivolts: 4004, uptimeSeconds: 3600, errorFlags: 1, outboundQueueLength: 3)))),
        .init(
            "STATS radio", "18 01 92 FF BA 14 3C 00 00 00 78 00 00 00",
            .stats(.radio(MeshStats.Radio(
                noiseFloor: -110, lastRSSI: -70, lastSNR: 5, transmitAirtimeSeconds: 60, receiveAirtimeSeconds: 120)))),
        .init(
            "STATS packets",
            "18 02 0A 00 00 00 14 00 00 00 05 00 00 00 0F 00 00 00 04 00 00 00 06 00 00 00 01 00 00 00",
            .stats(.packets(MeshStats.Packets(
                received: 10, sent: 20, sentFlood: 5, sentDirect: 15, receivedFlood: 4, receivedDirect: 6, receiveErrors: 1))),
            decodablePrefixes: [26]),
        .init("STATS unknown kind", "18 07 01", .stats(.other(kind: 7, payload: S.hex("01"))), decodablePrefixes: [2]),
        .init(
            "AUTOADD_CONFIG", "19 0E 03",
            .autoAddConfiguration(MeshAutoAddConfiguration(options: [.chat, .repeater, .roomServer], maxHops: 3)),
            decodablePrefixes: [2]),
        .init(
            "ALLOWED_REPEAT_FREQ", "1A 68 9B 06 00 68 9B 06 00 77 44 0D 00 77 44 0D 00",
            .allowedRepeatFrequencies([433_000...433_000, 869_495...869_495]),
            decodablePrefixes: [1, 9]),
        .init(
            "DEFAULT_FLOOD_SCOPE", "1C 65 75 72 6F 70 65 " + S.zeros(25) + " E8 15 67 C8 24 FA 51 C4 65 42 C6 2B 81 3D A6 8E",
            .defaultFloodScope(MeshFloodScope(region: "europe")), decodablePrefixes: [1]),
        .init("DEFAULT_FLOOD_SCOPE none", "1C", .defaultFloodScope(nil)),
        .init("CLI_REPLY", "1D 4F 4B", .cliReply("OK"), decodablePrefixes: [1, 2]),
        .init(
            "CHANNEL_DATA_RECV", "1B 18 00 00 01 02 FF FF 03 A1 B2 C3",
            .channelData({
                var datagram = MeshChannelData(channelIndex: 1, dataType: 0xFFFF, payload: S.hex("A1 B2 C3"))
                datagram.receivedPathLength = 2
                datagram.snr = 6
                return datagram
            }())),
        .init("unknown code", "42 01 02", .other(code: 0x42, payload: S.hex("01 02")), decodablePrefixes: [1, 2]),
        .init("unknown push", "A5", .other(code: 0xA5, payload: Data())),
    ]
}
