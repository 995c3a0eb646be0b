import Foundation
@testable import MeshCore
import TetherCore
import TetherTesting
import TetherSimulator
import Testing
@testable import MeshCoreEmulator
@testable import MeshCoreStorage

/// The whole client stack — BLE transport on the core's state machine, session, manager and
/// store — against the emulated companion radio on a virtual radio, in virtual time.
struct BLEMeshWorld {
    static let epoch: UInt32 = 1_767_225_600
    static let radioID = PeripheralID(UUID(uuidString: "3E5C0000-0000-4000-8000-000000000001")!)

    let clock = ManualClock()
    let time: TestTime
    let radio: VirtualRadio
    let network: MeshNetwork
    let emulator: MeshCoreEmulator
    let central: Central
    let transport: BLETransport
    let session: MeshCoreSession
    let manager: ConnectionManager
    let store: MeshStore

    init(reconnect: ReconnectPolicy = ReconnectPolicy(schedule: ReconnectPolicy.persistent.schedule, useOSAutoReconnect: true)) async throws {
        SimulationLogging.bootstrapForTests()
        let clock = self.clock
        radio = VirtualRadio(clock: clock, seed: 11)
        time = TestTime(clock: clock, radio: radio)
        let (network, emulator) = await { @SimulationActor in
            let network = MeshNetwork.demo(clock: clock, startEpoch: BLEMeshWorld.epoch, chatter: false)
            return (network, MeshCoreEmulator(radio: network.radios[0]))
        }()
        self.network = network
        self.emulator = emulator
        await radio.add(emulator.makePeripheral(id: Self.radioID, distance: 1.0))
        central = Central(driver: await SimulatorBackedDriver.make(radio: radio), clock: clock)
        await central.start()
        transport = await BLETransport(central: central, peripheral: Self.radioID, configuration: .init(reconnectPolicy: reconnect))
        let now = Date(timeIntervalSince1970: TimeInterval(Self.epoch))
        session = MeshCoreSession(transport: transport, clock: clock, wallClock: { now })
        store = try MeshStore.inMemory()
        manager = ConnectionManager(session: session, store: store, clock: clock, wallClock: { now })
    }

    func run<T: Sendable>(limit: Duration = .seconds(300), _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await time.run(limit: limit, operation)
    }

    func until(limit: Duration = .seconds(300), _ condition: @escaping @Sendable () async -> Bool) async throws {
        try await time.until(limit: limit, condition)
    }

    func mesh(_ body: @escaping @SimulationActor (MeshNetwork) -> Void) async {
        let network = self.network
        await { @SimulationActor in body(network) }()
    }
}

/// Counts events.
actor EventCount {
    private(set) var value = 0
    func add() { value += 1 }
}

@Suite("Transport end to end", .timeLimit(.minutes(3)))
struct TransportEndToEndTests {
    @Test("BLE: startup to ready, a direct message acknowledged, the echo reply delivered and stored")
    func bleEndToEnd() async throws {
        let world = try await BLEMeshWorld()
        let manager = world.manager
        try await world.run { try await manager.connect() }
        #expect(await manager.state == .ready)
        #expect(await manager.selfInfo?.name == MeshNetwork.demoRadioName)
        #expect(await manager.deviceInfo?.firmwareVersionCode == 13)
        #expect(await manager.contacts.map(\.name).sorted() == ["Alice", "Bob", "Echo", "Ridge Repeater", "Trail Club", "Weather Station"])
        #expect(await manager.channels.first?.name == "Public")
        let echo = try #require(await manager.contact(named: "Echo"))
        let sent = try await world.run { try await manager.sendMessage("ping over BLE", to: echo) }
        #expect(sent.status == .delivered)
        #expect((sent.roundTrip ?? 0) > 0)
        let store = world.store
        try await world.until { (try? await store.messages().contains { $0.direction == .incoming && $0.text == "echo: ping over BLE" }) ?? false }
        let stored = try await store.messages()
        #expect(stored.filter { $0.text == "echo: ping over BLE" }.count == 1)
        #expect(stored.first { $0.direction == .outgoing }?.status == .delivered)
    }

