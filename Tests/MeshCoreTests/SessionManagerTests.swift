import Foundation
@testable import MeshCore
import TetherCore
import Testing
import TetherTesting
@testable import MeshCoreStorage

/// A connection manager over a `FakeRadio` on a test clock.
struct ManagerWorld {
    let base: SessionWorld
    let manager: ConnectionManager
    let store: MeshStore
    let events: Collector<ConnectionManager.Event>

    init(radioClockAhead: Bool = false, window: Int? = nil, reply: @escaping @Sendable (MeshCoreCommand) -> [Data] = FakeRadio.standard,
         answerWhen: (@Sendable ([MeshCoreCommand]) -> Bool)? = nil,
         configuration: ConnectionManager.Configuration = ConnectionManager.Configuration()) async throws {
        base = await SessionWorld(window: window, reply: reply, answerWhen: answerWhen)
        store = try MeshStore.inMemory()
        manager = ConnectionManager(session: base.session, store: store, configuration: configuration, clock: base.clock, wallClock: { SessionWorld.now })
        events = Collector(await manager.events())
    }

    var radio: FakeRadio { base.radio }

    var states: [ConnectionManager.State] {
        get async { await events.items.compactMap { if case .state(let s) = $0 { s } else { nil } } }
    }

    /// Connects in virtual time; returns the error, if any.
    func connect() async throws -> MeshCoreError? {
        let manager = self.manager
        return try await base.run {
            do { try await manager.connect(); return nil } catch let error as MeshCoreError { return error }
        }
    }
}


@Suite("Session connection manager", .timeLimit(.minutes(3)))
struct SessionManagerTests {
    @Test("startup: APP_START, DEVICE_QUERY, time, contacts, channels, drain — then ready")
    func startupSequence() async throws {
        let world = try await ManagerWorld()
        #expect(try await world.connect() == nil)
        #expect(await world.manager.state == .ready)
        #expect(await world.radio.codes == [0x01, 0x16, 0x05, 0x04, 0x1F, 0x1F, 0x0A])
        #expect(await world.states == [.disconnected, .connecting, .connected, .ready])
        #expect(await world.manager.contacts == [FakeRadio.alice])
        #expect(await world.manager.channels.map(\.name) == ["Public"])
        #expect(try await world.store.contacts() == [FakeRadio.alice])
        #expect(try await world.store.channels().count == 1)
    }

    @Test("time is set only when the radio drifted more than 60 s")
    func timeSyncOnlyOnDrift() async throws {
        let farBehind = FakeRadio.radioClock - 3600
        let world = try await ManagerWorld(reply: { command in
            if case .getDeviceTime = command { return [MeshCoreFrame.currentTime(farBehind).encoded()] }
            return FakeRadio.standard(command)
        })
        #expect(try await world.connect() == nil)
        let sets = await world.radio.commands.compactMap { if case .setDeviceTime(let t) = $0 { t } else { nil } }
        #expect(sets == [UInt32(SessionWorld.now.timeIntervalSince1970)])
    }

    @Test("a radio clock ahead that refuses an earlier time (ERR 6) does not stop the startup")
    func radioClockAhead() async throws {
        let world = try await ManagerWorld(reply: { command in
            switch command {
            case .getDeviceTime: [MeshCoreFrame.currentTime(FakeRadio.radioClock + 7200).encoded()]
            case .setDeviceTime: [Data([0x01, 0x06])]
            default: FakeRadio.standard(command)
            }
        })
        #expect(try await world.connect() == nil)
        #expect(await world.manager.state == .ready)
    }

    static let failingSteps: [(ConnectionManager.StartupStep, UInt8, Bool)] = [
        (.appStart, 0x01, false), (.deviceQuery, 0x16, false), (.timeSync, 0x05, false),
        (.contacts, 0x04, false), (.channels, 0x1F, false), (.messages, 0x0A, false),
        (.appStart, 0x01, true), (.deviceQuery, 0x16, true), (.timeSync, 0x05, true),
        (.contacts, 0x04, true), (.channels, 0x1F, true), (.messages, 0x0A, true),
    ]

