import Foundation
import Testing

@testable import MeshCore

@Suite struct ProtocolFrameTests {
    typealias S = ProtocolTestSupport

    @Test(arguments: ProtocolFrameSamples.all)
    func decodesHandWrittenFrame(_ sample: ProtocolFrameSample) throws {
        let frame = try MeshCoreFrame(decoding: sample.bytes)
        #expect(frame == sample.expected)
        #expect(frame.code == sample.bytes.first)
        #expect(frame.isPush == (sample.bytes[0] >= 0x80))
    }

    @Test(arguments: ProtocolFrameSamples.all)
    func encodingIsTheExactInverse(_ sample: ProtocolFrameSample) throws {
        let frame = try MeshCoreFrame(decoding: sample.bytes)
        #expect(S.hexString(frame.encoded()) == S.hexString(sample.bytes))
        #expect(S.hexString(sample.expected.encoded()) == S.hexString(sample.bytes))
    }

    @Test func decodesFromASliceWithNonZeroStartIndex() throws {
        let padded = S.hex("FF FF 09 80 00 92 65")
        let slice = padded[2...]
        #expect(slice.startIndex == 2)
        #expect(try MeshCoreFrame(decoding: slice) == .currentTime(1_704_067_200))
        let contact = S.hex("EE 03 " + ProtocolFrameSamples.aliceBodyHex)
        #expect(try MeshCoreFrame(decoding: contact.dropFirst()) == .contact(ProtocolFrameSamples.alice))
    }