    @Test("BLE: a node the radio adds by itself (PUSH_ADVERT of an unknown key) becomes a contact of the app; a burst costs few listings, a known key none")
    func autoAddedContactsAreListed() async throws {
        let world = try await BLEMeshWorld()
        let manager = world.manager
        try await world.run { try await manager.connect() }
        let listings = EventCount()
        let events = await manager.events()
        let counter = Task {
            for await event in events { if case .contactsUpdated = event { await listings.add() } }
        }
        defer { counter.cancel() }
        await world.mesh { network in
            for name in ["Hiker", "Cyclist", "Climber"] { network.addNode(name: name, hops: 1) }
            _ = network.play(MeshScript(["Hiker", "Cyclist", "Climber"].map { .at(.zero, .advert(from: $0, flood: true)) }))
        }
        try await world.until { await Set(manager.contacts.map(\.name)).isSuperset(of: ["Hiker", "Cyclist", "Climber"]) }
        #expect(await manager.contacts.count == 9)
        // A quiet while: the burst was answered by one listing or two, not one per advert.
        try await world.run { try await world.clock.sleep(for: .seconds(30)) }
        let afterBurst = await listings.value
        #expect((1...2).contains(afterBurst))
        // Adverts from contacts the app knows read nothing.
        await world.mesh { network in _ = network.play(MeshScript([.at(.zero, .advert(from: "Hiker", flood: true))])) }
        try await world.run { try await world.clock.sleep(for: .seconds(30)) }
        #expect(await listings.value == afterBurst)
        #expect(try await world.store.contacts().count == 9)
    }

    @Test("BLE: a stale path: two direct sends are lost, the path is reset and the flooded third is acknowledged")
    func bleStalePathFallsBackToFlood() async throws {
        let world = try await BLEMeshWorld()
        let manager = world.manager
        try await world.run { try await manager.connect() }
        let echo = try #require(await manager.contact(named: "Echo"))
        // The first message floods (no path yet); its acknowledgement brings the path back.
        let first = try await world.run { try await manager.sendMessage("learn the way", to: echo) }
        #expect(first.status == .delivered)
        let network = world.network
        let radio = await { @SimulationActor in network.radios[0] }()
        let learned = await { @SimulationActor in radio.contacts.first { $0.name == "Echo" }?.outPathHopCount }()
        #expect(learned == 1)
        // Echo moves one hop further: the stored route no longer reaches it.
        await world.mesh { $0.node(named: "Echo")?.hops = 3 }
        let sentBefore = await { @SimulationActor in radio.counters.directMessagesSent }()
        let second = try await world.run { try await manager.sendMessage("are you there?", to: echo) }
        #expect(second.status == .delivered)
        #expect(await { @SimulationActor in radio.counters.directMessagesSent }() - sentBefore == 3)
        // The flooded send's acknowledgement brought the new, longer path.
        let relearned = await { @SimulationActor in radio.contacts.first { $0.name == "Echo" }?.outPathHopCount }()
        #expect(relearned == 2)
    }

    @Test("BLE: a link loss during incoming traffic loses and duplicates nothing")
    func bleLinkLossDuringTraffic() async throws {
        let world = try await BLEMeshWorld()
        let manager = world.manager
        try await world.run { try await manager.connect() }
        let base = MeshNetwork.demoRadioName
        // Alice writes every 700 ms and posts on Public; meanwhile the radio walks out of range.
        var steps: [MeshScript.Step] = []
        for index in 0..<12 {
            steps.append(.at(.milliseconds(300 + 700 * index), .directMessage(from: "Alice", to: base, text: "note \(index)")))
        }
        steps.append(.at(.seconds(3), .channelMessage(from: "Bob", text: "storm coming")))
        steps.append(.at(.seconds(6), .channelMessage(from: "Alice", text: "heading down")))
        let script = MeshScript(steps)
        await world.mesh { $0.play(script) }
        try await world.run { try await Task.sleep(for: .seconds(2), clock: world.clock) }
        await world.radio.setInRange(BLEMeshWorld.radioID, false)
        try await world.until { await manager.state != .ready }
        try await world.run { try await Task.sleep(for: .seconds(6), clock: world.clock) }
        await world.radio.setInRange(BLEMeshWorld.radioID, true)
        let store = world.store
        try await world.until(limit: .seconds(600)) {
            let texts = (try? await store.messages().map(\.text)) ?? []
            return texts.count >= 14
        }
        try await world.run { try await Task.sleep(for: .seconds(5), clock: world.clock) }
        let texts = try await store.messages().map(\.text)
        let notes = (0..<12).map { "note \($0)" }
        #expect(Set(texts) == Set(notes + ["storm coming", "heading down"]))
        #expect(texts.count == 14, "nothing duplicated")
        #expect(await manager.readyCount >= 2, "the startup ran again after the link came back")
        #expect(await manager.state == .ready)
    }

    @Test("BLE: disconnect, then connect again: the session hears the radio on the new link")
    func bleReconnectAfterDisconnect() async throws {
        let world = try await BLEMeshWorld()
        let manager = world.manager
        try await world.run { try await manager.connect() }
        // Disconnecting waits for the link's teardown, which takes virtual time.
        try await world.run { await manager.disconnect() }
        #expect(await !world.transport.isConnected)
        try await world.run { try await manager.connect() }
        #expect(await manager.state == .ready)
        #expect(await manager.readyCount == 2)
        #expect(try await world.run { try await world.session.deviceTime() } >= BLEMeshWorld.epoch)
    }

