#if os(Linux)
import Foundation
import MeshCore
import TetherBlueZ
import TetherBlueZPeripheral
import TetherCore
import TetherDBus
import TetherSimulator
import Testing
import MeshCoreEmulator
import MeshCoreStorage

/// The MeshCore client stack over BLE (`BLETransport` → `MeshCoreSession` → `ConnectionManager`
/// → `MeshStore`) against the companion-radio emulator served by ``BlueZPeripheralHost``, in
/// real time: the flows of `TransportEndToEndTests` and `EmulatorBLETests`, through BlueZ's D-Bus
/// API (bluezoo). One radio ("Tether Base") of the demo mesh; Alice, Bob and Echo are scripted.
@Suite("MeshCore over BlueZ", .timeLimit(.minutes(2)))
struct MeshCoreFlowTests {
    static let base = MeshNetwork.demoRadioName

    @Test func theStartupQueriesTheRadioAndLoadsContactsAndChannels() async throws {
        try await MeshFlowWorld.run { world in
            #expect(await world.onRadio { $0.isAppConnected } == false)
            try await world.connect()
            try await world.state(.ready)
            let manager = world.manager
            #expect(await manager.state == .ready)
            #expect(world.states == [.disconnected, .connecting, .connected, .ready])
            #expect(await manager.readyCount == 1)
            #expect(await manager.selfInfo?.name == Self.base)
            #expect(await manager.deviceInfo?.firmwareVersionCode == 13)
            #expect(await manager.contacts.map(\.name).sorted() == ["Alice", "Bob", "Echo", "Ridge Repeater", "Trail Club", "Weather Station"])
            #expect(await manager.channels.first?.name == "Public")
            #expect(try await world.store.contacts().map(\.name).sorted() == ["Alice", "Bob", "Echo", "Ridge Repeater", "Trail Club", "Weather Station"])
            #expect(try await world.store.channels().map(\.name) == (await manager.channels).map(\.name))
            // The radio's side: the app attached over BLE, named itself and asked for V3 frames.
            let radio = await world.onRadio { ($0.isAppConnected, $0.appName, $0.protocolVersion) }
            #expect(radio.0)
            #expect(radio.1 == "Tether")
            #expect(radio.2 == 3)
            // Each startup command reached the radio once, in order: APP_START, DEVICE_QUERY,
            // GET_DEVICE_TIME (no drift, so no SET), GET_CONTACTS, GET_CHANNEL for every slot the
            // radio has (up to the manager's 8; unset slots answer with an empty name),
            // SYNC_NEXT_MESSAGE (nothing queued).
            let channelReads = min(manager.configuration.maximumChannels, Int(await manager.deviceInfo?.maxChannels ?? 0))
            #expect(channelReads >= 1)
            #expect(world.commandCodes == [1, 22, 5, 4] + Array(repeating: 31, count: channelReads) + [10])
        }
    }

    @Test func aDirectMessageIsAcknowledgedAndTheEchoReplyFetched() async throws {
        try await MeshFlowWorld.run { world in
            try await world.connect()
            let manager = world.manager
            let echo = try #require(await manager.contact(named: "Echo"))
            let sent = try await within(20, "sending to Echo") { try await manager.sendMessage("ping over BlueZ", to: echo) }
            #expect(sent.status == .delivered)
            #expect(sent.ack != nil)
            #expect((sent.roundTrip ?? 0) > 0)
            try await world.events.next("the acknowledgement") {
                if case .acknowledged(let ack, _) = $0 { ack == sent.ack } else { false }
            }
            #expect(await world.mesh { $0.node(named: "Echo")?.receivedDirect.map(\.text) } == ["ping over BlueZ"])
            // Echo answers; MSG_WAITING makes the session fetch it.
            let reply = try await world.message("echo: ping over BlueZ")
            #expect(reply.direction == .incoming)
            #expect(reply.kind == .direct)
            #expect(reply.peer == echo.publicKeyPrefix.hexString)
            let stored = try await world.store.messages()
            #expect(stored.filter { $0.text == "echo: ping over BlueZ" }.count == 1)
            #expect(stored.first { $0.direction == .outgoing }?.status == .delivered)
            #expect(stored.first { $0.direction == .outgoing }?.ack == sent.ack)
        }
    }

