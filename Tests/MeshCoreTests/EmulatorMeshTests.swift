import Foundation
import Testing
import TetherTesting

@testable import MeshCore
@testable import TetherCore
@testable import TetherSimulator
@testable import MeshCoreEmulator

/// The radio inside the simulated mesh: the offline queue, acknowledgements, channels, adverts.
@Suite struct EmulatorMeshTests {
    @Test func sendConfirmedArrivesAfterTheRoundTrip() async throws {
        let mesh = await EmulatorMesh()
        guard case .sent(let sent)? = try await mesh.frames(mesh.directMessage(to: "Echo", "ping")).first else {
            Issue.record("no SENT")
            return
        }
        // Echo is 2 hops away: 800 ms each way.
        try await mesh.advance(.milliseconds(1_500))
        #expect(try await mesh.drain().isEmpty)
        try await mesh.advance(.milliseconds(200))
        let pushes = try await mesh.drain()
        #expect(pushes.first == .sendConfirmed(SendConfirmation(ack: sent.expectedAck, roundTrip: 1_600)))
        #expect(pushes.dropFirst().first == .pathUpdated(publicKey: mesh.key("Echo")))
        #expect(await mesh.sim { mesh.network.node(named: "Echo")?.receivedDirect.map(\.text) } == ["ping"])
        // The path came back with the ack: the next message is not flooded.
        guard case .sent(let second)? = try await mesh.frames(mesh.directMessage(to: "Echo", "again", timestamp: 5)).first else {
            Issue.record("no SENT")
            return
        }
        #expect(!second.isFlood)
        #expect(await mesh.sim { mesh.radio.counters.confirmations } == 1)
    }

    @Test func echoBotRepliesAndTheReplyIsQueued() async throws {
        let mesh = await EmulatorMesh()
        _ = try await mesh.send(.deviceQuery(protocolVersion: 3))
        _ = try await mesh.send(mesh.directMessage(to: "Echo", "marco"))
        try await mesh.advance(.seconds(4))
        let pushes = try await mesh.drain()
        #expect(pushes.contains(.messageWaiting))
        let replies = try await mesh.frames(.syncNextMessage)
        guard case .contactMessage(let message)? = replies.first else {
            Issue.record("expected a message, got \(replies)")
            return
        }
        #expect(message.isV3)
        #expect(message.text == "echo: marco")
        #expect(message.senderPrefix == Data(mesh.key("Echo").prefix(6)))
        #expect(message.pathLength == 1)
        #expect(message.snr == 9)
        #expect(try await mesh.frames(.syncNextMessage) == [.noMoreMessages])
    }

    @Test func offlineNodesNeitherReceiveNorAcknowledge() async throws {
        let mesh = await EmulatorMesh()
        await mesh.sim { mesh.network.node(named: "Alice")?.isOnline = false }
        _ = try await mesh.send(mesh.directMessage(to: "Alice", "are you there?"))
        try await mesh.advance(.seconds(5))
        #expect(try await mesh.drain().isEmpty)
        #expect(await mesh.sim { mesh.network.node(named: "Alice")?.receivedDirect.count } == 0)
    }

