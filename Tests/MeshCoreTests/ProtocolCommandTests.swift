import Foundation
import Testing

@testable import MeshCore

@Suite struct ProtocolCommandTests {
    typealias S = ProtocolTestSupport

    static let prefix = Data([0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6])

    /// Each command with the bytes it must encode to, written out by hand.
    static let samples: [(MeshCoreCommand, String)] = [
        (.appStart(appName: "Tether"), "01 03 20 20 20 20 20 20 54 65 74 68 65 72"),
        (.appStart(appName: ""), "01 03 20 20 20 20 20 20"),
        (.deviceQuery(protocolVersion: 3), "16 03"),
        (.getContacts(since: nil), "04"),
        (.getContacts(since: 1_704_067_200), "04 80 00 92 65"),
        (
            .sendTextMessage(.init(timestamp: 1_704_067_200, destinationPrefix: prefix, text: "hi")),
            "02 00 00 80 00 92 65 A1 A2 A3 A4 A5 A6 68 69"
        ),
        (
            .sendTextMessage(.init(
                textType: .cliData, attempt: 2, timestamp: 0x0102_0304, destinationPrefix: prefix, text: "ver")),
            "02 01 02 04 03 02 01 A1 A2 A3 A4 A5 A6 76 65 72"
        ),
        (
            .sendTextMessage(.init(timestamp: 1, destinationPrefix: prefix, text: "")),
            "02 00 00 01 00 00 00 A1 A2 A3 A4 A5 A6"
        ),
        (
            .sendChannelTextMessage(channel: 0, timestamp: 1_704_067_200, text: "hello"),
            "03 00 00 80 00 92 65 68 65 6C 6C 6F"
        ),
        (.sendChannelTextMessage(channel: 7, timestamp: 2, text: ""), "03 00 07 02 00 00 00"),
        (.getDeviceTime, "05"),
        (.setDeviceTime(1_704_067_200), "06 80 00 92 65"),
        (.sendSelfAdvert(flood: false), "07"),
        (.sendSelfAdvert(flood: true), "07 01"),
        (.setAdvertName("Node"), "08 4E 6F 64 65"),
        (.syncNextMessage, "0A"),
        (.getBatteryAndStorage, "14"),
        (.getChannel(0), "1F 00"),
        (.getChannel(7), "1F 07"),
        (.removeContact(publicKey: S.key), "0F " + S.keyHex),
        (.reboot, "13 72 65 62 6F 6F 74"),
        (.hasConnection(publicKey: S.otherKey), "1C " + S.otherKeyHex),
        (.other(code: 0x2C, payload: Data()), "2C"),
        (.resetPath(publicKey: S.key), "0D " + S.keyHex),
        (.logout(publicKey: S.key), "1D " + S.keyHex),
        (.exportContact(publicKey: nil), "11"),
        (.exportContact(publicKey: S.key), "11 " + S.keyHex),
        (.setTuningParams(MeshTuningParameters(receiveDelayBase: 1, airtimeFactor: 2)), "15 E8 03 00 00 D0 07 00 00"),
        (.getTuningParams, "2B"),
        (.exportPrivateKey, "17"),
        (.importPrivateKey(S.key + S.otherKey), "18 " + S.keyHex + " " + S.otherKeyHex),
        (.signStart, "21"),
        (.signData(S.hex("01 02 03")), "22 01 02 03"),
        (.signFinish, "23"),
        (.setDevicePin(123_456), "25 40 E2 01 00"),
        (.setDevicePin(0), "25 00 00 00 00"),
        (
            .setOtherParams(MeshOtherParameters(
                manualAddContacts: true,
                telemetryModes: MeshTelemetryModes(base: .allowAll, location: .byContactFlags, environment: .deny),
                sharesLocationInAdverts: true, multiAcks: 1)),
            "26 01 06 01 01"
        ),
        (.getCustomVars, "28"),
        (.setCustomVar(MeshCustomVariable(name: "gps", value: "1")), "29 67 70 73 3A 31"),
        (.getAdvertPath(publicKey: S.key), "2A 00 " + S.keyHex),
        (.factoryReset, "33 72 65 73 65 74"),
        (.getStats(.core), "38 00"),
        (.getStats(.radio), "38 01"),
        (.getStats(.packets), "38 02"),
        (.setAutoAddConfig(MeshAutoAddConfiguration(options: [.overwriteOldest, .chat, .repeater, .roomServer], maxHops: 2)), "3A 0F 02"),
        (.setAutoAddConfig(MeshAutoAddConfiguration(options: [.sensor], maxHops: nil)), "3A 10"),
        (.getAutoAddConfig, "3B"),
        (.getAllowedRepeatFrequencies, "3C"),
        (.setPathHashMode(2), "3D 00 02"),
        (.setFloodScope(.useDefault), "36 00"),
        (.setFloodScope(.unscoped), "36 01"),
        // The layout reference's fixture: the scope of region "test" is SHA-256("#test")[0..<16].
        (.setFloodScope(.region("test")), "36 00 9C D8 FC F2 2A 47 33 3B 59 1D 96 A2 B8 48 B7 3F"),
        (
            .setDefaultFloodScope(MeshFloodScope(region: "#europe")),
            "3F 65 75 72 6F 70 65 " + S.zeros(25) + " E8 15 67 C8 24 FA 51 C4 65 42 C6 2B 81 3D A6 8E"
        ),
        (.setDefaultFloodScope(nil), "3F"),
        (.getDefaultFloodScope, "40"),
        (.sendLogin(publicKey: S.key, password: "secret"), "1A " + S.keyHex + " 73 65 63 72 65 74"),
        (.sendStatusRequest(publicKey: S.key), "1B " + S.keyHex),
        (.sendTelemetryRequest(publicKey: nil), "27 00 00 00"),
        (.sendTelemetryRequest(publicKey: S.key), "27 00 00 00 " + S.keyHex),
        (.binaryRequest(to: S.key, .status), "32 " + S.keyHex + " 01"),
        (.binaryRequest(to: S.key, .accessList), "32 " + S.keyHex + " 05 00 00"),
        // The layout reference's fixtures: min/max/average over the last hour; 255 neighbours
        // from the first, newest first, 4-byte prefixes (the last four bytes are a nonce).
        (.binaryRequest(to: S.key, .minMaxAverage(fromSecondsAgo: 3600, toSecondsAgo: 0)), "32 " + S.keyHex + " 04 10 0E 00 00 00 00 00 00 00 00"),
        (.binaryRequest(to: S.key, .neighbours(prefixLength: 4, nonce: 0x0403_0201)), "32 " + S.keyHex + " 06 00 FF 00 00 00 04 01 02 03 04"),
        (.binaryRequest(to: S.key, .ownerInfo), "32 " + S.keyHex + " 07"),
        (.anonymousRequest(to: S.key, MeshAnonymousRequest(.regions)), "39 " + S.keyHex + " 01 00"),
        (.anonymousRequest(to: S.key, MeshAnonymousRequest(.clock, replyPath: S.hex("0A 0B 0C 0D"), replyPathHashSize: 2)), "39 " + S.keyHex + " 03 42 0A 0B 0C 0D"),
        (.sendPathDiscoveryRequest(publicKey: S.key), "34 00 " + S.keyHex),
        (.sendTracePath(MeshTraceRequest(tag: 1, path: S.hex("A1 B2"))), "24 01 00 00 00 00 00 00 00 00 A1 B2"),
        (.sendTracePath(MeshTraceRequest(tag: 2, authCode: 3, hashSize: 2, path: S.hex("A1 A2"))), "24 02 00 00 00 03 00 00 00 01 A1 A2"),
        (.sendControlData(MeshNodeDiscovery(types: [.repeater], tag: 0x1234_5678).payload), "37 81 04 78 56 34 12"),
        // The layout reference's fixture: channel 1, flood, type 0xFFFF, three bytes.
        (.sendChannelData(MeshChannelData(channelIndex: 1, dataType: 0xFFFF, payload: S.hex("A1 B2 C3"))), "3E 01 FF FF FF A1 B2 C3"),
        (.sendChannelData(MeshChannelData(channelIndex: 2, dataType: 0x0102, payload: S.hex("09"), path: S.hex("0A 0B"))), "3E 02 02 0A 0B 02 01 09"),
        (.sendRawData(path: S.hex("0A 0B"), payload: S.hex("01 02 03 04")), "19 02 0A 0B 01 02 03 04"),
        (.sendRawPacket(priority: 1, packet: S.hex("11 00 AA")), "41 01 11 00 AA"),
        (.runCLICommand("ver"), "42 76 65 72"),
    ]