    @Test func aChannelMessageGoesOutAndOneComesIn() async throws {
        try await MeshFlowWorld.run { world in
            try await world.connect()
            let manager = world.manager
            let sent = try await within(20, "posting on Public") { try await manager.sendChannelMessage("trail is clear", channel: 0) }
            #expect(sent.direction == .outgoing)
            #expect(sent.kind == .channel)
            #expect(sent.channelIndex == 0)
            // The radio posted it under its name; the nodes hear it.
            try await world.traffic.next("the post on the mesh") {
                $0 == .channelMessage(from: Self.base, text: "\(Self.base): trail is clear")
            }
            try await meshFlowEventually("Alice hearing the post") {
                await world.mesh { $0.node(named: "Alice")?.receivedChannel } == ["\(Self.base): trail is clear"]
            }
            // Bob posts: the radio queues it, says MSG_WAITING, the session fetches it.
            let mark = world.events.count
            await world.mesh { $0.node(named: "Bob")?.postOnChannel("storm coming") }
            let heard = try await world.message("storm coming", from: mark)
            #expect(heard.direction == .incoming)
            #expect(heard.kind == .channel)
            #expect(heard.channelIndex == 0)
            #expect(heard.senderName == "Bob")
            let stored = try await world.store.messages()
            #expect(stored.map(\.text) == ["trail is clear", "storm coming"])
        }
    }

    @Test func messagesQueuedBeforeTheAppConnectsAreDrainedByTheStartupAndLaterOnesFetched() async throws {
        try await MeshFlowWorld.run { world in
            // The app is away: the radio keeps what arrives.
            await world.mesh { network in
                network.node(named: "Alice")?.sendDirect("waiting 1", to: Self.base)
                network.node(named: "Alice")?.sendDirect("waiting 2", to: Self.base)
                network.node(named: "Bob")?.postOnChannel("queued post")
            }
            try await world.traffic.next("three queued messages") { $0 == .messageQueued(radio: Self.base, queued: 3) }
            #expect(await world.onRadio { $0.queuedMessageTexts } == ["waiting 1", "waiting 2", "Bob: queued post"])

            try await world.connect()
            let ready = try await world.state(.ready)
            // Stored and published before ready, in queue order.
            let early = world.events.all.prefix(ready).compactMap { if case .message(let message) = $0 { message.text } else { nil } }
            #expect(early == ["waiting 1", "waiting 2", "queued post"])
            #expect(await world.onRadio { $0.queuedMessageCount } == 0)
            #expect(try await world.store.messages().map(\.text) == ["waiting 1", "waiting 2", "queued post"])

            // Once ready, a new message is fetched on MSG_WAITING.
            let mark = world.events.count
            await world.mesh { $0.node(named: "Alice")?.sendDirect("while ready", to: Self.base) }
            let late = try await world.message("while ready", from: mark)
            #expect(late.direction == .incoming)
            #expect(await world.manager.state == .ready)
            #expect(await world.manager.readyCount == 1)
            #expect(try await world.store.messages().map(\.text) == ["waiting 1", "waiting 2", "queued post", "while ready"])
        }
    }

