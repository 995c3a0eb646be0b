import Crypto
import Foundation
import Testing
import TetherSimulator

@testable import MeshCore
@testable import MeshCoreEmulator

/// Contact cards (`meshcore://` adverts), share links, EXPORT/IMPORT_CONTACT, advert paths and
/// the auto-add rules, through the bytes and the emulated radio.
@Suite struct ContactCardTests {
    typealias S = ProtocolTestSupport

    static let signer = try! Curve25519.Signing.PrivateKey(rawRepresentation: Data(repeating: 0x42, count: 32))

    // MARK: Bytes

    @Test func appDataCarriesTypePositionFeaturesAndName() {
        #expect(MeshAdvertData(type: .chat, name: "Bob").encoded() == S.hex("81 42 6F 62"))
        // Position: flag 0x10, latitude and longitude as Int32 × 10⁶.
        #expect(
            MeshAdvertData(type: .repeater, latitude: 1.5, longitude: -2, name: "R").encoded()
                == S.hex("92 60 E3 16 00 80 7B E1 FF 52"))
        #expect(MeshAdvertData(type: .sensor, feature1: 0x0102).encoded() == S.hex("24 02 01"))
        // The name fills what is left of 32 bytes: 31 without a position, 23 with one.
        let long = String(repeating: "n", count: 40)
        #expect(MeshAdvertData(type: .chat, name: long).encoded().count == 32)
        #expect(MeshAdvertData(type: .chat, latitude: 0, longitude: 0, name: long).encoded().count == 32)
        #expect(MeshAdvertData(decoding: S.hex("92 60 E3 16 00 80 7B E1 FF 52")) == MeshAdvertData(type: .repeater, latitude: 1.5, longitude: -2, name: "R"))
        // Cut short: the position is left out rather than read past the end.
        #expect(MeshAdvertData(decoding: S.hex("91 01 02")) == MeshAdvertData(type: .chat, name: "\u{1}\u{2}"))
        #expect(MeshAdvertData(decoding: Data()) == MeshAdvertData(type: .none))
    }

    @Test func aCardIsAFloodAdvertPacketInHexAfterTheScheme() throws {
        let advert = try MeshAdvert(signingKey: Self.signer, timestamp: 0x6592_0080, data: MeshAdvertData(type: .chat, name: "Bob"))
        let card = MeshContactCard(advert: advert)
        let packet = card.packet
        // Header 0x11 (flood, advert), path length 0, key, timestamp, signature, app data.
        #expect(packet.prefix(2) == S.hex("11 00"))
        #expect(packet[2..<34] == Self.signer.publicKey.rawRepresentation)
        #expect(packet[34..<38] == S.hex("80 00 92 65"))
        #expect(packet.suffix(4) == S.hex("81 42 6F 62"))
        #expect(packet.count == 2 + 100 + 4)
        #expect(card.uri == "meshcore://" + packet.map { String(format: "%02x", $0) }.joined())
        #expect(try MeshContactCard(uri: card.uri) == card)
        #expect(try MeshContactCard(uri: "  " + card.uri.uppercased() + "\n") == card)
        #expect(advert.isSignatureValid)
        #expect(advert.contact.name == "Bob" && advert.contact.type == .chat && advert.contact.lastAdvert == 0x6592_0080)

        // A card that kept its flood path: two 2-byte hashes (path length 0x42).
        let routed = MeshContactCard(advert: advert, path: S.hex("0A 0B 0C 0D"), pathHashSize: 2)
        #expect(routed.packet.prefix(6) == S.hex("11 42 0A 0B 0C 0D"))
        #expect(try MeshContactCard(packet: routed.packet) == routed)
        // Transport-flood packets carry 4 bytes of transport codes first.
        #expect(try MeshContactCard(packet: S.hex("10 01 02 03 04 00") + advert.payload).advert == advert)
    }

    @Test func tamperedOrMalformedCardsAreCaught() throws {
        let advert = try MeshAdvert(signingKey: Self.signer, timestamp: 100, data: MeshAdvertData(type: .chat, name: "Bob"))
        var forged = advert
        forged.appDataBytes = MeshAdvertData(type: .chat, name: "Eve").encoded()
        #expect(!forged.isSignatureValid)
        var moved = advert
        moved.timestamp += 1
        #expect(!moved.isSignatureValid)
        let packet = MeshContactCard(advert: advert).packet
        // Not an advert (payload type 2), a version bit, a path of hash size 4, truncated.
        #expect(throws: MeshCoreDecodeError.self) { try MeshContactCard(packet: Data([0x09]) + packet.dropFirst()) }
        #expect(throws: MeshCoreDecodeError.self) { try MeshContactCard(packet: Data([0x51]) + packet.dropFirst()) }
        #expect(throws: MeshCoreDecodeError.self) { try MeshContactCard(packet: S.hex("11 C1") + packet.dropFirst(2)) }
        #expect(throws: MeshCoreDecodeError.self) { try MeshContactCard(packet: packet.prefix(60)) }
        #expect(throws: MeshCoreDecodeError.self) { try MeshContactCard(packet: packet + Data(count: 40)) }
        #expect(throws: MeshCoreDecodeError.self) { try MeshContactCard(uri: "meshcore://xyz") }
        #expect(throws: MeshCoreDecodeError.self) { try MeshContactCard(uri: "meshcore://" + String(repeating: "00", count: 2_000)) }
        // Every prefix of a card either parses or throws; none traps.
        for length in 0..<packet.count { _ = try? MeshContactCard(packet: packet.prefix(length)) }
    }

    @Test func shareLinksNameCardsContactsAndChannels() throws {
        let key = Data((0..<32).map { UInt8($0) })
        let hex = key.map { String(format: "%02x", $0) }.joined()
        #expect(try MeshShareLink("meshcore://contact/add?name=Ann+B%C3%A9&public_key=\(hex)&type=2")
            == .contact(name: "Ann Bé", publicKey: key, type: .repeater))
        #expect(try MeshShareLink("meshcore://channel/add?name=%23ops&secret=9cd8fcf22a47333b591d96a2b848b73f")
            == .channel(name: "#ops", secret: MeshChannelSecret.hashtag("#test")))
        let card = MeshContactCard(advert: try MeshAdvert(signingKey: Self.signer, timestamp: 1, data: MeshAdvertData(type: .chat, name: "C")))
        #expect(try MeshShareLink(card.uri) == .card(card))
        for bad in [
            "https://example.com", "meshcore://contact/add?name=A&public_key=00", "meshcore://contact/add?public_key=\(hex)",
            "meshcore://contact/add?name=A&public_key=\(hex)&type=9", "meshcore://channel/add?name=A&secret=zz",
            "meshcore://" + String(repeating: "a", count: 2_000),
        ] {
            #expect(throws: MeshCoreDecodeError.self, "\(bad.prefix(60))") { try MeshShareLink(bad) }
        }
    }

    // MARK: The emulated radio

    @Test func theRadiosOwnCardImportsIntoAnotherRadio() async throws {
        let world = await EmulatorSession()
        try await world.start()
        let session = world.session
        let network = world.mesh.network
        let card = try await world.run {
            try await session.setCoordinates(latitude: 47.5, longitude: 8.25)
            try await session.updateOtherParameters { $0.sharesLocationInAdverts = true }
            return try await session.ownCard()
        }
        #expect(card.advert.isSignatureValid)
        #expect(card.advert.publicKey == world.mesh.key("Base"))
        #expect(card.advert.data == MeshAdvertData(type: .chat, latitude: 47.5, longitude: 8.25, name: "Base"))
        #expect(card.path.isEmpty)

        let other = await world.mesh.sim { network.addRadio(name: "Other", hops: 3) }
        let replies = await world.mesh.sim {
            other.receive(try! MeshCoreCommand.importContact(packet: card.packet).encoded())
            return other.drainOutputs()
        }
        #expect(replies == [Data([0x00])])
        await world.mesh.time.settle()
        let stored = await world.mesh.sim { other.contact(named: "Base") }
        #expect(stored?.publicKey == card.advert.publicKey)
        #expect(stored?.latitude == 47.5)
        // A forged card (name changed after signing) is answered OK, then dropped unheard.
        var forged = card
        forged.advert.appDataBytes = MeshAdvertData(type: .chat, name: "Mallory").encoded()
        forged.advert.timestamp += 10
        _ = await world.mesh.sim {
            other.receive(try! MeshCoreCommand.importContact(packet: forged.packet).encoded())
            return other.drainOutputs()
        }
        await world.mesh.time.settle()
        #expect(await world.mesh.sim { other.contact(named: "Mallory") } == nil)
        // The session refuses it before it reaches the radio.
        let refused = forged
        await #expect(throws: MeshCoreError.self) { try await world.run { try await session.importContact(refused) } }
        // A packet that is not an advert: ERR 6.
        let notAnAdvert = await world.mesh.sim {
            other.receive(Data([0x12, 0x09]) + card.packet.dropFirst())
            return other.drainOutputs()
        }
        #expect(notAnAdvert == [Data([0x01, 0x06])])
    }

    @Test func heardAdvertsExportWithTheirPathAndLeaveAnAdvertPath() async throws {
        let world = await EmulatorSession()
        try await world.start()
        let session = world.session
        let network = world.mesh.network
        await world.mesh.sim { network.node(named: "Far")?.advert(flood: true) }
        await world.mesh.time.advance(.seconds(10))
        let far = world.mesh.key("Far")
        let (card, path, unknown) = try await world.run {
            (try await session.exportContact(publicKey: far), try await session.advertPath(publicKey: far),
             try await session.advertPath(publicKey: world.mesh.key("Alice")))
        }
        #expect(card.advert.publicKey == far && card.advert.isSignatureValid)
        // Far is 4 hops away: the flood came over 3 repeaters.
        #expect(card.path.count == 3)
        #expect(path?.hopCount == 3)
        // Received by the radio's clock, within the 10 s the test let pass.
        let now = await world.mesh.sim { world.mesh.radio.clockEpoch }
        #expect(path.map { (now - 10...now).contains($0.receivedAt) } == true)
        #expect(unknown == nil)
        // Alice was added by hand and never heard: nothing to export.
        await #expect { try await world.run { try await session.exportContact(publicKey: world.mesh.key("Alice")) } } throws: {
            EmulatorSession.refusal($0) == .notFound
        }
        // Sharing Far's advert sends it zero-hop: a radio next door learns Far.
        let neighbour = await world.mesh.sim { network.addRadio(name: "Next", hops: 1) }
        try await world.run { try await session.shareContact(publicKey: far) }
        await world.mesh.time.advance(.seconds(5))
        #expect(await world.mesh.sim { neighbour.contact(named: "Far") } != nil)
    }

    @Test func manualAddFollowsTheAutoAddRulesAndAFullTableOverwritesTheOldest() async throws {
        var configuration = CompanionRadio.Configuration()
        configuration.manualAddContacts = true
        configuration.autoAdd = MeshAutoAddConfiguration(options: [.repeater], maxHops: 0)
        configuration.maxContacts = 4
        let world = await EmulatorSession(configuration: configuration)
        try await world.start()
        let network = world.mesh.network
        await world.mesh.sim {
            network.addNode(name: "Chatty", hops: 1).advert()
            network.addNode(name: "Relay", hops: 2, type: .repeater).advert()
        }
        await world.mesh.time.advance(.seconds(10))
        let radio = world.mesh.radio
        #expect(await world.mesh.sim { radio.contact(named: "Relay") } != nil)
        #expect(await world.mesh.sim { radio.contact(named: "Chatty") } == nil)
        await world.events.until { $0.contains { if case .newAdvert(let contact) = $0 { contact.name == "Chatty" } else { false } } }

        // The table (4) is full now; with overwrite on, a new repeater replaces the oldest.
        let session = world.session
        try await world.run {
            try await session.setAutoAddConfiguration(MeshAutoAddConfiguration(options: [.repeater, .overwriteOldest], maxHops: 0))
        }
        let oldest = await world.mesh.sim { radio.contacts.min { $0.lastModified < $1.lastModified }!.publicKey }
        await world.mesh.sim { network.addNode(name: "Relay2", hops: 1, type: .repeater).advert() }
        await world.mesh.time.advance(.seconds(10))
        #expect(await world.mesh.sim { radio.contact(named: "Relay2") } != nil)
        #expect(await world.mesh.sim { radio.contacts.count } == 4)
        await world.events.until { $0.contains(.contactDeleted(publicKey: oldest)) }

        // A hop limit of 2 admits only adverts that came over at most one repeater.
        try await world.run {
            try await session.setAutoAddConfiguration(MeshAutoAddConfiguration(options: [.repeater, .overwriteOldest], maxHops: 2))
        }
        await world.mesh.sim {
            network.addNode(name: "Distant", hops: 3, type: .repeater).advert()
            network.addNode(name: "Close", hops: 2, type: .repeater).advert()
        }
        await world.mesh.time.advance(.seconds(10))
        #expect(await world.mesh.sim { radio.contact(named: "Distant") } == nil)
        #expect(await world.mesh.sim { radio.contact(named: "Close") } != nil)
    }

    @Test func aReplayedAdvertChangesNothingAndANewerOneUpdatesTheContact() async throws {
        let mesh = await EmulatorMesh()
        let signer = mesh.network.identity(for: "Alice")
        let key = mesh.key("Alice")
        let old = try MeshAdvert(signingKey: signer, timestamp: EmulatorMesh.epoch - 100, data: MeshAdvertData(type: .chat, name: "Old Alice"))
        let new = try MeshAdvert(signingKey: signer, timestamp: EmulatorMesh.epoch + 100, data: MeshAdvertData(type: .chat, name: "Alice 2"))
        await mesh.sim { mesh.radio.receiveAdvert(old, path: Data([1])) }
        #expect(await mesh.sim { mesh.radio.contacts.first { $0.publicKey == key }?.name } == "Alice")
        #expect(try await mesh.frames(.getAdvertPath(publicKey: key)) == [.error(.notFound)])
        #expect(try await mesh.frames(.exportContact(publicKey: key)) == [.error(.notFound)])
        await mesh.sim { mesh.radio.receiveAdvert(new, path: Data([1, 2])) }
        #expect(await mesh.sim { mesh.radio.contacts.first { $0.publicKey == key }?.name } == "Alice 2")
        _ = try await mesh.drain()
        #expect(try await mesh.frames(.exportContact(publicKey: key)) == [.exportedContact(packet: MeshContactCard(advert: new, path: Data([1, 2])).packet)])
        // Replaying the older one again leaves the card and the path as they are.
        await mesh.sim { mesh.radio.receiveAdvert(old, path: Data()) }
        #expect(try await mesh.frames(.exportContact(publicKey: key)) == [.exportedContact(packet: MeshContactCard(advert: new, path: Data([1, 2])).packet)])
        guard case .advertPath(let path)? = try await mesh.frames(.getAdvertPath(publicKey: key)).first else {
            Issue.record("no advert path"); return
        }
        #expect(path.path == Data([1, 2]))
        // An advert without a name is dropped.
        let nameless = try MeshAdvert(signingKey: signer, timestamp: EmulatorMesh.epoch + 200, data: MeshAdvertData(type: .chat))
        await mesh.sim { mesh.radio.receiveAdvert(nameless, path: Data()) }
        #expect(await mesh.sim { mesh.radio.contacts.first { $0.publicKey == key }?.lastAdvert } == EmulatorMesh.epoch + 100)
    }

    @Test func aNodeAddedByHandFromANewAdvertHasNoCardToExport() async throws {
        var configuration = CompanionRadio.Configuration()
        configuration.manualAddContacts = true
        let world = await EmulatorSession(configuration: configuration, introduce: false)
        try await world.start()
        let network = world.mesh.network
        await world.mesh.sim { network.node(named: "Alice")?.advert() }
        await world.mesh.time.advance(.seconds(5))
        let heard = await world.events.items.compactMap { event -> MeshContact? in
            if case .newAdvert(let contact) = event { contact } else { nil }
        }
        guard let alice = heard.first(where: { $0.name == "Alice" }) else { Issue.record("no NEW_ADVERT for Alice"); return }
        let session = world.session
        try await world.run { try await session.addOrUpdateContact(alice) }
        await #expect { try await world.run { try await session.exportContact(publicKey: alice.publicKey) } } throws: {
            EmulatorSession.refusal($0) == .notFound
        }
        // Its advert path was kept all the same (the table holds any node's latest advert).
        #expect(try await world.run { try await session.advertPath(publicKey: alice.publicKey) } != nil)
    }

    @Test func aCardWithTwoByteHopHashesKeepsItsHashSize() async throws {
        let mesh = await EmulatorMesh()
        let signer = mesh.network.identity(for: "Zed")
        let advert = try MeshAdvert(signingKey: signer, timestamp: EmulatorMesh.epoch + 5, data: MeshAdvertData(type: .chat, name: "Zed"))
        let card = MeshContactCard(advert: advert, path: S.hex("0A 0B 0C 0D"), pathHashSize: 2)
        #expect(try await mesh.frames(.importContact(packet: card.packet)) == [.ok(value: nil)])
        try await mesh.advance(.milliseconds(1))
        guard case .advertPath(let path)? = try await mesh.frames(.getAdvertPath(publicKey: advert.publicKey)).first(where: { !$0.isPush }) else {
            Issue.record("no advert path"); return
        }
        #expect(path.hashSize == 2 && path.hopCount == 2)
        #expect(try await mesh.frames(.exportContact(publicKey: advert.publicKey)) == [.exportedContact(packet: card.packet)])
        // A header that is not an advert's is refused; an advert too short to parse is taken and dropped.
        #expect(await mesh.sendRaw(Data([0x12, 0x09]) + card.packet.dropFirst()) == [Data([0x01, 0x06])])
        #expect(await mesh.sendRaw(Data([0x12]) + card.packet.prefix(99)) == [Data([0x00])])
    }

    @Test func aChannelLinkTakesTheFirstFreeSlot() async throws {
        let world = await EmulatorSession()
        try await world.start()
        let session = world.session
        let channel = try await world.run {
            try await session.add(try MeshShareLink("meshcore://channel/add?name=%23ops&secret=9cd8fcf22a47333b591d96a2b848b73f"))
            return try await session.channel(1)
        }
        #expect(channel == ChannelInfo(index: 1, name: "#ops", secret: MeshChannelSecret.hashtag("#test")))
    }
}