    @Test func everyCommandEncodesToItsExactBytes() throws {
        for (command, hex) in Self.samples {
            let bytes = try command.encoded()
            #expect(S.hexString(bytes) == S.hexString(S.hex(hex)), "\(command)")
            #expect(command.code == bytes.first)
        }
    }

    @Test func everyCommandRoundTrips() throws {
        for (command, hex) in Self.samples {
            #expect(try MeshCoreCommand(decoding: command.encoded()) == command)
            #expect(try MeshCoreCommand(decoding: S.hex(hex)) == command)
        }
    }

    @Test func setDeviceTimeExample() throws {
        #expect(try MeshCoreCommand.setDeviceTime(1_704_067_200).encoded() == Data([0x06, 0x80, 0x00, 0x92, 0x65]))
    }

    @Test func advertNameIsTruncatedTo31BytesOnACharacterBoundary() throws {
        let ascii = String(repeating: "x", count: 40)
        let long = try MeshCoreCommand.setAdvertName(ascii).encoded()
        #expect(long == Data([0x08]) + Data(repeating: 0x78, count: 31))

        // 30 ASCII bytes + "é" (2 bytes) would be 32: the é is dropped whole.
        let accent = try MeshCoreCommand.setAdvertName(String(repeating: "a", count: 30) + "é").encoded()
        #expect(accent == Data([0x08]) + Data(repeating: 0x61, count: 30))

        // 29 bytes + a 4-byte emoji: the emoji is dropped, nothing is split.
        let emoji = try MeshCoreCommand.setAdvertName(String(repeating: "b", count: 29) + "😀c").encoded()
        #expect(emoji == Data([0x08]) + Data(repeating: 0x62, count: 29))

        // Exactly 31 bytes with multi-byte characters survives intact.
        let exact = String(repeating: "é", count: 15) + "z"
        let exactBytes = try MeshCoreCommand.setAdvertName(exact).encoded()
        #expect(exactBytes.count == 32)
        #expect(try MeshCoreCommand(decoding: exactBytes) == .setAdvertName(exact))

        // A flag (two regional-indicator scalars) is one character: it is kept or dropped whole.
        let flag = try MeshCoreCommand.setAdvertName(String(repeating: "c", count: 27) + "🇫🇷").encoded()
        #expect(flag == Data([0x08]) + Data(repeating: 0x63, count: 27))
    }

