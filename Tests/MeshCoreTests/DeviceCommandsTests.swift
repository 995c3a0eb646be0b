import Crypto
import Foundation
import Testing
import TetherSimulator

@testable import MeshCore
@testable import MeshCoreEmulator

/// The device commands through a session and the emulated radio: settings, statistics,
/// signing and keys, reboot and factory reset.
@Suite struct DeviceCommandsTests {
    typealias S = ProtocolTestSupport

    @Test func settingsAreWrittenReadBackAndKeptByTheRadio() async throws {
        let world = await EmulatorSession()
        try await world.start()
        let session = world.session
        try await world.run {
            try await session.setTuningParameters(MeshTuningParameters(receiveDelayBase: 2.5, airtimeFactor: 1.5))
            #expect(try await session.tuningParameters() == MeshTuningParameters(receiveDelayBase: 2.5, airtimeFactor: 1.5))

            let written = try await session.updateOtherParameters {
                $0.manualAddContacts = true
                $0.telemetryModes.location = .allowAll
            }
            #expect(written.manualAddContacts && written.telemetryModes.location == .allowAll)
            #expect(written.telemetryModes.base == .deny && !written.sharesLocationInAdverts)
            let info = try await session.refreshSelfInfo()
            #expect(info.manualAddContacts && MeshTelemetryModes(rawValue: info.telemetryModes).location == .allowAll)

            #expect(try await session.customVariables() == [MeshCustomVariable(name: "gps", value: "0")])
            try await session.setCustomVariable("gps", to: "1")
            #expect(try await session.customVariables() == [MeshCustomVariable(name: "gps", value: "1")])
            await #expect { try await session.setCustomVariable("sonar", to: "1") } throws: {
                EmulatorSession.refusal($0) == .illegalArgument
            }

            let rules = MeshAutoAddConfiguration(options: [.repeater, .overwriteOldest], maxHops: 3)
            try await session.setAutoAddConfiguration(rules)
            #expect(try await session.autoAddConfiguration() == rules)
            #expect(try await session.allowedRepeatFrequencies() == [433_000...433_000, 869_495...869_495, 918_000...918_000])

            try await session.setPathHashMode(2)
            #expect(try await session.deviceQuery().pathHashMode == 2)
            // Refused before it reaches the radio (the radio's ERR 6 is checked with raw frames below).
            await #expect { try await session.setPathHashMode(3) } throws: {
                if case MeshCoreError.invalidCommand = $0 { true } else { false }
            }