    @Test func legacyAndV3MessageFormatsFollowTheProtocolVersion() async throws {
        let mesh = await EmulatorMesh()
        await mesh.sim {
            mesh.network.node(named: "Alice")?.sendDirect("one", to: "Base")
            mesh.network.node(named: "Alice")?.postOnChannel("two")
        }
        try await mesh.advance(.seconds(1))
        _ = try await mesh.drain()
        let legacy = try await mesh.send(.syncNextMessage)
        #expect(legacy.first?.first == 0x07)
        #expect(try MeshCoreFrame(decoding: legacy[0]) == .contactMessage(ContactMessage(
            senderPrefix: Data(mesh.key("Alice").prefix(6)), pathLength: 0, timestamp: EmulatorMesh.epoch, text: "one", isV3: false)))
        _ = try await mesh.send(.deviceQuery(protocolVersion: 3))
        let v3 = try await mesh.send(.syncNextMessage)
        #expect(v3.first?.first == 0x11)
        #expect(try MeshCoreFrame(decoding: v3[0]) == .channelMessage(ChannelMessage(
            channelIndex: 0, pathLength: 0, timestamp: EmulatorMesh.epoch, text: "Alice: two", snr: 12, isV3: true)))
    }

    @Test func theQueueHolds16AndDropsTheOldest() async throws {
        let mesh = await EmulatorMesh()
        await mesh.sim {
            for index in 1...20 { mesh.network.node(named: "Alice")?.sendDirect("m\(index)", to: "Base") }
        }
        try await mesh.advance(.seconds(1))
        let pushes = try await mesh.drain()
        #expect(pushes == Array(repeating: .messageWaiting, count: 20))
        let state = await mesh.sim { (mesh.radio.queuedMessageTexts, mesh.radio.counters) }
        #expect(state.0 == (5...20).map { "m\($0)" })
        #expect(state.1.messagesDropped == 4)
        var texts: [String] = []
        while case .contactMessage(let message)? = try await mesh.frames(.syncNextMessage).first { texts.append(message.text) }
        #expect(texts == (5...20).map { "m\($0)" })
    }

    @Test func noMessageWaitingWithoutAnApp() async throws {
        let mesh = await EmulatorMesh()
        await mesh.sim {
            mesh.radio.appDisconnected()
            mesh.network.node(named: "Alice")?.sendDirect("while away", to: "Base")
        }
        try await mesh.advance(.seconds(1))
        #expect(try await mesh.drain().isEmpty)
        await mesh.sim { mesh.radio.appConnected() }
        #expect(try await mesh.frames(.syncNextMessage).first?.code == 0x07)
    }

    @Test func messagesFromUnknownSendersAreIgnored() async throws {
        let mesh = await EmulatorMesh(introduce: false)
        await mesh.sim { mesh.network.node(named: "Alice")?.sendDirect("hello?", to: "Base") }
        try await mesh.advance(.seconds(1))
        #expect(try await mesh.drain().isEmpty)
        #expect(await mesh.sim { mesh.radio.queuedMessageCount } == 0)
    }

    @Test func anUndeliveredSyncReplyReturnsToTheFrontOfTheQueue() async throws {
        let mesh = await EmulatorMesh()
        await mesh.sim {
            mesh.network.node(named: "Alice")?.sendDirect("first", to: "Base")
            mesh.network.node(named: "Alice")?.sendDirect("second", to: "Base")
        }
        try await mesh.advance(.seconds(1))
        _ = try await mesh.drain()
        let sync = try MeshCoreCommand.syncNextMessage.encoded()
        let state = await mesh.sim { () -> ([String], Int) in
            mesh.radio.receive(sync)
            let output = mesh.radio.nextOutput()
            #expect(output?.frame.first == 0x07)
            // The link drops before the reply reached the app.
            mesh.radio.appDisconnected()
            return (mesh.radio.queuedMessageTexts, mesh.radio.counters.messagesRequeued)
        }
        #expect(state.0 == ["first", "second"])
        #expect(state.1 == 1)
        // A reply confirmed by the app's next command stays delivered.
        let after = await mesh.sim { () -> [String] in
            mesh.radio.appConnected()
            mesh.radio.receive(sync)
            _ = mesh.radio.nextOutput()
            mesh.radio.receive(sync)
            _ = mesh.radio.drainOutputs()
            mesh.radio.appDisconnected()
            return mesh.radio.queuedMessageTexts
        }
        #expect(after.isEmpty)
    }

    @Test func channelMessagesTravelBetweenTwoRadios() async throws {
        let mesh = await EmulatorMesh()
        let other = await mesh.sim { () -> CompanionRadio in
            let radio = mesh.network.addRadio(name: "Peak", hops: 2)
            radio.appConnected()
            return radio
        }
        #expect(try await mesh.send(.sendChannelTextMessage(channel: 0, timestamp: 1_767_225_999, text: "summit at noon")) == [Data([0x00])])
        try await mesh.advance(.seconds(1))
        let frames = await mesh.sim { () -> [Data] in
            var frames = other.drainOutputs()
            other.receive(try! MeshCoreCommand.deviceQuery(protocolVersion: 3).encoded())
            other.receive(try! MeshCoreCommand.syncNextMessage.encoded())
            frames += other.drainOutputs()
            return frames
        }
        let decoded = try frames.map { try MeshCoreFrame(decoding: $0) }
        #expect(decoded.first == .messageWaiting)
        #expect(decoded.last == .channelMessage(ChannelMessage(
            channelIndex: 0, pathLength: 1, timestamp: 1_767_225_999, text: "Base: summit at noon", snr: 9, isV3: true)))
        #expect(try await mesh.drain().isEmpty, "the sender does not hear itself")
    }

    @Test func directMessagesTravelBetweenTwoRadios() async throws {
        let mesh = await EmulatorMesh()
        let other = await mesh.sim { () -> CompanionRadio in
            let radio = mesh.network.addRadio(name: "Peak", hops: 1)
            mesh.network.introduceAll(to: radio)
            mesh.network.introduceAll(to: mesh.radio)
            radio.appConnected()
            return radio
        }
        guard case .sent(let sent)? = try await mesh.frames(mesh.directMessage(to: "Peak", "radio to radio")).first else {
            Issue.record("no SENT")
            return
        }
        try await mesh.advance(.seconds(1))
        #expect(try await mesh.drain().first == .sendConfirmed(SendConfirmation(ack: sent.expectedAck, roundTrip: 800)))
        let received = await mesh.sim { () -> [Data] in
            other.receive(try! MeshCoreCommand.syncNextMessage.encoded())
            return other.drainOutputs()
        }
        #expect(received.last.map { try? MeshCoreFrame(decoding: $0) } == .contactMessage(ContactMessage(
            senderPrefix: Data(mesh.key("Base").prefix(6)), pathLength: 0, timestamp: EmulatorMesh.epoch,
            text: "radio to radio", isV3: false)))
    }

    @Test func selfAdvertReachesNeighboursOrTheWholeMesh() async throws {
        let mesh = await EmulatorMesh()
        let (near, far) = await mesh.sim { () -> (CompanionRadio, CompanionRadio) in
            let near = mesh.network.addRadio(name: "Near", hops: 1)
            let far = mesh.network.addRadio(name: "Distant", hops: 3)
            near.appConnected()
            far.appConnected()
            return (near, far)
        }
        #expect(try await mesh.send(.sendSelfAdvert(flood: false)) == [Data([0x00])])
        try await mesh.advance(.seconds(3))
        let afterZeroHop = await mesh.sim { (near.contacts.map(\.name), far.contacts.map(\.name), near.drainOutputs()) }
        #expect(afterZeroHop.0 == ["Base"])
        #expect(afterZeroHop.1.isEmpty)
        #expect(afterZeroHop.2 == [MeshCoreFrame.advert(publicKey: mesh.key("Base")).encoded()])
        #expect(try await mesh.send(.sendSelfAdvert(flood: true)) == [Data([0x00])])
        try await mesh.advance(.seconds(3))
        #expect(await mesh.sim { far.contacts.map(\.name) } == ["Base"])
    }

    @Test func advertsAddContactsOrArePushedInManualMode() async throws {
        let auto = await EmulatorMesh(introduce: false)
        await auto.sim { auto.network.node(named: "Far")?.advert(flood: true) }
        try await auto.advance(.seconds(3))
        #expect(try await auto.drain() == [.advert(publicKey: auto.key("Far"))])
        #expect(await auto.sim { auto.radio.contacts.map(\.name) } == ["Far"])

        let manual = await EmulatorMesh(configuration: CompanionRadio.Configuration(manualAddContacts: true), introduce: false)
        await manual.sim { manual.network.node(named: "Alice")?.advert(flood: false) }
        try await manual.advance(.seconds(1))
        let pushes = try await manual.drain()
        guard case .newAdvert(let contact)? = pushes.first, pushes.count == 1 else {
            Issue.record("expected NEW_ADVERT, got \(pushes)")
            return
        }
        #expect(contact.name == "Alice")
        #expect(contact.publicKey == manual.key("Alice"))
        #expect(await manual.sim { manual.radio.contacts.isEmpty })
    }

    @Test func aFullContactTableIsReported() async throws {
        let mesh = await EmulatorMesh(configuration: CompanionRadio.Configuration(maxContacts: 2), introduce: false)
        await mesh.sim {
            mesh.network.node(named: "Alice")?.advert()
            mesh.network.node(named: "Echo")?.advert()
        }
        try await mesh.advance(.seconds(1))
        await mesh.sim { mesh.network.node(named: "Far")?.advert() }
        try await mesh.advance(.seconds(2))
        let pushes = try await mesh.drain()
        #expect(pushes.last == .contactsFull)
        #expect(await mesh.sim { mesh.radio.contacts.count } == 2)
    }

    @Test func aScriptPlaysOnVirtualTime() async throws {
        let mesh = await EmulatorMesh()
        _ = await mesh.sim {
            mesh.network.play(MeshScript([
                .at(.seconds(5), .directMessage(from: "Alice", to: "Base", text: "scripted")),
                .at(.seconds(6), .setOnline(name: "Echo", online: false)),
                .at(.seconds(7), .channelMessage(from: "Far", text: "far away")),
            ]))
        }
        try await mesh.advance(.seconds(4))
        #expect(await mesh.sim { mesh.radio.queuedMessageCount } == 0)
        try await mesh.advance(.seconds(6))
        #expect(await mesh.sim { mesh.radio.queuedMessageTexts } == ["scripted", "Far: far away"])
        #expect(await mesh.sim { mesh.network.node(named: "Echo")?.isOnline } == false)
    }

    @Test func theDemoMeshHasItsNamedMembers() async throws {
        let clock = ManualClock()
        let names = await { @SimulationActor in
            let network = MeshNetwork.demo(clock: clock, chatter: false)
            return (network.radios.map(\.name), network.nodes.map(\.name), network.radios[0].contacts.count)
        }()
        #expect(names.0 == [MeshNetwork.demoRadioName])
        #expect(names.1 == ["Alice", "Bob", "Echo", "Ridge Repeater", "Trail Club", "Weather Station"])
        #expect(names.2 == 6)
    }

    @Test func theDemoMeshCanKnowManyMoreContacts() async throws {
        let clock = ManualClock()
        let (count, capacity, named) = await { @SimulationActor in
            let network = MeshNetwork.demo(clock: clock, chatter: false, extraContacts: 350)
            let radio = network.radios[0]
            return (radio.contacts.count, radio.configuration.maxContacts, radio.contact(named: "Node 0350") != nil)
        }()
        #expect(count == 356 && capacity >= 356 && named)
    }
}