    @Test func okWithAndWithoutValue() throws {
        #expect(try MeshCoreFrame(decoding: S.hex("00")) == .ok(value: nil))
        #expect(try MeshCoreFrame(decoding: S.hex("00 78 56 34 12")) == .ok(value: 0x1234_5678))
        #expect(throws: MeshCoreDecodeError.truncated(code: 0, needed: 5, got: 3)) {
            try MeshCoreFrame(decoding: S.hex("00 78 56"))
        }
    }

    @Test func errorCodes() throws {
        let expected: [UInt8: MeshCoreErrorCode] = [
            1: .unsupportedCommand, 2: .notFound, 3: .tableFull, 4: .badState, 5: .fileIOError,
            6: .illegalArgument, 0: .unknown(0), 7: .unknown(7), 0xFF: .unknown(0xFF),
        ]
        for (raw, code) in expected {
            #expect(try MeshCoreFrame(decoding: Data([0x01, raw])) == .error(code))
            #expect(code.rawValue == raw)
            #expect(MeshCoreErrorCode(rawValue: raw) == code)
        }
        #expect(try MeshCoreFrame(decoding: S.hex("01")) == .error(.unknown(0)))
        #expect(MeshCoreErrorCode.unknown(2) == .notFound)
        #expect(MeshCoreErrorCode.notFound.description == "not found")
        #expect(MeshCoreErrorCode.unknown(9).description == "unknown error 9")
    }

    @Test func byteEnumsCompareHashAndCodeByTheirByte() throws {
        #expect(MeshContactType.unknown(1) == .chat)
        #expect(MeshTextType.unknown(2) == .signedPlain)
        #expect(Set([MeshContactType.unknown(2), .repeater]).count == 1)
        let encoded = try JSONEncoder().encode([MeshContactType.room, .unknown(9)])
        #expect(String(decoding: encoded, as: UTF8.self) == "[3,9]")
        #expect(try JSONDecoder().decode([MeshTextType].self, from: Data("[1,7]".utf8)) == [.cliData, .unknown(7)])
    }

    @Test func contactFields() throws {
        let bytes = S.hex("03 " + ProtocolFrameSamples.relayBodyHex)
        #expect(bytes.count == 148)
        guard case .contact(let contact) = try MeshCoreFrame(decoding: bytes) else {
            Issue.record("not a contact")
            return
        }
        #expect(contact.publicKey == S.otherKey)
        #expect(contact.publicKeyPrefix == S.hex("E0 E1 E2 E3 E4 E5"))
        #expect(contact.type == .repeater)
        #expect(contact.outPath == S.hex("A1 B2 C3"))
        #expect(contact.name == "Relay 1")
        #expect(contact.latitude == 51.5)
        #expect(contact.longitude == -0.12)

        let flood = try MeshCoreFrame(decoding: S.hex("03 " + ProtocolFrameSamples.aliceBodyHex))
        guard case .contact(let alice) = flood else {
            Issue.record("not a contact")
            return
        }
        #expect(alice.outPath == nil)
        #expect(alice.name == "Alice")
        #expect(alice.flags == 1)
        #expect(alice.lastModified == 1_704_067_201)
    }

    @Test func bareContactBodyHelpers() throws {
        let body = S.hex(ProtocolFrameSamples.relayBodyHex)
        #expect(body.count == MeshContact.bodySize)
        #expect(try MeshContact.decodeBody(body) == ProtocolFrameSamples.relay)
        #expect(ProtocolFrameSamples.relay.encodeBody() == body)
        #expect(throws: MeshCoreDecodeError.truncated(code: 0x8A, needed: 147, got: 146)) {
            try MeshContact.decodeBody(body.dropLast(), code: 0x8A)
        }
    }

    /// Hash size code 3 (4-byte hashes) does not exist; 0x7F would be 63 hops × 2 bytes. The
    /// radio stores whatever an app wrote, so such a contact is read as flooding, not dropped.
    @Test(arguments: [UInt8(0xC1), 0xC0, 0x7F, 0xA2])
    func contactWithImpossiblePathLengthFloods(_ encoded: UInt8) throws {
        var bytes = S.hex("03 " + ProtocolFrameSamples.aliceBodyHex)
        bytes[35] = encoded
        guard case .contact(let contact) = try MeshCoreFrame(decoding: bytes) else {
            Issue.record("not a contact")
            return
        }
        #expect(contact.outPath == nil)
        #expect(contact.name == "Alice")
    }

    /// The length byte packs the hop count (bits 0–5) and the hash size − 1 (bits 6–7).
    @Test(arguments: [(UInt8(0x05), 5, 1), (0x45, 5, 2), (0x8A, 10, 3), (0x00, 0, 1), (0x60, 32, 2)])
    func contactPathsWithWiderHopHashes(_ encoded: UInt8, hops: Int, hashSize: Int) throws {
        var bytes = S.hex("03 " + ProtocolFrameSamples.aliceBodyHex)
        bytes[35] = encoded
        for offset in 0..<64 { bytes[36 + offset] = UInt8(offset + 1) }
        guard case .contact(let contact) = try MeshCoreFrame(decoding: bytes) else {
            Issue.record("not a contact")
            return
        }
        #expect(contact.outPathHashSize == hashSize)
        #expect(contact.outPathHopCount == hops)
        #expect(contact.outPath == Data((0..<(hops * hashSize)).map { UInt8($0 + 1) }))
        // Encoded back: the same length byte, the same path bytes, the rest of the field zero.
        let again = MeshCoreFrame.contact(contact).encoded()
        #expect(again[35] == encoded)
        #expect(again[36..<(36 + hops * hashSize)] == bytes[36..<(36 + hops * hashSize)])
        #expect(again[(36 + hops * hashSize)..<100].allSatisfy { $0 == 0 })
    }

    @Test func contactNameFillingTheWholeFieldAndGarbageAfterTheNul() throws {
        let name32 = String(repeating: "41 ", count: 32)
        let full = S.hex("03 " + S.keyHex + " 01 00 FF " + S.zeros(64) + name32 + S.zeros(16))
        guard case .contact(let contact) = try MeshCoreFrame(decoding: full) else {
            Issue.record("not a contact")
            return
        }
        #expect(contact.name == String(repeating: "A", count: 32))
        // Written back as the firmware writes names: 31 bytes and a NUL.
        var written = full
        written[131] = 0
        #expect(MeshCoreFrame.contact(contact).encoded() == written)

        let garbage = S.hex("03 " + S.keyHex + " 01 00 FF " + S.zeros(64) + "42 6F 62 00 58 59 " + S.zeros(26) + S.zeros(16))
        guard case .contact(let bob) = try MeshCoreFrame(decoding: garbage) else {
            Issue.record("not a contact")
            return
        }
        #expect(bob.name == "Bob")
    }

    @Test func selfInfoFields() throws {
        guard case .selfInfo(let info) = try MeshCoreFrame(decoding: sample("SELF_INFO").bytes) else {
            Issue.record("not self info")
            return
        }
        #expect(info.name == "MyNode")
        #expect(info.radioFrequency == 869.525)
        #expect(info.radioBandwidth == 250)
        #expect(info.spreadingFactor == 11)
        #expect(info.codingRate == 5)
        #expect(info.txPower == 22)
        #expect(info.advertType == .chat)
        #expect(info.manualAddContacts)
        #expect(info.telemetryModes == 0x16)
        #expect(info.publicKey == S.key)
    }

    /// TX power is a signed byte: boards reach below 0 dBm (down to −9).
    @Test func selfInfoTxPowerBelowZero() throws {
        var bytes = sample("SELF_INFO").bytes
        bytes[1 + 1] = 0xF7
        guard case .selfInfo(let info) = try MeshCoreFrame(decoding: bytes) else {
            Issue.record("not self info")
            return
        }
        #expect(info.txPower == -9)
        #expect(MeshCoreFrame.selfInfo(info).encoded() == bytes)
    }

    /// 0xFF in a received message means it came by a direct route; otherwise the hops it was
    /// flooded over are in bits 0–5.
    @Test func receivedMessagesSayHowTheyCame() {
        let direct = ContactMessage(senderPrefix: Data(count: 6), pathLength: 0xFF, timestamp: 1, text: "d")
        #expect(direct.cameDirect)
        #expect(direct.hopCount == nil)
        let flooded = ChannelMessage(channelIndex: 0, pathLength: 0x43, timestamp: 1, text: "A: f")
        #expect(!flooded.cameDirect)
        #expect(flooded.hopCount == 3)
    }

    @Test func sentFields() throws {
        let frame = try MeshCoreFrame(decoding: S.hex("06 00 01 02 03 04 10 27 00 00"))
        #expect(frame == .sent(SentResult(isFlood: false, expectedAck: 0x0403_0201, suggestedTimeout: 10_000)))
    }

    @Test func messageFields() throws {
        guard case .contactMessage(let signed) = try MeshCoreFrame(decoding: sample("CONTACT_MSG_RECV_V3 signed").bytes)
        else {
            Issue.record("not a contact message")
            return
        }
        #expect(signed.authorPrefix == S.hex("0A 0B 0C 0D"))
        #expect(signed.text == "signed")
        #expect(signed.snr == -2.5)
        #expect(signed.isV3)

        guard case .contactMessage(let legacy) = try MeshCoreFrame(decoding: sample("CONTACT_MSG_RECV legacy").bytes)
        else {
            Issue.record("not a contact message")
            return
        }
        #expect(legacy.snr == nil)
        #expect(legacy.authorPrefix == nil)
        #expect(!legacy.isV3)
        #expect(legacy.textType == .cliData)

        let empty = try MeshCoreFrame(decoding: S.hex("10 00 00 00 A1 A2 A3 A4 A5 A6 FF 00 80 00 92 65"))
        guard case .contactMessage(let emptyMessage) = empty else {
            Issue.record("not a contact message")
            return
        }
        #expect(emptyMessage.text.isEmpty)
    }

    @Test func channelMessageSenderAndBody() throws {
        guard case .channelMessage(let v3) = try MeshCoreFrame(decoding: sample("CHANNEL_MSG_RECV_V3").bytes) else {
            Issue.record("not a channel message")
            return
        }
        #expect(v3.senderName == "Bob")
        #expect(v3.body == "hello")
        #expect(v3.snr == 5)

        guard case .channelMessage(let legacy) = try MeshCoreFrame(decoding: sample("CHANNEL_MSG_RECV legacy").bytes)
        else {
            Issue.record("not a channel message")
            return
        }
        #expect(legacy.senderName == "Carol")
        #expect(legacy.body == "hey: you")
        #expect(legacy.channelIndex == 1)

        let anonymous = ChannelMessage(channelIndex: 0, pathLength: 0, timestamp: 0, text: "no sender")
        #expect(anonymous.senderName == nil)
        #expect(anonymous.body == "no sender")
    }

    @Test func batteryFullAndShort() throws {
        #expect(
            try MeshCoreFrame(decoding: S.hex("0C 7C 10"))
                == .batteryAndStorage(BatteryAndStorage(millivolts: 4220, usedKilobytes: nil, totalKilobytes: nil)))
        #expect(
            try MeshCoreFrame(decoding: S.hex("0C 10 0E 00 02 00 00 00 00 01 00"))
                == .batteryAndStorage(BatteryAndStorage(millivolts: 3600, usedKilobytes: 512, totalKilobytes: 65536)))
    }

    @Test func deviceInfoModernAndOld() throws {
        guard case .deviceInfo(let modern) = try MeshCoreFrame(decoding: sample("DEVICE_INFO v13").bytes) else {
            Issue.record("not device info")
            return
        }
        #expect(modern.firmwareVersionCode == 13)
        #expect(modern.maxContacts == 100)
        #expect(modern.maxChannels == 8)
        #expect(modern.blePin == 123_456)
        #expect(modern.buildDate == "13 Oct 2025")
        #expect(modern.manufacturer == "Heltec V3")
        #expect(modern.firmwareVersion == "v1.17.0")
        #expect(modern.repeatMode == false)
        #expect(modern.pathHashMode == 1)

        let old = try MeshCoreFrame(decoding: S.hex("0D 02"))
        #expect(old == .deviceInfo(DeviceInfo(
            firmwareVersionCode: 2, maxContacts: 0, maxChannels: 0, blePin: 0, buildDate: "",
            manufacturer: "", firmwareVersion: "", repeatMode: nil, pathHashMode: nil)))

        // v8 predates the repeat flag: a trailing byte is ignored, not read as one.
        let v8 = S.hex("0D 08 32 08 40 E2 01 00 " + S.zeros(72) + "01")
        guard case .deviceInfo(let eight) = try MeshCoreFrame(decoding: v8) else {
            Issue.record("not device info")
            return
        }
        #expect(eight.repeatMode == nil)
        #expect(eight.pathHashMode == nil)

        // v13 with only the repeat flag.
        var v13 = sample("DEVICE_INFO v13").bytes
        v13.removeLast()
        guard case .deviceInfo(let partial) = try MeshCoreFrame(decoding: v13) else {
            Issue.record("not device info")
            return
        }
        #expect(partial.repeatMode == false)
        #expect(partial.pathHashMode == nil)
        #expect(MeshCoreFrame.deviceInfo(partial).encoded() == v13)
    }

    @Test func channelInfoFields() throws {
        guard case .channelInfo(let info) = try MeshCoreFrame(decoding: sample("CHANNEL_INFO").bytes) else {
            Issue.record("not channel info")
            return
        }
        #expect(info.index == 0)
        #expect(info.name == "Public")
        #expect(info.secret.count == 16)
    }

    @Test func pushesAreFlagged() throws {
        for code in MeshCorePushCode.allCases {
            #expect(code.rawValue >= 0x80)
        }
        #expect(MeshCoreFrame.messageWaiting.isPush)
        #expect(MeshCoreFrame.newAdvert(ProtocolFrameSamples.relay).isPush)
        #expect(!MeshCoreFrame.ok(value: nil).isPush)
        #expect(MeshCoreFrame.other(code: 0x88, payload: Data()).isPush)
        #expect(!MeshCoreFrame.other(code: 0x0B, payload: Data()).isPush)
    }

    @Test func everyCodeEnumMatchesTheSpec() {
        // The firmware's assigned codes: commands 1–43, 50–52, 54–66; responses 0–29.
        #expect(MeshCoreCommandCode.allCases.count == 59)
        #expect(Set(MeshCoreCommandCode.allCases.map(\.rawValue)) == Set(Array(1...43) + [50, 51, 52] + Array(54...66)))
        #expect(MeshCoreCommandCode.getStats.rawValue == 56)
        #expect(MeshCoreCommandCode.sendBinaryRequest.rawValue == 50)
        #expect(MeshCoreCommandCode.getTuningParams.rawValue == 43)
        #expect(MeshCoreResponseCode.allCases.map(\.rawValue) == Array(0...29))
        #expect(MeshCoreResponseCode.stats.rawValue == 24)
        #expect(MeshCoreResponseCode.channelInfo.rawValue == 18)
        #expect(MeshCorePushCode.allCases.count == 17)
        #expect(MeshCorePushCode.contactsFull.rawValue == 0x90)
        #expect(MeshCoreFrameLimits.maximumFrameSize == 176)
    }

    @Test func encodingNormalisesFieldWidths() throws {
        let contact = MeshContact(
            publicKey: Data([1, 2, 3]), type: .chat, outPath: Data(repeating: 7, count: 70),
            name: String(repeating: "é", count: 20))
        let bytes = MeshCoreFrame.contact(contact).encoded()
        #expect(bytes.count == 148)
        guard case .contact(let back) = try MeshCoreFrame(decoding: bytes) else {
            Issue.record("not a contact")
            return
        }
        #expect(back.publicKey == Data([1, 2, 3]) + Data(count: 29))
        // 63 hops at most: the count has six bits.
        #expect(back.outPath == Data(repeating: 7, count: 63))
        // 31 bytes and a NUL: 15 two-byte characters.
        #expect(back.name == String(repeating: "é", count: 15))
    }

    @Test func codableContactAndMessages() throws {
        let encoder = JSONEncoder()
        let decoder = JSONDecoder()
        let contact = ProtocolFrameSamples.relay
        #expect(try decoder.decode(MeshContact.self, from: encoder.encode(contact)) == contact)
        // JSON written before paths had a hash size reads as 1-byte hashes.
        var older = try #require(try JSONSerialization.jsonObject(with: encoder.encode(contact)) as? [String: Any])
        older["outPathHashSize"] = nil
        #expect(try decoder.decode(MeshContact.self, from: JSONSerialization.data(withJSONObject: older)) == contact)
        let message = ContactMessage(
            senderPrefix: Data([1, 2, 3, 4, 5, 6]), pathLength: 1, textType: .unknown(9), timestamp: 5,
            text: "x", snr: 1.25)
        #expect(try decoder.decode(ContactMessage.self, from: encoder.encode(message)) == message)
        let channel = ChannelMessage(channelIndex: 2, pathLength: 0xFF, timestamp: 7, text: "A: b", isV3: false)
        #expect(try decoder.decode(ChannelMessage.self, from: encoder.encode(channel)) == channel)
    }

    private func sample(_ name: String) -> ProtocolFrameSample {
        ProtocolFrameSamples.all.first { $0.name == name }!
    }
}