    @Test("BLE: a pairing failure (ATT 5 on subscribe) is reported as such")
    func blePairingFailure() async throws {
        let world = try await BLEMeshWorld(reconnect: .never)
        await world.radio.inject(FaultRule(.subscribe, on: MeshCoreBLE.notifyCharacteristic, action: .error(ATTError(0x05))))
        let transport = world.transport
        let error = try await world.run { () -> BLEError? in
            do { try await transport.connect(); return nil } catch let error as BLEError { return error }
        }
        #expect(error == .pairingFailed(.insufficientAuthentication))
        #expect(await !transport.isConnected)
    }

    @Test("BLE: after state restoration the app is not shown connected until the radio answered APP_START again")
    func bleStateRestoration() async throws {
        let world = try await BLEMeshWorld()
        let manager = world.manager
        try await world.run { try await manager.connect() }
        let before = await { @SimulationActor [emulator = world.emulator] in emulator.framesReceived }()
        // The OS relaunches the app; the link stays up.
        let driver = await SimulatorBackedDriver.relaunch(radio: world.radio)
        let central = Central(driver: driver, clock: world.clock)
        await central.start()
        let transport = await BLETransport(central: central, peripheral: BLEMeshWorld.radioID)
        let now = Date(timeIntervalSince1970: TimeInterval(BLEMeshWorld.epoch))
        let session = MeshCoreSession(transport: transport, clock: world.clock, wallClock: { now })
        let restored = ConnectionManager(session: session, store: world.store, clock: world.clock, wallClock: { now })
        let events = Collector(await restored.events())
        await restored.restore()
        #expect(await restored.state == .connecting)
        try await world.until { await restored.state == .ready }
        let states = await events.items.compactMap { if case .state(let s) = $0 { s } else { nil } }
        #expect(states == [.disconnected, .connecting, .connected, .ready])
        let after = await { @SimulationActor [emulator = world.emulator] in emulator.framesReceived }()
        #expect(after > before, "the startup ran on the restored link")
        #expect(await restored.readyCount == 1)
        #expect(await session.selfInfo?.name == MeshNetwork.demoRadioName)
    }

    @Test("BLE: handlers fire on link loss and OS reconnection")
    func bleHandlers() async throws {
        let world = try await BLEMeshWorld()
        let transport = world.transport
        let log = HandlerLog()
        await transport.setDisconnectionHandler { _, _ in log.add("disconnected") }
        await transport.setAutoReconnectingHandler { _ in log.add("autoReconnecting") }
        await transport.setReconnectionHandler { _ in log.add("reconnected") }
        try await world.run { try await transport.connect() }
        await world.radio.setInRange(BLEMeshWorld.radioID, false)
        try await world.until { log.entries.contains("autoReconnecting") }
        await world.radio.setInRange(BLEMeshWorld.radioID, true)
        try await world.until { log.entries.contains("reconnected") }
        #expect(log.entries == ["disconnected", "autoReconnecting", "reconnected"])
        #expect(await transport.isConnected)
    }
}

/// Records handler calls from any thread.
final class HandlerLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func add(_ entry: String) { lock.lock(); items.append(entry); lock.unlock() }
    var entries: [String] { lock.lock(); defer { lock.unlock() }; return items }
}

/// The stream transport against the emulator's TCP and serial host, on real sockets and a
/// real pseudo-terminal (the mesh runs in real time with short hops; nothing here measures time).
@Suite("Transport stream end to end", .timeLimit(.minutes(2)))
struct TransportStreamEndToEndTests {
    static func network() async -> (MeshNetwork, MeshCoreStreamHost) {
        await { @SimulationActor in
            let network = MeshNetwork.demo(clock: ContinuousClock(), chatter: false)
            network.hopLatency = .milliseconds(5)
            return (network, MeshCoreStreamHost(radio: network.radios[0]))
        }()
    }

    static func exercise(_ transport: StreamTransport) async throws {
        let session = MeshCoreSession(transport: transport, configuration: .init(commandTimeout: Patience.duration(.seconds(5))))
        let store = try MeshStore.inMemory()
        let manager = ConnectionManager(session: session, store: store, configuration: .init(reconnectPolicy: .never))
        try await withSafetyTimeout { try await manager.connect() }
        #expect(await manager.state == .ready)
        #expect(await manager.selfInfo?.name == MeshNetwork.demoRadioName)
        let battery = try await session.batteryAndStorage()
        #expect(battery.millivolts > 3000)
        let echo = try #require(await manager.contact(named: "Echo"))
        let sent = try await withSafetyTimeout { try await manager.sendMessage("over the wire", to: echo) }
        #expect(sent.status == .delivered)
        try await withSafetyTimeout {
            while !((try? await store.messages().contains { $0.text == "echo: over the wire" }) ?? false) { await Task.yield() }
        }
        await manager.disconnect()
    }

