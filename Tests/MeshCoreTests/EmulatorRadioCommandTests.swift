import Foundation
import Testing

@testable import MeshCore
@testable import TetherCore
@testable import TetherSimulator
@testable import MeshCoreEmulator

/// The companion radio's command handler, frame by frame.
@Suite struct EmulatorRadioCommandTests {
    @Test func appStartAnswersSelfInfo() async throws {
        let mesh = await EmulatorMesh()
        let replies = try await mesh.frames(.appStart(appName: "tests"))
        let expected = SelfInfo(
            advertType: .chat, txPower: 22, maxTxPower: 22, publicKey: mesh.key("Base"), manualAddContacts: false,
            radioFrequency: 869.618, radioBandwidth: 62.5, spreadingFactor: 8, codingRate: 8, name: "Base")
        #expect(replies == [.selfInfo(expected)])
        #expect(await mesh.sim { mesh.radio.appName } == "tests")
    }

    @Test func appStartShorterThanEightBytesIsUnsupported() async {
        let mesh = await EmulatorMesh()
        #expect(await mesh.sendRaw(Data([0x01, 0x03, 0x20, 0x20])) == [Data([0x01, 0x01])])
        #expect(await mesh.sendRaw(Data([0x01, 0x03, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20])).first?.first == 0x05)
    }

    @Test func deviceQueryAnswersDeviceInfoAndSetsTheVersion() async throws {
        let mesh = await EmulatorMesh()
        let raw = try await mesh.send(.deviceQuery(protocolVersion: 3))
        #expect(raw.count == 1)
        let frame = raw[0]
        #expect(Array(frame.prefix(8)) == [0x0D, 13, 50, 8, 0x40, 0xE2, 0x01, 0x00])
        let expectedLength = 82  // code, version, contacts/2, channels, PIN 4, date 12, maker 40, version 20, repeat, path hash
        #expect(frame.count == expectedLength)
        guard case .deviceInfo(let info) = try MeshCoreFrame(decoding: frame) else {
            Issue.record("not DEVICE_INFO: \(emulatorHex(frame))")
            return
        }
        #expect(info.firmwareVersionCode == 13)
        #expect(info.maxContacts == 100)
        #expect(info.maxChannels == 8)
        #expect(info.blePin == 123_456)
        #expect(info.firmwareVersion == "v1.17")
        #expect(!info.buildDate.isEmpty)
        #expect(!info.manufacturer.isEmpty)
        #expect(await mesh.sim { mesh.radio.protocolVersion } == 3)
    }

    @Test func protocolVersionResetsWhenTheAppLeaves() async throws {
        let mesh = await EmulatorMesh()
        _ = try await mesh.send(.deviceQuery(protocolVersion: 3))
        let version = await mesh.sim {
            mesh.radio.appDisconnected()
            return mesh.radio.protocolVersion
        }
        #expect(version == 0)
    }

    @Test func getContactsListsEveryContactThenTheNewestLastmod() async throws {
        let mesh = await EmulatorMesh()
        let replies = try await mesh.frames(.getContacts(since: nil))
        let contacts = await mesh.sim { mesh.radio.contacts }
        #expect(contacts.map(\.name) == ["Alice", "Echo", "Far"])
        #expect(replies.first == .contactsStart(count: 3))
        #expect(Array(replies.dropFirst().prefix(3)) == contacts.map { MeshCoreFrame.contact($0) })
        #expect(replies.last == .endOfContacts(lastModified: EmulatorMesh.epoch))
        #expect(replies.count == 5)
        let raw = try await mesh.send(.getContacts(since: nil))
        #expect(raw[1].count == 148)
        #expect(raw[1][35] == 0xFF, "out path unknown: flood")
    }

    @Test func getContactsSinceListsOnlyNewerContacts() async throws {
        let mesh = await EmulatorMesh()
        try await mesh.advance(.seconds(30))
        await mesh.sim { mesh.network.node(named: "Alice")?.advert(flood: false) }
        try await mesh.advance(.seconds(1))
        _ = try await mesh.drain()
        let replies = try await mesh.frames(.getContacts(since: EmulatorMesh.epoch))
        guard replies.count == 3, case .contact(let alice) = replies[1] else {
            Issue.record("unexpected listing \(replies)")
            return
        }
        #expect(replies[0] == .contactsStart(count: 3), "the total, as the firmware sends, not the filtered count")
        #expect(alice.name == "Alice")
        #expect(alice.lastModified == EmulatorMesh.epoch + 30)
        #expect(replies[2] == .endOfContacts(lastModified: EmulatorMesh.epoch + 30))
        let none = try await mesh.frames(.getContacts(since: EmulatorMesh.epoch + 30))
        #expect(none == [.contactsStart(count: 3), .endOfContacts(lastModified: 0)])
    }

