import Foundation
import Testing

@testable import MeshCore
@testable import MeshCoreEmulator

/// Channels (set, clear, `#hashtag` secrets), contacts (add/update, reset path, by key) and
/// radio settings (TX power, position, LoRa parameters): the bytes, and the emulated radio's
/// answers.
@Suite struct ContactsChannelsSettingsTests {
    typealias S = ProtocolTestSupport

    // MARK: Bytes, hand-derived from the companion protocol

    @Test func hashtagSecretsAreTheFirst16BytesOfSHA256OverTheTaggedName() {
        // sha256("#test") = 9cd8fcf2 2a47333b 591d96a2 b848b73f …
        #expect(MeshChannelSecret.hashtag("#test") == S.hex("9C D8 FC F2 2A 47 33 3B 59 1D 96 A2 B8 48 B7 3F"))
        #expect(MeshChannelSecret.hashtag("test") == MeshChannelSecret.hashtag("#test"))
        #expect(MeshChannelSecret.hash(of: MeshChannelSecret.hashtag("#test")) == 0xD9)
        // The public channel's id byte.
        #expect(MeshChannelSecret.hash(of: MeshPublicChannel.secret) == 0x11)
    }

    @Test func setChannelIsIndexNameAndSecret() throws {
        let secret = Data(0..<16)
        let bytes = try MeshCoreCommand.setChannel(ChannelInfo(index: 2, name: "Ops", secret: secret)).encoded()
        #expect(bytes == S.hex("20 02 4F 70 73 " + S.zeros(29)) + secret)
        #expect(bytes.count == 50)
        #expect(try MeshCoreCommand(decoding: bytes) == .setChannel(ChannelInfo(index: 2, name: "Ops", secret: secret)))
        // 31 bytes of name at most: the radio keeps a NUL.
        let long = try MeshCoreCommand.setChannel(ChannelInfo(index: 0, name: String(repeating: "x", count: 40), secret: secret)).encoded()
        #expect(long[2..<33] == Data(repeating: 0x78, count: 31))
        #expect(long[33] == 0)
        #expect(throws: MeshCoreEncodeError.self) {
            try MeshCoreCommand.setChannel(ChannelInfo(index: 0, name: "x", secret: Data(count: 32))).encoded()
        }
        // The firmware refuses the frame a 32-byte secret makes.
        #expect(throws: MeshCoreDecodeError.self) { try MeshCoreCommand(decoding: Data([0x20, 0x01]) + Data(count: 64)) }
    }

    @Test func contactKeyCommandsAreTheCodeAndTheKey() throws {
        let key = S.key
        #expect(try MeshCoreCommand.resetPath(publicKey: key).encoded() == Data([0x0D]) + key)
        #expect(try MeshCoreCommand.getContactByKey(publicKey: key).encoded() == Data([0x1E]) + key)
        #expect(try MeshCoreCommand.shareContact(publicKey: key).encoded() == Data([0x10]) + key)
        for command in [MeshCoreCommand.resetPath(publicKey: key), .getContactByKey(publicKey: key), .shareContact(publicKey: key)] {
            #expect(try MeshCoreCommand(decoding: command.encoded()) == command)
        }
        #expect(throws: MeshCoreEncodeError.self) { try MeshCoreCommand.resetPath(publicKey: Data(count: 6)).encoded() }
    }

    @Test func addUpdateContactCarriesTheRecordThroughThePosition() throws {
        let relay = ProtocolFrameSamples.relay
        let body = S.hex(ProtocolFrameSamples.relayBodyHex)
        // As the apps send it (144 bytes): the radio stamps the modification time itself.
        let bytes = try MeshCoreCommand.addUpdateContact(relay).encoded()
        #expect(bytes == Data([0x09]) + body.prefix(143))
        var stamped = relay
        stamped.lastModified = 0
        #expect(try MeshCoreCommand(decoding: bytes) == .addUpdateContact(stamped, fields: .withPosition))
        let whole = try MeshCoreCommand.addUpdateContact(relay, fields: .withLastModified).encoded()
        #expect(whole == Data([0x09]) + body)
        #expect(try MeshCoreCommand(decoding: whole) == .addUpdateContact(relay, fields: .withLastModified))
        // The firmware's cut-offs: 148 bytes for the time, 144 for the position, 136 at least.
        guard case .addUpdateContact(let partTime, let timeFields) = try MeshCoreCommand(decoding: whole.prefix(147)),
              case .addUpdateContact(let partPosition, let positionFields) = try MeshCoreCommand(decoding: whole.prefix(143)),
              case .addUpdateContact(let bare, let bareFields) = try MeshCoreCommand(decoding: whole.prefix(136))
        else {
            Issue.record("not ADD_UPDATE_CONTACT")
            return
        }
        #expect(timeFields == .withPosition && partTime.lastModified == 0 && partTime.latitude == 51.5)
        #expect(positionFields == .throughLastAdvert && partPosition.latitude == 0 && partPosition.longitude == 0)
        #expect(bareFields == .throughLastAdvert && bare.lastAdvert == relay.lastAdvert)
        #expect(try MeshCoreCommand.addUpdateContact(relay, fields: .throughLastAdvert).encoded() == whole.prefix(136))
        #expect(throws: MeshCoreDecodeError.self) { try MeshCoreCommand(decoding: whole.prefix(135)) }
    }

    @Test func settingsBytes() throws {
        #expect(try MeshCoreCommand.setRadioTxPower(-9).encoded() == S.hex("0C F7"))
        #expect(try MeshCoreCommand.setAdvertLatLon(latitude: 47.123456, longitude: -122.5).encoded()
                == S.hex("0E 00 0C CF 02 60 CC B2 F8"))
        let radio = MeshRadioParameters(frequencyKilohertz: 869_525, bandwidthHertz: 250_000, spreadingFactor: 11, codingRate: 5)
        #expect(try MeshCoreCommand.setRadioParams(radio).encoded() == S.hex("0B 95 44 0D 00 90 D0 03 00 0B 05 00"))
        for command in [MeshCoreCommand.setRadioTxPower(-9), .setAdvertLatLon(latitude: 47.123456, longitude: -122.5), .setRadioParams(radio)] {
            #expect(try MeshCoreCommand(decoding: command.encoded()) == command)
        }
        // Without the repeat byte the firmware turns repeating off.
        #expect(try MeshCoreCommand(decoding: S.hex("0B 95 44 0D 00 90 D0 03 00 0B 05")) == .setRadioParams(radio))
        #expect(throws: MeshCoreEncodeError.self) { try MeshCoreCommand.setAdvertLatLon(latitude: 91, longitude: 0).encoded() }
    }

    // MARK: The emulated radio

    @Test func channelsAreSetReadAndCleared() async throws {
        let mesh = await EmulatorMesh()
        let secret = MeshChannelSecret.hashtag("#ops")
        #expect(try await mesh.frames(.setChannel(ChannelInfo(index: 3, name: "#ops", secret: secret))) == [.ok(value: nil)])
        #expect(try await mesh.frames(.getChannel(3)) == [.channelInfo(ChannelInfo(index: 3, name: "#ops", secret: secret))])
        #expect(try await mesh.frames(.setChannel(ChannelInfo(index: 3, name: "", secret: Data(count: 16)))) == [.ok(value: nil)])
        #expect(try await mesh.frames(.getChannel(3)) == [.channelInfo(ChannelInfo(index: 3, name: "", secret: Data(count: 16)))])
        #expect(await mesh.sim { mesh.radio.channel(3) } == nil)
        #expect(try await mesh.frames(.setChannel(ChannelInfo(index: 8, name: "x", secret: secret))) == [.error(.notFound)])
        // A cleared slot in range still sends (with an all-zero key), as the firmware does.
        #expect(try await mesh.frames(.sendChannelTextMessage(channel: 3, timestamp: 1, text: "anyone?")) == [.ok(value: nil)])
        #expect(try await mesh.frames(.sendChannelTextMessage(channel: 8, timestamp: 1, text: "x")) == [.error(.notFound)])
    }

    @Test func contactsAreAddedUpdatedFoundAndTheirPathsReset() async throws {
        let mesh = await EmulatorMesh()
        var added = MeshContact(publicKey: Data(repeating: 0x5A, count: 32), type: .repeater,
                                outPath: Data([0x10, 0x20, 0x30, 0x40]), outPathHashSize: 2, name: "Hilltop",
                                lastAdvert: 100, latitude: 1.5, longitude: 2.5, lastModified: 0)
        #expect(try await mesh.frames(.addUpdateContact(added)) == [.ok(value: nil)])
        guard case .contact(let stored)? = try await mesh.frames(.getContactByKey(publicKey: added.publicKey)).first else {
            Issue.record("no CONTACT")
            return
        }
        // The radio stamps a modification time the app left at zero.
        #expect(stored.lastModified == EmulatorMesh.epoch)
        added.lastModified = stored.lastModified
        #expect(stored == added)
        #expect(stored.outPathHopCount == 2)
        added.name = "Hilltop 2"
        #expect(try await mesh.frames(.addUpdateContact(added)) == [.ok(value: nil)])
        let key = added.publicKey
        #expect(await mesh.sim { mesh.radio.contacts.filter { $0.publicKey == key }.map(\.name) } == ["Hilltop 2"])
        // A frame without the position keeps the one the radio has; one with the time keeps it.
        var renamed = added
        renamed.latitude = 0
        renamed.longitude = 0
        renamed.lastModified = 42
        #expect(try await mesh.frames(.addUpdateContact(renamed, fields: .throughLastAdvert)) == [.ok(value: nil)])
        #expect(await mesh.sim { mesh.radio.contacts.first { $0.publicKey == key }.map { [$0.latitude, $0.longitude] } } == [1.5, 2.5])
        #expect(try await mesh.frames(.addUpdateContact(renamed, fields: .withLastModified)) == [.ok(value: nil)])
        #expect(await mesh.sim { mesh.radio.contacts.first { $0.publicKey == key }?.lastModified } == 42)
        #expect(try await mesh.frames(.resetPath(publicKey: key)) == [.ok(value: nil)])
        #expect(await mesh.sim { mesh.radio.contacts.first { $0.publicKey == key }?.outPath } == nil)
        // Left alone by RESET_PATH, as the firmware does.
        #expect(await mesh.sim { mesh.radio.contacts.first { $0.publicKey == key }?.lastModified } == 42)
        // Added by hand, never heard: the radio has no advert of it to share (ERR 3, as the firmware).
        #expect(try await mesh.frames(.shareContact(publicKey: key)) == [.error(.tableFull)])
        let unknown = Data(repeating: 0x01, count: 32)
        #expect(try await mesh.frames(.getContactByKey(publicKey: unknown)) == [.error(.notFound)])
        #expect(try await mesh.frames(.resetPath(publicKey: unknown)) == [.error(.notFound)])
        #expect(try await mesh.frames(.shareContact(publicKey: unknown)) == [.error(.notFound)])
    }

    @Test func aFullTableRefusesANewContact() async throws {
        let mesh = await EmulatorMesh(configuration: CompanionRadio.Configuration(maxContacts: 3))
        let newcomer = MeshContact(publicKey: Data(repeating: 0x77, count: 32), type: .chat, name: "Late")
        #expect(try await mesh.frames(.addUpdateContact(newcomer)) == [.error(.tableFull)])
    }

    @Test func settingsChangeWhatSelfInfoReports() async throws {
        let mesh = await EmulatorMesh()
        #expect(try await mesh.frames(.setRadioTxPower(-9)) == [.ok(value: nil)])
        #expect(try await mesh.frames(.setRadioTxPower(23)) == [.error(.illegalArgument)])
        #expect(try await mesh.frames(.setAdvertLatLon(latitude: 47.5, longitude: -122.25)) == [.ok(value: nil)])
        let radio = MeshRadioParameters(frequencyKilohertz: 869_525, bandwidthHertz: 250_000, spreadingFactor: 11, codingRate: 5)
        #expect(try await mesh.frames(.setRadioParams(radio)) == [.ok(value: nil)])
        var bad = radio
        bad.spreadingFactor = 13
        #expect(try await mesh.frames(.setRadioParams(bad)) == [.error(.illegalArgument)])
        // Repeating only on the frequencies the firmware allows it on.
        var repeating = radio
        repeating.repeats = true
        #expect(try await mesh.frames(.setRadioParams(repeating)) == [.error(.illegalArgument)])
        repeating.frequencyKilohertz = 869_495
        #expect(try await mesh.frames(.setRadioParams(repeating)) == [.ok(value: nil)])
        guard case .deviceInfo(let device)? = try await mesh.frames(.deviceQuery(protocolVersion: 3)).first else {
            Issue.record("no DEVICE_INFO")
            return
        }
        #expect(device.repeatMode == true)
        #expect(try await mesh.frames(.setRadioParams(radio)) == [.ok(value: nil)])
        // Kept across APP_START, as the firmware's saved preferences are.
        guard case .selfInfo(let info)? = try await mesh.frames(.appStart(appName: "again")).first else {
            Issue.record("no SELF_INFO")
            return
        }
        #expect(info.txPower == -9)
        #expect(info.latitude == 47.5 && info.longitude == -122.25)
        #expect(info.radioFrequency == 869.525 && info.radioBandwidth == 250)
        #expect(info.spreadingFactor == 11 && info.codingRate == 5)
    }
}