    @Test func aLinkLossLosesAndDuplicatesNothingAndTheStartupRunsAgain() async throws {
        try await MeshFlowWorld.run { world in
            let (handlerStream, handlerContinuation) = AsyncStream.makeStream(of: String.self)
            let handlers = MeshFlowRecorder(handlerStream)
            await world.transport.setDisconnectionHandler { _, _ in handlerContinuation.yield("disconnected") }
            await world.transport.setAutoReconnectingHandler { _ in handlerContinuation.yield("autoReconnecting") }
            await world.transport.setReconnectionHandler { _ in handlerContinuation.yield("reconnected") }
            try await world.connect()
            try await world.state(.ready)

            // Traffic before the loss, fetched on MSG_WAITING.
            let quiet = world.activity.count
            await world.mesh { $0.node(named: "Alice")?.sendDirect("before", to: Self.base) }
            try await world.message("before")
            // The fetch ends with NO_MORE_MESSAGES: the radio has nothing left to say. (A link lost
            // while it still has a reply to send leaves the emulator mute: see the next test.)
            try await world.activity.next("NO_MORE_MESSAGES after the fetch", from: quiet) {
                $0 == .notification(MeshCoreBLE.notifyCharacteristic, Data([0x0A]))
            }

            // The radio's side ends the link (as a radio that reboots or walks away would).
            let mark = world.events.count
            let trafficMark = world.traffic.count
            try await world.dropLinkFromTheRadiosSide()
            try await world.traffic.next("the radio seeing the app leave", from: trafficMark) {
                $0 == .appConnection(radio: Self.base, connected: false)
            }
            // Meanwhile the mesh goes on: the radio queues what arrives.
            await world.mesh { network in
                network.node(named: "Alice")?.sendDirect("during 1", to: Self.base)
                network.node(named: "Alice")?.sendDirect("during 2", to: Self.base)
                network.node(named: "Bob")?.postOnChannel("during post")
            }

            // The transport reconnects by itself; the manager runs the startup again.
            let reconnecting = try await world.state(.connecting, from: mark)
            let ready = try await world.state(.ready, from: reconnecting, within: 20)
            try await handlers.next("the reconnection handler") { $0 == "reconnected" }
            #expect(handlers.all == ["disconnected", "autoReconnecting", "reconnected"])
            #expect(world.states == [.disconnected, .connecting, .connected, .ready, .connecting, .connected, .ready])
            #expect(await world.manager.readyCount == 2)
            #expect(ready > reconnecting)
            for text in ["during 1", "during 2", "during post"] {
                try await world.message(text, from: mark)
            }
            #expect(await world.onRadio { $0.isAppConnected })
            #expect(await world.onRadio { $0.queuedMessageCount } == 0)
            #expect(await world.manager.state == .ready)
            #expect(await world.transport.isConnected)

            // Nothing lost, nothing twice (the store deduplicates; the events show each once too).
            let texts = try await world.store.messages().map(\.text)
            #expect(texts.sorted() == ["before", "during 1", "during 2", "during post"])
            #expect(world.messageTexts.sorted() == ["before", "during 1", "during 2", "during post"])

            // The link works after the return: a direct message is acknowledged.
            let echo = try #require(await world.manager.contact(named: "Echo"))
            let manager = world.manager
            let sent = try await within(20, "sending after the reconnection") { try await manager.sendMessage("back again", to: echo) }
            #expect(sent.status == .delivered)
        }
    }

    /// The same loss, but while the radio is still sending a multi-frame reply (a contact
    /// listing, one notification per 60 ms). The link comes back; the radio must answer again.
    ///
    /// (A drain scheduled on the lost link must not leave the emulator mute on the next one.)
    @Test func aLinkLostWhileTheRadioIsStillAnsweringRecovers() async throws {
        // 24 more contacts: the listing takes 1.7 s, the link surely drops in the middle of it.
        // The real stack in the guest (under TCG) takes longer to drop a link: 100 more, 7 s.
        let hikers = BlueZRigs.isGuest ? 100 : 24
        try await MeshFlowWorld.run(prepare: { network in
            for index in 1...hikers { network.addNode(name: "Hiker \(index)", hops: 2) }
            network.introduceAll(to: network.radios[0])
        }) { world in
            let (handlerStream, handlerContinuation) = AsyncStream.makeStream(of: String.self)
            let handlers = MeshFlowRecorder(handlerStream)
            await world.transport.setReconnectionHandler { _ in handlerContinuation.yield("reconnected") }
            try await world.connect()
            try await world.state(.ready)

            // Ask for the contacts again and drop the link once the listing has begun.
            let listing = world.activity.count
            let session = world.session
            let request = Task { try await session.contacts() }
            try await world.activity.next("CONTACTS_START", from: listing) {
                if case .notification(MeshCoreBLE.notifyCharacteristic, let frame) = $0 { frame.first == 0x02 } else { false }
            }
            let mark = world.events.count
            try await world.dropLinkFromTheRadiosSide()
            await #expect(throws: MeshCoreError.self) { try await request.value }
            let notified = world.activity.all.dropFirst(listing).filter { if case .notification = $0 { true } else { false } }
            #expect(notified.count < hikers + 6, "the listing (\(hikers + 6) frames) was cut short")

            // The link comes back by itself and the startup asks the radio again.
            let back = world.activity.count
            try await handlers.next("the reconnection") { $0 == "reconnected" }
            try await world.activity.next("APP_START after the reconnection", from: back, within: 10) {
                if case .write(MeshCoreBLE.writeCharacteristic, let frame, _) = $0 { frame.first == 0x01 } else { false }
            }
            try await world.activity.next("the radio's answer (SELF_INFO) after the reconnection", from: back, within: 4) {
                if case .notification(MeshCoreBLE.notifyCharacteristic, let frame) = $0 { frame.first == 0x05 } else { false }
            }
            try await world.state(.ready, from: mark, within: 10)
            #expect(await world.manager.readyCount == 2)
        }
    }