    @Test func getContactsDuringAListingIsBadState() async throws {
        let mesh = await EmulatorMesh()
        let first = try MeshCoreCommand.getContacts(since: nil).encoded()
        let frames = await mesh.sim { () -> [Data] in
            mesh.radio.receive(first)
            #expect(mesh.radio.isListingContacts)
            mesh.radio.receive(first)
            return mesh.radio.drainOutputs()
        }
        let decoded = try frames.map { try MeshCoreFrame(decoding: $0) }
        #expect(decoded.prefix(2) == [.contactsStart(count: 3), .error(.badState)])
        #expect(frames[1] == Data([0x01, 0x04]))
        #expect(decoded.count == 6)
        #expect(await mesh.sim { mesh.radio.isListingContacts } == false)
        // Once the listing has gone out, a new one is accepted.
        #expect(try await mesh.frames(.getContacts(since: nil)).first == .contactsStart(count: 3))
    }

    @Test func sendTextMessageAnswersSentWithTheDerivedAck() async throws {
        let mesh = await EmulatorMesh()
        let raw = try await mesh.send(mesh.directMessage(to: "Alice", "hello", timestamp: 1_767_225_700))
        let ack = MeshAckCode.make(timestamp: 1_767_225_700, attempt: 0, text: "hello", senderKey: mesh.key("Base"))
        #expect(raw.count == 1)
        #expect(raw[0].count == 10)
        #expect(try MeshCoreFrame(decoding: raw[0]) == .sent(SentResult(isFlood: true, expectedAck: ack, suggestedTimeout: 12_000)))
        // The same inputs give the same ack; another text or attempt does not.
        let again = MeshAckCode.make(timestamp: 1_767_225_700, attempt: 0, text: "hello", senderKey: mesh.key("Base"))
        #expect(again == ack)
        #expect(MeshAckCode.make(timestamp: 1_767_225_700, attempt: 1, text: "hello", senderKey: mesh.key("Base")) != ack)
    }

    @Test func sendTextMessageErrors() async throws {
        let mesh = await EmulatorMesh()
        let unknown = MeshCoreCommand.sendTextMessage(MeshCoreCommand.TextMessage(
            timestamp: 1, destinationPrefix: Data([1, 2, 3, 4, 5, 6]), text: "who?"))
        #expect(try await mesh.send(unknown) == [Data([0x01, 0x02])])
        #expect(try await mesh.send(mesh.directMessage(to: "Alice", "signed", textType: .signedPlain)) == [Data([0x01, 0x01])])
        #expect(try await mesh.send(mesh.directMessage(to: "Alice", "odd", textType: .unknown(9))) == [Data([0x01, 0x01])])
        #expect(try await mesh.frames(mesh.directMessage(to: "Alice", "cli", textType: .cliData)).first?.code == 0x06)
        let counters = await mesh.sim { mesh.radio.counters }
        #expect(counters.errors == 3)
        #expect(counters.directMessagesSent == 1)
    }

    @Test func sendChannelMessageAnswersOK() async throws {
        let mesh = await EmulatorMesh()
        #expect(try await mesh.send(.sendChannelTextMessage(channel: 0, timestamp: 1, text: "hi all")) == [Data([0x00])])
        // An unset slot in range still sends (with an all-zero key), as the firmware does.
        #expect(try await mesh.send(.sendChannelTextMessage(channel: 3, timestamp: 1, text: "unset slot")) == [Data([0x00])])
        #expect(try await mesh.send(.sendChannelTextMessage(channel: 8, timestamp: 1, text: "no slot")) == [Data([0x01, 0x02])])
        try await mesh.advance(.seconds(3))
        let heard = await mesh.sim { mesh.network.node(named: "Far")?.receivedChannel ?? [] }
        #expect(heard == ["Base: hi all"])
    }

    @Test func syncOnAnEmptyQueueSaysNoMoreMessages() async throws {
        let mesh = await EmulatorMesh()
        #expect(try await mesh.send(.syncNextMessage) == [Data([0x0A])])
    }