    @Test("each startup step failing (ERR or silence) ends disconnected with the step named, never stuck connecting, one command or eight in flight",
          arguments: failingSteps, [nil, 8] as [Int?])
    func stepFailure(step: (ConnectionManager.StartupStep, UInt8, Bool), window: Int?) async throws {
        let (step, code, silent) = step
        let world = try await ManagerWorld(window: window, reply: { command in
            guard command.code == code else { return FakeRadio.standard(command) }
            return silent ? [] : [Data([0x01, 0x04])]
        })
        let error = try await world.connect()
        #expect(error == .startupFailed(step: step.rawValue, reason: (silent
            ? MeshCoreError.timeout(command: Self.commandName(code))
            : MeshCoreError.commandFailed(command: Self.commandName(code), code: .badState)).localizedDescription))
        #expect(await world.manager.state == .disconnected)
        // The state events trail the call that caused them: await the last one.
        await world.events.until { events in
            events.last { if case .state = $0 { true } else { false } }.map { if case .state(.disconnected) = $0 { true } else { false } } ?? false
        }
        #expect(await world.states.last == .disconnected)
        #expect(await !world.radio.mock.isConnected)
        #expect(await world.manager.lastError == error)
        // And a later attempt succeeds once the radio behaves.
        await world.radio.setReply(FakeRadio.standard)
        #expect(try await world.connect() == nil)
        #expect(await world.manager.state == .ready)
    }

    static func commandName(_ code: UInt8) -> String { "\(MeshCoreCommandCode(rawValue: code)!)" }

    @Test("a channel message pushed during the startup is not lost")
    func messageDuringStartup() async throws {
        let queue = MessageQueue([])
        let mockBox = MockBox()
        let world = try await ManagerWorld(reply: { command in
            if case .getContacts = command {
                // A message arrives at the radio while contacts load.
                queue.push(MeshCoreFrame.channelMessage(ChannelMessage(channelIndex: 0, pathLength: 2, timestamp: 500, text: "Bob: are you there?")).encoded())
                mockBox.pushWaiting()
            }
            if case .syncNextMessage = command { return [queue.next() ?? Data([0x0A])] }
            return FakeRadio.standard(command)
        })
        mockBox.mock = world.radio.mock
        #expect(try await world.connect() == nil)
        try await world.base.until { try! await world.store.messages().count == 1 }
        let stored = try await world.store.messages()
        #expect(stored.map(\.text) == ["are you there?"])
        #expect(stored.first?.senderName == "Bob")
        let published = await world.events.items.filter { if case .message = $0 { true } else { false } }
        #expect(published.count == 1)
    }

    @Test("OS reconnection during message arrival: startup runs again, every queued message delivered once")
    func reconnectionDeliversOnce() async throws {
        let queue = MessageQueue([])
        let world = try await ManagerWorld(reply: { command in
            if case .syncNextMessage = command { return [queue.next() ?? Data([0x0A])] }
            return FakeRadio.standard(command)
        })
        #expect(try await world.connect() == nil)
        // Three messages queue up; the link drops before the app fetches them.
        for index in 0..<3 {
            queue.push(MeshCoreFrame.contactMessage(ContactMessage(senderPrefix: FakeRadio.aliceKey.prefix(6), pathLength: 1, timestamp: UInt32(1000 + index), text: "m\(index)")).encoded())
        }
        await world.radio.mock.simulateLinkLoss(reconnecting: true)
        try await world.base.until { await world.manager.state == .connecting }
        // One of them the radio hands over twice (it re-queued it when the link dropped).
        queue.push(MeshCoreFrame.contactMessage(ContactMessage(senderPrefix: FakeRadio.aliceKey.prefix(6), pathLength: 1, timestamp: 1000, text: "m0")).encoded())
        await world.radio.mock.simulateReconnection()
        try await world.base.until { await world.manager.readyCount == 2 }
        let texts = try await world.store.messages().map(\.text)
        #expect(texts == ["m0", "m1", "m2"])
        let published = await world.events.items.compactMap { if case .message(let m) = $0 { m.text } else { nil } }
        #expect(published == ["m0", "m1", "m2"])
        #expect(await world.states.suffix(4) == [.ready, .connecting, .connected, .ready])
    }

    @Test("a dropped stream link is reported disconnected at once, then reconnected with backoff")
    func streamLinkDropReconnects() async throws {
        let world = try await ManagerWorld()
        #expect(try await world.connect() == nil)
        await world.radio.mock.setConnectError(MeshTransportError.connectionFailed("refused"))
        await world.radio.mock.simulateLinkLoss(reconnecting: false)
        try await world.base.until { await world.manager.state == .disconnected }
        #expect(await world.manager.state == .disconnected)
        let start = world.base.clock.now
        // The first attempt (after 1 s) fails; the second (2 s later) succeeds.
        try await world.base.until { await world.radio.mock.connectCount >= 1 && start.duration(to: world.base.clock.now) >= .milliseconds(1500) }
        await world.radio.mock.setConnectError(nil)
        try await world.base.until { await world.manager.state == .ready }
        #expect(start.duration(to: world.base.clock.now) >= .seconds(3))
        #expect(await world.manager.readyCount == 2)
    }

    @Test("disconnect() stops everything and stays disconnected")
    func userDisconnect() async throws {
        let world = try await ManagerWorld()
        #expect(try await world.connect() == nil)
        await world.manager.disconnect()
        #expect(await world.manager.state == .disconnected)
        #expect(await !world.radio.mock.isConnected)
        await world.base.time.advance(.seconds(60))
        #expect(await world.manager.state == .disconnected)
    }

    @Test("sending a direct message stores it and marks it delivered on the ack")
    func sendStoresAndAcknowledges() async throws {
        let world = try await ManagerWorld(reply: { command in
            var out = FakeRadio.standard(command)
            if case .sendTextMessage = command { out.append(MeshCoreFrame.sendConfirmed(SendConfirmation(ack: 0xA1B2_C3D4, roundTrip: 900)).encoded()) }
            return out
        })
        #expect(try await world.connect() == nil)
        let manager = world.manager
        let alice = try #require(await manager.contact(named: "alice"))
        let sent = try await world.base.run { try await manager.sendMessage("hello", to: alice) }
        #expect(sent.status == .delivered)
        let stored = try await world.store.messages()
        #expect(stored.count == 1)
        #expect(stored[0].status == .delivered)
        #expect(stored[0].roundTrip == 900)
        #expect(stored[0].direction == .outgoing)
    }
}

/// Lets a reply closure push MSG_WAITING through the mock.
final class MockBox: @unchecked Sendable {
    var mock: MockTransport?
    func pushWaiting() { push(Data([0x83])) }
    func push(_ frame: Data) {
        guard let mock else { return }
        Task { await mock.simulateReceive(frame) }
    }
}