    /// A host with a second adapter (a USB dongle next to the built-in one) that has seen the
    /// radio too: when that adapter goes away, the app's link on the first one must not care.
    ///
    /// (Each adapter has its own object for a peripheral it has seen; only ours is our link.)
    @Test func anotherAdapterForgettingTheRadioLeavesTheLinkAlone() async throws {
        try await MeshFlowWorld.run { world in
            let (handlerStream, handlerContinuation) = AsyncStream.makeStream(of: String.self)
            let handlers = MeshFlowRecorder(handlerStream)
            await world.transport.setDisconnectionHandler { _, _ in handlerContinuation.yield("disconnected") }

            // A second adapter scans: BlueZ gives it a device object for the radio. (Before our
            // link: a hosted peripheral on the guest's controllers stops advertising while a
            // central is connected, as most devices do.)
            let rig = world.pair.rig
            let other = try await rig.addFreshAdapter()
            let bus = try await DBusConnection.connect(to: DBusAddress(parsing: rig.busAddress))
            defer { bus.close() }
            let adapter = "/org/bluez/hci\(other.id)"
            let device = adapter + "/dev_" + world.pair.peripheral.address.replacingOccurrences(of: ":", with: "_")
            let added = try await bus.signals(matching: DBusMatchRule(
                sender: "org.bluez", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded"))
            _ = try await bus.call(.methodCall(destination: "org.bluez", path: DBusObjectPath(adapter)!,
                                               interface: "org.bluez.Adapter1", member: "StartDiscovery"))
            try await within(BlueZRigs.patience, "\(adapter) never saw the radio") {
                for await message in added where message.body.first?.objectPath?.rawValue == device { return }
            }
            _ = try? await bus.call(.methodCall(destination: "org.bluez", path: DBusObjectPath(adapter)!,
                                                interface: "org.bluez.Adapter1", member: "StopDiscovery"))
            try await world.connect()
            try await world.state(.ready)
            let mark = world.events.count

            // The dongle is pulled: its objects, the radio's among them, leave the bus.
            try await rig.releaseAdapter(id: other.id)
            await world.pair.driver.synchronize()

            // Our link never went down: a message goes through at once, no handler ran.
            let manager = world.manager
            let echo = try #require(await manager.contact(named: "Echo"))
            let sent = try await within(20, "sending after the other adapter left") { try await manager.sendMessage("still here", to: echo) }
            #expect(sent.status == .delivered)
            #expect(handlers.all.isEmpty, "the link was reported lost")
            let changes = world.events.all.dropFirst(mark).compactMap { if case .state(let state) = $0 { state } else { nil } }
            #expect(changes.isEmpty, "the manager went through \(changes)")
        }
    }
}

extension MeshFlowWorld {
    /// The command codes the radio received from the app, in order.
    var commandCodes: [UInt8] {
        traffic.all.compactMap { if case .appCommand(_, let code, true) = $0 { code } else { nil } }
    }

    /// Ends the BLE link from the radio's side: `Device1.Disconnect` on the peripheral adapter's
    /// object for the central (bluezoo reports it to the central as a remote disconnection).
    func dropLinkFromTheRadiosSide() async throws {
        let connection = try await DBusConnection.connect(to: DBusAddress(parsing: pair.rig.busAddress))
        defer { connection.close() }
        let path = "/org/bluez/hci\(pair.peripheral.id)/dev_" + pair.central.address.replacingOccurrences(of: ":", with: "_")
        guard let device = DBusObjectPath(path) else { throw BlueZTestError("bad object path \(path)") }
        _ = try await connection.call(.methodCall(destination: "org.bluez", path: device, interface: "org.bluez.Device1", member: "Disconnect"))
    }
}
#endif
