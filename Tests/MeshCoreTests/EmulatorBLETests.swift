import Foundation
import TetherTesting
import Testing

@testable import MeshCore
@testable import TetherCore
@testable import TetherSimulator
@testable import MeshCoreEmulator

/// Notifications received by the central, stamped with virtual time.
actor EmulatorBLELog {
    private(set) var entries: [(at: Duration, frame: Data)] = []
    func append(_ frame: Data, at time: Duration) { entries.append((time, frame)) }
    var frames: [Data] { entries.map(\.frame) }
}

/// The emulator as a `MeshCore-…` peripheral on a virtual radio, a central connected to it.
struct EmulatorBLEWorld {
    let clock = ManualClock()
    let time: TestTime
    let air: VirtualRadio
    let network: MeshNetwork
    let radio: CompanionRadio
    let emulator: MeshCoreEmulator
    let central: Central
    let connection: ConnectionStateMachine
    let log = EmulatorBLELog()
    let id = PeripheralID(UUID(uuidString: "6E400001-0000-4000-8000-00000000ACE5")!)

    init() async {
        SimulationLogging.bootstrapForTests()
        let air = VirtualRadio(clock: clock, seed: 11)
        time = TestTime(clock: clock, radio: air)
        let network = MeshNetwork(clock: clock, seed: 5, startEpoch: EmulatorMesh.epoch)
        let id = self.id
        (radio, emulator) = await { @SimulationActor in
            let radio = network.addRadio(name: "Base")
            network.addNode(name: "Alice", hops: 1)
            network.addNode(name: "Echo", hops: 2, echoBot: true)
            network.addNode(name: "Far", hops: 4)
            network.introduceAll(to: radio)
            let emulator = MeshCoreEmulator(radio: radio)
            air.add(emulator.makePeripheral(id: id))
            return (radio, emulator)
        }()
        self.air = air
        self.network = network
        central = Central(driver: await SimulatorBackedDriver.make(radio: air), clock: clock)
        await central.start()
        connection = await central.connection(to: id, configuration: ConnectionConfiguration(
            services: [MeshCoreBLE.service],
            requiredCharacteristics: [MeshCoreBLE.writeCharacteristic, MeshCoreBLE.notifyCharacteristic],
            notifyCharacteristics: [MeshCoreBLE.notifyCharacteristic],
            reconnectPolicy: .persistent))
    }

    var now: Duration { air.timeline.now }

    func run<T: Sendable>(limit: Duration = .seconds(120), _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await time.run(limit: limit, operation)
    }

    func until(limit: Duration = .seconds(60), _ condition: @escaping @Sendable () async -> Bool) async throws {
        try await time.until(limit: limit, condition)
    }

    func advance(_ duration: Duration) async throws {
        await time.advance(duration)
    }

    /// Connects and logs every notification from then on.
    func connect() async throws {
        let notifications = await connection.notifications(for: MeshCoreBLE.notifyCharacteristic)
        let log = self.log, timeline = air.timeline
        Task { for await value in notifications { await log.append(value, at: timeline.now) } }
        let connection = self.connection
        try await run { try await connection.connect() }
    }

    /// Writes one command frame with response.
    func write(_ command: MeshCoreCommand) async throws {
        let frame = try command.encoded(), connection = self.connection
        try await run { try await connection.write(frame, to: MeshCoreBLE.writeCharacteristic, type: .withResponse) }
    }

    /// Waits until `count` notifications have arrived in total; returns them decoded.
    func frames(total count: Int) async throws -> [MeshCoreFrame] {
        let log = self.log
        try await until { await log.entries.count >= count }
        return try await log.frames.map { try MeshCoreFrame(decoding: $0) }
    }

    func sim<T: Sendable>(_ body: @escaping @SimulationActor () -> T) async -> T {
        await { @SimulationActor in body() }()
    }
}