            try await session.setDevicePin(654_321)
            #expect(try await session.deviceQuery().blePin == 654_321)
            await #expect { try await session.setDevicePin(12_345) } throws: {
                if case MeshCoreError.invalidCommand = $0 { true } else { false }
            }

            #expect(try await session.defaultFloodScope() == nil)
            try await session.setDefaultFloodScope(MeshFloodScope(region: "#europe"))
            #expect(try await session.defaultFloodScope() == MeshFloodScope(region: "europe"))
            try await session.setFloodScope(.region("test"))
            try await session.setDefaultFloodScope(nil)
            #expect(try await session.defaultFloodScope() == nil)
        }
        let radio = world.mesh.radio
        #expect(await world.mesh.sim { radio.floodScope } == .key(MeshFloodScope.key(forRegion: "test")))
        #expect(await world.mesh.sim { radio.configuration.tuning.receiveDelayBase } == 2.5)
    }

    @Test func theRadioRefusesWhatTheFirmwareRefuses() async {
        let mesh = await EmulatorMesh()
        // Path hash mode 3, stats kind 3, a custom variable without ':', a PIN of five digits.
        #expect(await mesh.sendRaw(S.hex("3D 00 03")) == [Data([0x01, 0x06])])
        #expect(await mesh.sendRaw(S.hex("38 03")) == [Data([0x01, 0x06])])
        #expect(await mesh.sendRaw(S.hex("29 67 70 73")) == [Data([0x01, 0x06])])
        #expect(await mesh.sendRaw(S.hex("25 39 30 00 00")) == [Data([0x01, 0x06])])
        // SET_PATH_HASH_MODE with a second byte other than 0, SET_FLOOD_SCOPE_KEY mode 2.
        #expect(await mesh.sendRaw(S.hex("3D 01 01")) == [Data([0x01, 0x01])])
        #expect(await mesh.sendRaw(S.hex("36 02")) == [Data([0x01, 0x01])])
        // A default scope whose name is empty or fills all 31 bytes.
        #expect(await mesh.sendRaw(S.hex("3F " + S.zeros(47))) == [Data([0x01, 0x06])])
        #expect(await mesh.sendRaw(S.hex("3F " + String(repeating: "41 ", count: 31) + S.zeros(16))) == [Data([0x01, 0x06])])
        // SIGN_DATA and SIGN_FINISH before SIGN_START.
        #expect(await mesh.sendRaw(S.hex("22 01")) == [Data([0x01, 0x04])])
        #expect(await mesh.sendRaw(S.hex("23")) == [Data([0x01, 0x04])])
        // FACTORY_RESET without its confirmation.
        #expect(await mesh.sendRaw(S.hex("33 72 65")) == [Data([0x01, 0x01])])
        #expect(await mesh.sim { mesh.radio.contacts.count } == 3)
    }

    @Test func aShortSetOtherParamsLeavesTheLaterSettingsAlone() async throws {
        var configuration = CompanionRadio.Configuration()
        configuration.multiAcks = 2
        configuration.sharesLocationInAdverts = true
        let mesh = await EmulatorMesh(configuration: configuration)
        #expect(await mesh.sendRaw(S.hex("26 01 15")) == [Data([0x00])])
        let parameters = await mesh.sim { mesh.radio.otherParameters }
        #expect(parameters == MeshOtherParameters(
            manualAddContacts: true, telemetryModes: MeshTelemetryModes(rawValue: 0x15), sharesLocationInAdverts: true, multiAcks: 2))
    }

    @Test func statsCountTheRadiosTrafficAndUptime() async throws {
        let world = await EmulatorSession()
        try await world.start()
        let session = world.session
        try await world.run {
            try await session.sendSelfAdvert(flood: true)
            try await session.sendChannelMessage("hello", channel: 0)
        }
        await world.mesh.time.advance(.seconds(90))
        let (core, packets, radio) = try await world.run {
            (try await session.stats(.core), try await session.stats(.packets), try await session.stats(.radio))
        }
        guard case .core(let coreStats) = core, case .packets(let counters) = packets, case .radio(let radioStats) = radio else {
            Issue.record("wrong kinds: \(core), \(packets), \(radio)")
            return
        }
        #expect(coreStats.uptimeSeconds >= 90)
        #expect(coreStats.batteryMillivolts == CompanionRadio.Configuration().batteryMillivolts)
        #expect(counters.sent == 2 && counters.sentFlood == 2 && counters.sentDirect == 0)
        #expect(radioStats.transmitAirtimeSeconds == 0)
        // Nothing heard yet: no signal figures.
        #expect(radioStats.lastRSSI == 0 && radioStats.lastSNR == 0)
        // A flooded channel post from a node two hops away: the radio's last SNR is its SNR.
        await world.mesh.sim { world.mesh.network.node(named: "Echo")?.postOnChannel("hi") }
        await world.mesh.time.advance(.seconds(5))
        let heard = try await world.run { try await session.stats(.radio) }
        guard case .radio(let after) = heard else { Issue.record("not radio stats: \(heard)"); return }
        #expect(after.lastSNR == 9 && after.lastRSSI == -82)
        let counted = try await world.run { try await session.stats(.packets) }
        guard case .packets(let packetsAfter) = counted else { Issue.record("not packet stats: \(counted)"); return }
        #expect(packetsAfter.received == 1 && packetsAfter.receivedFlood == 1)
    }

    @Test func signaturesFromTheRadioVerifyWithItsPublicKey() async throws {
        let world = await EmulatorSession()
        try await world.start()
        let session = world.session
        let data = Data((0..<1_000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        let (signature, key) = try await world.run {
            (try await session.sign(data, chunkSize: 128), try await session.refreshSelfInfo().publicKey)
        }
        #expect(signature.count == 64)
        #expect(MeshCoreSession.verify(signature: signature, of: data, publicKey: key))
        #expect(!MeshCoreSession.verify(signature: signature, of: data + Data([0]), publicKey: key))
        // Ten signing frames: SIGN_START, eight chunks (7 × 128 + 104), SIGN_FINISH.
        let codes = await world.mock.sentData.compactMap(\.first).filter { (0x21...0x23).contains($0) }
        #expect(codes == [0x21] + Array(repeating: 0x22, count: 8) + [0x23])
        await #expect { try await world.run { try await session.sign(Data(count: 8_193)) } } throws: {
            if case MeshCoreError.invalidCommand = $0 { true } else { false }
        }
    }

    @Test func thePrivateKeyExportsAndOnlyTheSameIdentityImports() async throws {
        let world = await EmulatorSession()
        try await world.start()
        let session = world.session
        let key = try await world.run { try await session.exportPrivateKey() }
        #expect(key.count == 64)
        try await world.run { try await session.importPrivateKey(key) }
        // The emulator keeps each radio's identity (the mesh knows it by its key): another key
        // is refused. Firmware would take it and become that node.
        let other = Curve25519.Signing.PrivateKey()
        await #expect { try await world.run { try await session.importPrivateKey(other.rawRepresentation + other.publicKey.rawRepresentation) } } throws: {
            EmulatorSession.refusal($0) == .illegalArgument
        }

        var closed = CompanionRadio.Configuration()
        closed.privateKeyExport = false
        let locked = await EmulatorSession(configuration: closed)
        try await locked.start()
        let lockedSession = locked.session
        await #expect { try await locked.run { try await lockedSession.exportPrivateKey() } } throws: {
            if case MeshCoreError.disabled = $0 { true } else { false }
        }
    }

    @Test func rebootKeepsSettingsAndContactsAndLosesWhatLivesInMemory() async throws {
        let world = await EmulatorSession()
        try await world.start()
        let session = world.session
        let radio = world.mesh.radio
        try await world.run {
            try await session.setTxPower(10)
            try await session.setFloodScope(.unscoped)
            _ = try await session.sendMessage(to: world.mesh.key("Echo"), text: "ping")
        }
        await world.mesh.time.advance(.seconds(30))
        #expect(await world.mesh.sim { radio.queuedMessageCount } == 1)
        try await world.run { try await session.reboot() }
        await world.mesh.time.settle()
        #expect(await world.mesh.sim { radio.counters.reboots } == 1)
        #expect(await world.mesh.sim { radio.queuedMessageCount } == 0)
        #expect(await world.mesh.sim { radio.floodScope } == .useDefault)
        let info = try await world.run { try await session.start() }
        #expect(info.txPower == 10)
        #expect(await world.mesh.sim { radio.contacts.count } == 3)
    }

    @Test func factoryResetErasesContactsChannelsAndSettingsButNotTheIdentity() async throws {
        let world = await EmulatorSession()
        try await world.start()
        let session = world.session
        let radio = world.mesh.radio
        let before = try await world.run {
            try await session.setAdvertName("Renamed")
            try await session.setTxPower(5)
            try await session.setHashtagChannel(1, name: "ops")
            return try await session.refreshSelfInfo().publicKey
        }
        try await world.run { try await session.factoryReset() }
        await world.mesh.time.settle()
        let info = try await world.run { try await session.start() }
        #expect(info.name == "Base" && info.txPower == CompanionRadio.Configuration().txPower)
        #expect(info.publicKey == before)
        #expect(await world.mesh.sim { radio.contacts.isEmpty })
        let channel = try await world.run { try await session.channel(1) }
        #expect(channel.name.isEmpty)
        #expect(try await world.run { try await session.channel(0) }.name == MeshPublicChannel.name)
    }

    @Test func channelDatagramsReachTheRadiosThatHaveTheChannel() async throws {
        let world = await EmulatorSession()
        try await world.start()
        let network = world.mesh.network
        let other = await world.mesh.sim { network.addRadio(name: "Other", hops: 2) }
        let session = world.session
        try await world.run {
            try await session.setHashtagChannel(3, name: "#telemetry")
            try await session.sendChannelData(MeshChannelData(channelIndex: 3, dataType: 0xFF01, payload: S.hex("01 02 03")))
        }
        // The other radio has no such channel yet: nothing queued. With it, the next arrives.
        await world.mesh.time.advance(.seconds(5))
        #expect(await world.mesh.sim { other.queuedMessageCount } == 0)
        await world.mesh.sim {
            other.receive(try! MeshCoreCommand.setChannel(ChannelInfo(index: 1, name: "#telemetry", secret: MeshChannelSecret.hashtag("#telemetry"))).encoded())
            _ = other.drainOutputs()
        }
        try await world.run {
            try await session.sendChannelData(MeshChannelData(channelIndex: 3, dataType: 0xFF01, payload: S.hex("04 05")))
        }
        await world.mesh.time.advance(.seconds(5))
        let frames = await world.mesh.sim {
            other.receive(Data([0x0A]))
            return other.drainOutputs()
        }
        let received = try frames.map { try MeshCoreFrame(decoding: $0) }.compactMap { frame -> MeshChannelData? in
            if case .channelData(let datagram) = frame { datagram } else { nil }
        }
        #expect(received.map(\.payload) == [S.hex("04 05")])
        #expect(received.first?.channelIndex == 1 && received.first?.dataType == 0xFF01 && received.first?.receivedPathLength == 1)
        // Refused: a channel beyond the radio's (ERR 2, before anything else), 166 bytes (ERR 3),
        // type 0 and a bad path (ERR 6). A cleared slot sends, with a zero key.
        #expect(await world.mesh.sim { other.receive(S.hex("3E 09 FF 00 00")); return other.drainOutputs() } == [Data([0x01, 0x02])])
        #expect(await world.mesh.sim { other.receive(S.hex("3E 05 FF FF FF 01")); return other.drainOutputs() } == [Data([0x00])])
        #expect(await world.mesh.sim { other.receive(S.hex("3E 00 FF FF FF") + Data(count: 166)); return other.drainOutputs() } == [Data([0x01, 0x03])])
        #expect(await world.mesh.sim { other.receive(S.hex("3E 00 FF 00 00 01")); return other.drainOutputs() } == [Data([0x01, 0x06])])
        #expect(await world.mesh.sim { other.receive(S.hex("3E 00 C1 01 FF FF")); return other.drainOutputs() } == [Data([0x01, 0x06])])
        #expect(await world.mesh.sim { other.receive(S.hex("3E 00")); return other.drainOutputs() } == [Data([0x01, 0x06])])
    }

    @Test func rawDataReachesTheRadioAtTheRoutesEndAndPacketsAreChecked() async throws {
        let world = await EmulatorSession()
        try await world.start()
        let network = world.mesh.network
        // Base is 1 hop out, Far radio 3: a route of one repeater between them.
        let far = await world.mesh.sim { network.addRadio(name: "Far radio", hops: 3) }
        await world.mesh.sim { far.appConnected() }
        let session = world.session
        try await world.run { try await session.sendRawData(S.hex("C0 FF EE 00 01"), path: S.hex("01 02")) }
        await world.mesh.time.advance(.seconds(5))
        let pushes = await world.mesh.sim { far.drainOutputs() }.compactMap { try? MeshCoreFrame(decoding: $0) }
        #expect(pushes.contains { if case .rawData(_, _, let payload) = $0 { payload == S.hex("C0 FF EE 00 01") } else { false } })
        // Raw data cannot flood, and needs 4 bytes; a raw packet must parse.
        #expect(await world.mesh.sim { far.receive(S.hex("19 80 01 02 03 04")); return far.drainOutputs() } == [Data([0x01, 0x01])])
        #expect(await world.mesh.sim { far.receive(S.hex("19 00 01 02 03")); return far.drainOutputs() } == [Data([0x01, 0x01])])
        #expect(await world.mesh.sim { far.receive(S.hex("41 00 11 00 AA")); return far.drainOutputs() } == [Data([0x00])])
        #expect(await world.mesh.sim { far.receive(S.hex("41 00 51 00 AA")); return far.drainOutputs() } == [Data([0x01, 0x06])])
        // A packet without a payload does not parse either.
        #expect(await world.mesh.sim { far.receive(S.hex("41 00 11 00")); return far.drainOutputs() } == [Data([0x01, 0x06])])
        #expect(await world.mesh.sim { far.receive(S.hex("41 00 11 C1 AA")); return far.drainOutputs() } == [Data([0x01, 0x06])])
        // RUN_CLI_COMMAND exists from protocol 14: v13 refuses it, v14 answers.
        await #expect { try await world.run { try await session.runLocalCommand("ver") } } throws: {
            EmulatorSession.refusal($0) == .unsupportedCommand
        }
        var newer = CompanionRadio.Configuration()
        newer.firmwareVersionCode = 14
        let v14 = await EmulatorSession(configuration: newer)
        try await v14.start()
        let v14Session = v14.session
        #expect(try await v14.run { try await v14Session.runLocalCommand("get name") } == "> Base")
    }
}