    @Test("TCP: startup, battery, a message acknowledged and its echo received")
    func tcpEndToEnd() async throws {
        let (network, host) = await Self.network()
        let port = try await host.listen(host: "127.0.0.1", port: 0)
        try await Self.exercise(StreamTransport.tcp(host: "127.0.0.1", port: port))
        await host.close()
        withExtendedLifetime(network) {}
    }

    @Test("TCP: the radio closing the connection is reported at once, and send fails not-connected")
    func tcpRemoteClose() async throws {
        let (_, host) = await Self.network()
        let port = try await host.listen(host: "127.0.0.1", port: 0)
        let transport = StreamTransport.tcp(host: "127.0.0.1", port: port)
        let events = Collector(await transport.linkEvents())
        try await transport.connect()
        await host.close()
        try await withSafetyTimeout { while await events.items.count < 2 { await Task.yield() } }
        #expect(await events.items.first == .connected)
        if case .disconnected = await events.items.last {} else { Issue.record("expected disconnected, got \(await events.items)") }
        #expect(await !transport.isConnected)
        await #expect(throws: MeshTransportError.notConnected) { try await transport.send(Data([0x05])) }
    }

    @Test("TCP: overlapping connects share one attempt and both succeed")
    func tcpOverlappingConnects() async throws {
        let (network, host) = await Self.network()
        let port = try await host.listen(host: "127.0.0.1", port: 0)
        let transport = StreamTransport.tcp(host: "127.0.0.1", port: port)
        async let first: Void = transport.connect()
        async let second: Void = transport.connect()
        _ = try await (first, second)
        #expect(await transport.isConnected)
        let session = MeshCoreSession(transport: transport, configuration: .init(commandTimeout: Patience.duration(.seconds(5))))
        let info = try await withSafetyTimeout { try await session.start() }
        #expect(info.name == MeshNetwork.demoRadioName)
        await transport.disconnect()
        #expect(await !transport.isConnected)
        await host.close()
        withExtendedLifetime(network) {}
    }

    @Test("TCP: nobody listening → connectionFailed")
    func tcpRefused() async throws {
        let (_, host) = await Self.network()
        let port = try await host.listen(host: "127.0.0.1", port: 0)
        await host.close()
        let transport = StreamTransport.tcp(host: "127.0.0.1", port: port)
        let error = await #expect(throws: MeshTransportError.self) { try await transport.connect() }
        if case .connectionFailed = error {} else { Issue.record("expected connectionFailed, got \(String(describing: error))") }
    }

    @Test("serial: the same over a pseudo-terminal at 115200 8N1")
    func serialEndToEnd() async throws {
        let (network, host) = await Self.network()
        let terminal = try PseudoTerminal.open()
        try await host.serve(fileDescriptor: terminal.master)
        try await Self.exercise(StreamTransport.serial(path: terminal.path))
        await host.close()
        withExtendedLifetime(network) {}
    }

    @Test("serial: a missing device and a bad baud rate are clear errors")
    func serialErrors() async throws {
        let missing = StreamTransport.serial(path: "/dev/does-not-exist-tether")
        let error = await #expect(throws: MeshTransportError.self) { try await missing.connect() }
        if case .serialPort(let reason) = error { #expect(reason.contains("does-not-exist")) } else { Issue.record("got \(String(describing: error))") }
        let badRate = StreamTransport.serial(path: "/dev/null", baudRate: 12345)
        let rateError = await #expect(throws: MeshTransportError.self) { try await badRate.connect() }
        #expect(rateError == .serialPort("unsupported baud rate 12345"))
    }

    /// `/dev/null`, `/dev/zero` and `/dev/urandom` crashed the CLI (the event loop refused the
    /// descriptor inside a `try!`); a regular file and a directory are no serial ports either.
    @Test("serial: devices that are no terminal, files and directories are refused with a reason", arguments: [
        ("/dev/null", "not a terminal"), ("/dev/zero", "not a terminal"), ("/dev/urandom", "not a terminal"),
        ("a temporary file", "regular file"), ("/tmp", "directory"),
    ])
    func serialRefusesWhatIsNoSerialPort(path given: String, reason: String) async throws {
        var path = given
        if given == "a temporary file" {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("tether-serial-\(UUID().uuidString)").path
            try Data("not a radio".utf8).write(to: URL(fileURLWithPath: path))
        }
        defer { if given == "a temporary file" { try? FileManager.default.removeItem(atPath: path) } }
        guard FileManager.default.fileExists(atPath: path) else {
            Issue.record("\(path) is missing on this machine")
            return
        }
        let transport = StreamTransport.serial(path: path)
        let error = await #expect(throws: MeshTransportError.self) { try await transport.connect() }
        guard case .serialPort(let text) = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(text.contains(path) && text.contains(reason), "\(text)")
    }
}