/// The companion radio over the simulated BLE link.
@Suite struct EmulatorBLETests {
    @Test func commandsAndRepliesTravelOverNordicUART() async throws {
        let world = await EmulatorBLEWorld()
        let name = await world.sim { world.air.virtualPeripheral(world.id)?.name }
        #expect(name == "MeshCore-Base")
        try await world.connect()
        #expect(await world.air.mtu(of: world.id).map { $0 >= 179 } == true)
        #expect(await world.sim { world.radio.isAppConnected })
        try await world.write(.appStart(appName: "ble"))
        guard case .selfInfo(let info)? = try await world.frames(total: 1).first else {
            Issue.record("no SELF_INFO")
            return
        }
        #expect(info.name == "Base")
        try await world.write(.getContacts(since: nil))
        let frames = try await world.frames(total: 6)
        #expect(frames[1] == .contactsStart(count: 3))
        #expect(frames[2...4].allSatisfy { $0.code == 0x03 })
        #expect(frames[5] == .endOfContacts(lastModified: EmulatorMesh.epoch))
        // The firmware spaces notifications at least 60 ms apart.
        let times = await world.sim { world.emulator.notificationTimes }
        #expect(times.count == 6)
        for (earlier, later) in zip(times, times.dropFirst()) {
            #expect(later - earlier >= .milliseconds(60))
        }
        let received = await world.log.entries.map(\.at)
        #expect(received == received.sorted())
    }

    @Test func aDirectMessageIsConfirmedOverBLE() async throws {
        let world = await EmulatorBLEWorld()
        try await world.connect()
        try await world.write(.deviceQuery(protocolVersion: 3))
        try await world.write(.sendTextMessage(MeshCoreCommand.TextMessage(
            timestamp: EmulatorMesh.epoch, destinationPrefix: Data(world.network.key(for: "Echo").prefix(6)), text: "over ble")))
        let frames = try await world.frames(total: 4)
        guard case .sent(let sent) = frames[1] else {
            Issue.record("no SENT in \(frames)")
            return
        }
        #expect(frames[2] == .sendConfirmed(SendConfirmation(ack: sent.expectedAck, roundTrip: 1_600)))
        // Echo answers; the app syncs it.
        try await world.until { await world.log.frames.contains(Data([0x83])) }
        try await world.write(.syncNextMessage)
        try await world.until { await world.log.frames.last?.first == 0x10 }
        guard case .contactMessage(let reply)? = try await world.log.frames.last.map({ try MeshCoreFrame(decoding: $0) }) else {
            Issue.record("no message")
            return
        }
        #expect(reply.text == "echo: over ble")
    }

    @Test func aSyncReplyLostWithTheLinkIsRequeued() async throws {
        let world = await EmulatorBLEWorld()
        try await world.connect()
        await world.sim {
            world.network.node(named: "Alice")?.sendDirect("first", to: "Base")
            world.network.node(named: "Alice")?.sendDirect("second", to: "Base")
        }
        _ = try await world.frames(total: 2)
        #expect(await world.log.frames == [Data([0x83]), Data([0x83])])
        // The radio goes out of range the moment it takes the SYNC: its reply never gets out.
        let air = world.air, id = world.id
        await world.sim {
            world.network.observer = { _, event in
                if case .appCommand(_, 10, _) = event {
                    air.setInRange(id, false)
                    world.network.observer = nil
                }
            }
        }
        try? await world.write(.syncNextMessage)
        try await world.until { await world.sim { !world.radio.isAppConnected } }
        let lost = await world.sim { (world.radio.queuedMessageTexts, world.radio.counters.messagesRequeued) }
        #expect(lost.0 == ["first", "second"])
        #expect(lost.1 == 1)
        #expect(await world.log.frames.count == 2, "the reply never reached the app")

        // Back in range, the connection comes back and the app drains the queue in order.
        await world.sim { air.setInRange(id, true) }
        let connection = world.connection
        try await world.until { await connection.isConnected }
        for _ in 0..<3 { try await world.write(.syncNextMessage) }
        let frames = try await world.frames(total: 5)
        let texts = frames.dropFirst(2).map { frame -> String in
            if case .contactMessage(let message) = frame { return message.text }
            return "\(frame)"
        }
        #expect(texts == ["first", "second", "noMoreMessages"])
    }
}