    @Test func invalidArgumentsAreRejected() {
        #expect(throws: MeshCoreEncodeError.invalidArgument("destination prefix must be 6 bytes, got 5")) {
            try MeshCoreCommand.sendTextMessage(.init(timestamp: 0, destinationPrefix: Data(count: 5), text: "x"))
                .encoded()
        }
        #expect(throws: MeshCoreEncodeError.invalidArgument("destination prefix must be 6 bytes, got 32")) {
            try MeshCoreCommand.sendTextMessage(.init(timestamp: 0, destinationPrefix: S.key, text: "x")).encoded()
        }
        #expect(throws: MeshCoreEncodeError.invalidArgument("public key must be 32 bytes, got 31")) {
            try MeshCoreCommand.removeContact(publicKey: Data(count: 31)).encoded()
        }
        #expect(throws: MeshCoreEncodeError.invalidArgument("public key must be 32 bytes, got 33")) {
            try MeshCoreCommand.hasConnection(publicKey: Data(count: 33)).encoded()
        }
    }

    @Test func oversizedCommandsAreRejected() throws {
        let text = String(repeating: "t", count: 200)
        #expect(throws: MeshCoreEncodeError.frameTooLarge(213)) {
            try MeshCoreCommand.sendTextMessage(.init(timestamp: 0, destinationPrefix: Self.prefix, text: text))
                .encoded()
        }
        #expect(throws: MeshCoreEncodeError.frameTooLarge(207)) {
            try MeshCoreCommand.sendChannelTextMessage(channel: 0, timestamp: 0, text: text).encoded()
        }
        #expect(throws: MeshCoreEncodeError.frameTooLarge(208)) {
            try MeshCoreCommand.appStart(appName: text).encoded()
        }
        #expect(throws: MeshCoreEncodeError.frameTooLarge(177)) {
            try MeshCoreCommand.other(code: 0x20, payload: Data(count: 176)).encoded()
        }
        // 176 bytes is the limit itself, and is allowed.
        let limit = try MeshCoreCommand.sendTextMessage(
            .init(timestamp: 0, destinationPrefix: Self.prefix, text: String(repeating: "t", count: 163))
        ).encoded()
        #expect(limit.count == 176)
    }

    @Test func decodingIsLenientWhereTheFirmwareIs() throws {
        // SEND_SELF_ADVERT floods only for a second byte of 1.
        #expect(try MeshCoreCommand(decoding: S.hex("07 00")) == .sendSelfAdvert(flood: false))
        #expect(try MeshCoreCommand(decoding: S.hex("07 02")) == .sendSelfAdvert(flood: false))
        // GET_CONTACTS without a complete since lists everything.
        #expect(try MeshCoreCommand(decoding: S.hex("04 01 02")) == .getContacts(since: nil))
        // APP_START ignores the reserved bytes' values.
        #expect(try MeshCoreCommand(decoding: S.hex("01 00 00 00 00 00 00 00 41")) == .appStart(appName: "A"))
        // SEND_CHANNEL_TXT_MSG ignores its txt_type byte.
        #expect(
            try MeshCoreCommand(decoding: S.hex("03 01 02 00 00 00 00 41"))
                == .sendChannelTextMessage(channel: 2, timestamp: 0, text: "A"))
        // Trailing bytes after fixed fields are ignored; bare SET_ADVERT_NAME is an empty name.
        #expect(try MeshCoreCommand(decoding: S.hex("05 FF")) == .getDeviceTime)
        #expect(try MeshCoreCommand(decoding: S.hex("08")) == .setAdvertName(""))
        #expect(try MeshCoreCommand(decoding: S.hex("13 72 65 62 6F 6F 74 21")) == .reboot)
        // Codes without a dedicated case stay raw.
        #expect(try MeshCoreCommand(decoding: S.hex("FE 01 02")) == .other(code: 0xFE, payload: S.hex("01 02")))
        #expect(try MeshCoreCommand(decoding: S.hex("2C 01")) == .other(code: 0x2C, payload: S.hex("01")))
        // EXPORT_CONTACT shorter than a key exports the radio's own card.
        #expect(try MeshCoreCommand(decoding: S.hex("11 01")) == .exportContact(publicKey: nil))
        // SET_FLOOD_SCOPE_KEY with 1 to 15 key bytes falls back to the default scope.
        #expect(try MeshCoreCommand(decoding: S.hex("36 00 01 02")) == .setFloodScope(.useDefault))
        // SET_DEFAULT_FLOOD_SCOPE shorter than name and key clears it.
        #expect(try MeshCoreCommand(decoding: S.hex("3F 41 42")) == .setDefaultFloodScope(nil))
        // SET_OTHER_PARAMS: a shorter frame decodes with the missing settings off.
        #expect(try MeshCoreCommand(decoding: S.hex("26 01")) == .setOtherParams(MeshOtherParameters(manualAddContacts: true)))
    }

    @Test func decodingRejectsShortFrames() {
        #expect(throws: MeshCoreDecodeError.empty) { try MeshCoreCommand(decoding: Data()) }
        #expect(throws: MeshCoreDecodeError.truncated(code: 1, needed: 8, got: 7)) {
            try MeshCoreCommand(decoding: S.hex("01 03 20 20 20 20 20"))
        }
        #expect(throws: MeshCoreDecodeError.truncated(code: 1, needed: 8, got: 1)) {
            try MeshCoreCommand(decoding: S.hex("01"))
        }
        #expect(throws: MeshCoreDecodeError.truncated(code: 0x16, needed: 2, got: 1)) {
            try MeshCoreCommand(decoding: S.hex("16"))
        }
        #expect(throws: MeshCoreDecodeError.truncated(code: 2, needed: 13, got: 12)) {
            try MeshCoreCommand(decoding: S.hex("02 00 00 80 00 92 65 A1 A2 A3 A4 A5"))
        }
        #expect(throws: MeshCoreDecodeError.truncated(code: 3, needed: 7, got: 6)) {
            try MeshCoreCommand(decoding: S.hex("03 00 00 80 00 92"))
        }
        #expect(throws: MeshCoreDecodeError.truncated(code: 6, needed: 5, got: 4)) {
            try MeshCoreCommand(decoding: S.hex("06 80 00 92"))
        }
        #expect(throws: MeshCoreDecodeError.truncated(code: 0x1F, needed: 2, got: 1)) {
            try MeshCoreCommand(decoding: S.hex("1F"))
        }
        #expect(throws: MeshCoreDecodeError.truncated(code: 0x0F, needed: 33, got: 32)) {
            try MeshCoreCommand(decoding: Data([0x0F]) + Data(count: 31))
        }
        #expect(throws: MeshCoreDecodeError.truncated(code: 0x1C, needed: 33, got: 2)) {
            try MeshCoreCommand(decoding: S.hex("1C 00"))
        }
        #expect(throws: MeshCoreDecodeError.malformed(code: 0x13, reason: "REBOOT without its \"reboot\" confirmation")) {
            try MeshCoreCommand(decoding: S.hex("13 72 65"))
        }
        #expect(throws: MeshCoreDecodeError.tooLarge(177)) {
            try MeshCoreCommand(decoding: Data([0x0A]) + Data(count: 176))
        }
    }

    @Test func decodesFromASliceWithNonZeroStartIndex() throws {
        let padded = S.hex("FF FF FF 06 80 00 92 65")
        #expect(try MeshCoreCommand(decoding: padded[3...]) == .setDeviceTime(1_704_067_200))
    }

    @Test func errorDescriptions() {
        #expect(MeshCoreEncodeError.frameTooLarge(200).description.contains("200"))
        #expect(MeshCoreDecodeError.truncated(code: 0x0D, needed: 80, got: 2).description
            == "frame 0x0D truncated: needed 80 bytes, got 2")
        #expect(MeshCoreDecodeError.empty.description == "empty frame")
    }
}