    @Test func deviceTimeRunsWithVirtualTimeAndNeverGoesBack() async throws {
        let mesh = await EmulatorMesh()
        #expect(try await mesh.frames(.getDeviceTime) == [.currentTime(EmulatorMesh.epoch)])
        try await mesh.advance(.seconds(10))
        #expect(try await mesh.frames(.getDeviceTime) == [.currentTime(EmulatorMesh.epoch + 10)])
        #expect(try await mesh.send(.setDeviceTime(EmulatorMesh.epoch + 1_000)) == [Data([0x00])])
        #expect(try await mesh.frames(.getDeviceTime) == [.currentTime(EmulatorMesh.epoch + 1_000)])
        #expect(try await mesh.send(.setDeviceTime(EmulatorMesh.epoch + 999)) == [Data([0x01, 0x06])])
        #expect(try await mesh.send(.setDeviceTime(EmulatorMesh.epoch + 1_000)) == [Data([0x00])], "the same second is not earlier")
        try await mesh.advance(.seconds(5))
        #expect(await mesh.sim { mesh.radio.clockEpoch } == EmulatorMesh.epoch + 1_005)
    }

    @Test func batteryAndStorageLayout() async throws {
        let mesh = await EmulatorMesh()
        let raw = try await mesh.send(.getBatteryAndStorage)
        #expect(raw.count == 1)
        #expect(raw[0].count == 11)
        #expect(Array(raw[0].prefix(3)) == [0x0C, 0xAC, 0x0F])
        #expect(try MeshCoreFrame(decoding: raw[0]) == .batteryAndStorage(BatteryAndStorage(millivolts: 4_012, usedKilobytes: 8, totalKilobytes: 1_024)))
    }

    @Test func setAdvertNameTruncatesTo31Bytes() async throws {
        let mesh = await EmulatorMesh()
        #expect(try await mesh.send(.setAdvertName("Summit")) == [Data([0x00])])
        #expect(await mesh.sim { mesh.radio.name } == "Summit")
        let long = "N" + String(repeating: "x", count: 39)
        #expect(await mesh.sendRaw(Data([0x08]) + Data(long.utf8)) == [Data([0x00])])
        #expect(await mesh.sim { mesh.radio.name }.utf8.count == 31)
        guard case .selfInfo(let info)? = try await mesh.frames(.appStart(appName: "t")).first else {
            Issue.record("no SELF_INFO")
            return
        }
        #expect(info.name == String(long.prefix(31)))
    }

    @Test func getChannelReportsPublicAndEmptySlots() async throws {
        let mesh = await EmulatorMesh()
        #expect(try await mesh.frames(.getChannel(0)) == [.channelInfo(ChannelInfo(index: 0, name: "Public", secret: MeshPublicChannel.secret))])
        let empty = try await mesh.send(.getChannel(7))
        #expect(empty == [Data([0x12, 0x07]) + Data(count: 48)])
        #expect(try await mesh.send(.getChannel(8)) == [Data([0x01, 0x02])])
    }

    @Test func removeContactThenNotFound() async throws {
        let mesh = await EmulatorMesh()
        let key = mesh.key("Alice")
        #expect(try await mesh.send(.removeContact(publicKey: key)) == [Data([0x00])])
        #expect(await mesh.sim { mesh.radio.contacts.map(\.name) } == ["Echo", "Far"])
        #expect(try await mesh.send(.removeContact(publicKey: key)) == [Data([0x01, 0x02])])
    }

    @Test(arguments: [
        Data([0x13]) + Data("rebo".utf8), Data([0x09]), Data([0x0B, 1, 2, 3]), Data([0x1C]) + Data(count: 31),
        Data([0x33]), Data([0x38]), Data([0x7F]), Data([0xFF, 0x00]),
    ])
    func otherCommandsAreUnsupported(_ frame: Data) async {
        let mesh = await EmulatorMesh()
        #expect(await mesh.sendRaw(frame) == [Data([0x01, 0x01])])
    }

    @Test func undecodableFramesAreUnsupportedAndNeverCrash() async {
        let mesh = await EmulatorMesh()
        #expect(await mesh.sendRaw(Data()) == [Data([0x01, 0x01])])
        #expect(await mesh.sendRaw(Data([0x16])) == [Data([0x01, 0x01])], "DEVICE_QUERY without its version")
        #expect(await mesh.sendRaw(Data([0x06, 0x01])) == [Data([0x01, 0x01])], "SET_DEVICE_TIME truncated")
        #expect(await mesh.sendRaw(Data([0x0F, 0x01])) == [Data([0x01, 0x01])], "REMOVE_CONTACT truncated")
        #expect(await mesh.sendRaw(Data(repeating: 0x05, count: 200)) == [Data([0x01, 0x01])], "oversized")
        var generator = SplitMix64(seed: 99)
        for _ in 0..<300 {
            let length = Int(generator.next() % 40)
            let frame = Data((0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
            let replies = await mesh.sendRaw(frame)
            #expect(!replies.isEmpty && replies.allSatisfy { !$0.isEmpty })
        }
    }
}
