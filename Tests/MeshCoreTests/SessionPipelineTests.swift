import Foundation
@testable import MeshCore
import TetherCore
import Testing
import TetherTesting

/// Commands sent back to back (`MeshCoreSession.perform` with several requests): the radio
/// answers in order, and each answer reaches its own command.
@Suite("Session pipelining", .timeLimit(.minutes(3)))
struct SessionPipelineTests {
    @Test("a batch goes out before any reply, and each reply reaches its request")
    func batchBeforeReplies() async throws {
        // The radio answers nothing until three commands wait: a session that waited for each
        // reply before the next command would never finish.
        let world = await SessionWorld(window: 8, answerWhen: { $0.count >= 3 || $0.first?.code == 0x01 })
        try await world.session.start()
        let (device, clock, listing) = try await world.run {
            try await world.session.perform(.deviceQuery(), .deviceTime, .contacts())
        }
        #expect(try device.get().maxChannels == 2)
        #expect(try clock.get() == FakeRadio.radioClock)
        #expect(try listing.get().contacts == [FakeRadio.alice])
        #expect(await world.radio.codes == [0x01, 0x16, 0x05, 0x04])
        #expect(await world.radio.mostUnanswered == 3)
        // Values the session keeps are kept from a batch too.
        #expect(await world.session.deviceInfo?.maxChannels == 2)
    }

    @Test("no more commands await replies than the window allows, and an ERR answers the oldest")
    func windowAndErrors() async throws {
        // Channel 0 exists, the others are not found (ERR 2).
        let world = await SessionWorld(window: 3, answerWhen: { $0.count >= 3 || $0.first?.code == 0x01 })
        try await world.session.start()
        let results = try await world.run {
            try await world.session.perform((0..<6).map { MeshCoreRequest.channel(UInt8($0)) })
        }
        #expect(await world.radio.mostUnanswered == 3)
        #expect(try results[0].get().name == "Public")
        for result in results.dropFirst() {
            #expect(throws: MeshCoreError.commandFailed(command: "getChannel", code: .notFound)) { try result.get() }
        }
        #expect(await world.session.unexpectedReplyCount == 0)
    }

    @Test("a refusal in the middle of a batch fails that command only")
    func refusalInTheMiddle() async throws {
        let world = await SessionWorld(window: 4, reply: { command in
            if case .setDeviceTime = command { return [Data([0x01, 0x06])] }
            return FakeRadio.standard(command)
        })
        try await world.session.start()
        let setTime = MeshCoreRequest<Void>(.setDeviceTime(1), accept: { if case .ok = $0 { .complete } else { .notMine } }, read: { _ in })
        let (before, refused, after) = try await world.session.perform(.deviceTime, setTime, .batteryAndStorage)
        #expect(try before.get() == FakeRadio.radioClock)
        #expect(throws: MeshCoreError.commandFailed(command: "setDeviceTime", code: .illegalArgument)) { try refused.get() }
        #expect(try after.get().millivolts == 4120)
    }

    @Test("a command the radio never answers times out without taking the replies behind it")
    func silentCommandInTheMiddle() async throws {
        let world = await SessionWorld(window: 4, reply: { command in
            if case .getDeviceTime = command { return [] }
            return FakeRadio.standard(command)
        })
        try await world.session.start()
        let (device, clock, battery) = try await world.run {
            try await world.session.perform(.deviceQuery(), .deviceTime, .batteryAndStorage)
        }
        #expect(try device.get().firmwareVersion == "v1.17")
        #expect(throws: MeshCoreError.timeout(command: "getDeviceTime")) { try clock.get() }
        #expect(try battery.get().usedKilobytes == 12)
        // The session goes on.
        #expect(try await world.session.channel(0).name == "Public")
    }

    @Test("a cancelled batch's late replies (an ERR too) are absorbed by its commands, not taken by the next one")
    func cancelledBatch() async throws {
        let gate = Gate()
        let world = await SessionWorld(window: 8, reply: FakeRadio.standard, answerWhen: { pending in
            pending.first?.code == 0x01 || gate.isOpen
        })
        try await world.session.start()
        let session = world.session
        let batch = Task { try await session.perform((0..<2).map { MeshCoreRequest.channel(UInt8($0)) }) }
        try await world.until { await world.radio.commands.count == 3 }
        batch.cancel()
        await #expect(throws: CancellationError.self) { try await batch.value }
        // The radio answers the two channel reads now (CHANNEL_INFO, then ERR 2), with the
        // battery read sent behind them.
        gate.open()
        let battery = try await world.run { try await session.batteryAndStorage() }
        #expect(battery.totalKilobytes == 1024)
        #expect(await session.unexpectedReplyCount == 0)
    }

    @Test("a silent radio fails a whole batch in one timeout; late answers go to stand-ins or, matching no read, nowhere")
    func timeoutsAndLateAnswers() async throws {
        let gate = Gate()
        let world = await SessionWorld(window: 8, reply: { command in
            if case .getChannel(let index) = command {
                return [MeshCoreFrame.channelInfo(ChannelInfo(index: index, name: "C\(index)", secret: Data(repeating: index, count: 16))).encoded()]
            }
            return FakeRadio.standard(command)
        }, answerWhen: { $0.first?.code == 0x01 || gate.isOpen })
        try await world.session.start()
        let before = world.clock.now
        let results = try await world.run {
            try await world.session.perform((0..<4).map { MeshCoreRequest.channel(UInt8($0)) })
        }
        #expect(before.duration(to: world.clock.now) <= .seconds(6), "each read is bounded from its own write, not one timeout after another")
        for result in results {
            #expect(throws: MeshCoreError.timeout(command: "getChannel")) { try result.get() }
        }
        // The radio wakes up: channels 0–3 for the old reads come first, then the answer to a new
        // read of channel 2. Reads 0–2 had later reads behind them and left stand-ins; read 3's
        // late answer matches no read (each takes its own index only).
        gate.open()
        let info = try await world.run { try await world.session.channel(2) }
        #expect(info.name == "C2")
        let unexpected = await world.session.unexpectedReplyCount
        #expect(unexpected == 1, "late answers nobody took: \(unexpected)")
    }

    @Test("a reply the radio lost leaves nothing behind: the next command of the same kind, or a refused one, gets its own answer")
    func lostReplyDoesNotPoison() async throws {
        let lost = Counter()
        let world = await SessionWorld(window: 8, reply: { command in
            switch command {
            case .getDeviceTime where [0, 2].contains(lost.next()): []
            case .setDeviceTime: [Data([0x01, 0x06])]
            default: FakeRadio.standard(command)
            }
        })
        try await world.session.start()
        let session = world.session
        await #expect(throws: MeshCoreError.timeout(command: "getDeviceTime")) { try await world.run { try await session.deviceTime() } }
        #expect(try await world.run { try await session.deviceTime() } == FakeRadio.radioClock)
        await #expect(throws: MeshCoreError.commandFailed(command: "setDeviceTime", code: .illegalArgument)) {
            try await world.run { try await session.setDeviceTime(1) }
        }
        // Lost in a batch whose later command was answered: the radio moved past it, so nothing
        // waits for it either.
        let (clock, battery) = try await world.run { try await session.perform(.deviceTime, .batteryAndStorage) }
        _ = clock
        #expect(try battery.get().millivolts == 4120)
        #expect(try await world.run { try await session.deviceTime() } == FakeRadio.radioClock)
        await #expect(throws: MeshCoreError.commandFailed(command: "setDeviceTime", code: .illegalArgument)) {
            try await world.run { try await session.setDeviceTime(1) }
        }
    }

    @Test("at most 64 bytes of commands await replies: small ones go together, large ones one by one")
    func byteBudget() async throws {
        // The radio answers only with two commands waiting: one held alone times out.
        let world = await SessionWorld(window: 8, answerWhen: { $0.count >= 2 || $0.first?.code == 0x01 })
        try await world.session.start()
        let post = { @Sendable (text: String) in
            MeshCoreRequest<Void>(.sendChannelTextMessage(channel: 0, timestamp: 1, text: text),
                                  accept: { if case .ok = $0 { .complete } else { .notMine } }, read: { _ in })
        }
        let small = try await world.run { try await world.session.perform([post("hi"), post("yo")]) }
        #expect(small.allSatisfy { (try? $0.get()) != nil })
        let long = String(repeating: "x", count: 40)
        let large = try await world.run { try await world.session.perform([post(long), post(long)]) }
        #expect(throws: MeshCoreError.timeout(command: "sendChannelTextMessage")) { try large[0].get() }
        #expect((try? large[1].get()) != nil)
        // The first post's late OK went to the stand-in it left (more of its batch was to come),
        // and the second took its own.
        #expect(await world.session.unexpectedReplyCount == 0)
    }

    @Test("a command whose task is cancelled before it runs sends nothing and leaves the session usable")
    func cancelledBeforeItRuns() async throws {
        let world = await SessionWorld(window: 8)
        try await world.session.start()
        let session = world.session
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await session.batteryAndStorage()
        }
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(try await world.run { try await session.deviceTime() } == FakeRadio.radioClock)
        #expect(await !world.radio.codes.contains(0x14))
    }

    @Test("a message fetched by a cancelled SYNC_NEXT_MESSAGE is published, not lost")
    func cancelledFetchPublishes() async throws {
        let gate = Gate()
        let message = MeshCoreFrame.channelMessage(ChannelMessage(channelIndex: 0, pathLength: 1, timestamp: 900, text: "Bob: still there?")).encoded()
        let world = await SessionWorld(autoFetch: false, reply: { command in
            if case .syncNextMessage = command, gate.isOpen { return [message] }
            return FakeRadio.standard(command)
        }, answerWhen: { $0.first?.code == 0x01 || gate.isOpen })
        try await world.session.start()
        let events = Collector(await world.session.events())
        let session = world.session
        let fetch = Task { try await session.syncMessages() }
        try await world.until { await world.radio.commands.count == 2 }
        fetch.cancel()
        await #expect(throws: CancellationError.self) { try await fetch.value }
        gate.open()
        _ = try await world.run { try await session.deviceTime() }
        try await world.until {
            await events.items.contains { if case .channelMessage(let m) = $0 { m.text == "Bob: still there?" } else { false } }
        }
        #expect(await session.unexpectedReplyCount == 0)
    }

    @Test("an ERR that comes while a cancelled listing still streams answers the new command, and the listing's frames stay its own")
    func errDuringAbandonedListing() async throws {
        let listings = Counter()
        let bob = MeshContact(publicKey: Data(repeating: 0xB0, count: 32), type: .chat, name: "Bob", lastAdvert: 1, lastModified: 2)
        let world = await SessionWorld(window: 8, reply: { command in
            guard case .getContacts = command else { return FakeRadio.standard(command) }
            switch listings.next() {
            // The first listing begins and stalls.
            case 0: return [FakeRadio.frame(.contactsStart(count: 2)), FakeRadio.frame(.contact(FakeRadio.alice))]
            // A second GET_CONTACTS while it runs: the firmware refuses it (bad state) between
            // the first listing's remaining frames.
            case 1: return [Data([0x01, 0x04]), FakeRadio.frame(.contact(bob)), FakeRadio.frame(.endOfContacts(lastModified: 2))]
            default: return FakeRadio.standard(command)
            }
        })
        try await world.session.start()
        let session = world.session
        let first = Task { try await session.contacts() }
        try await world.until { await world.radio.commands.count == 2 }
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        await #expect(throws: MeshCoreError.commandFailed(command: "getContacts", code: .badState)) {
            try await world.run { try await session.contacts() }
        }
        #expect(try await world.run { try await session.contacts() }.contacts == [FakeRadio.alice])
        #expect(await session.unexpectedReplyCount == 0)
    }

    @Test("a link that refuses a frame fails the rest of the batch with the same error")
    func sendFailure() async throws {
        let world = await SessionWorld(window: 8)
        // Never connected: the mock refuses every send.
        let results = try await world.session.perform([MeshCoreRequest.deviceTime, .deviceTime, .deviceTime])
        #expect(results.count == 3)
        for result in results {
            #expect(throws: MeshCoreError.self) { try result.get() }
        }
        #expect(await world.radio.commands.isEmpty)
    }

    @Test("the connection manager's startup takes four exchanges when eight commands may be in flight")
    func managerStartupPipelined() async throws {
        // The radio answers only at the end of each exchange the manager should send together.
        let world = try await ManagerWorld(window: 8, answerWhen: { pending in
            switch pending.last {
            case .appStart?, .getContacts?, .syncNextMessage?, .setDeviceTime?: true
            case .getChannel(let index)?: index == 1
            default: false
            }
        })
        #expect(try await world.connect() == nil)
        #expect(await world.manager.state == .ready)
        #expect(await world.radio.codes == [0x01, 0x16, 0x05, 0x04, 0x1F, 0x1F, 0x0A])
        #expect(await world.radio.mostUnanswered == 3)
        #expect(await world.manager.contacts == [FakeRadio.alice])
        #expect(await world.manager.channels.map(\.name) == ["Public"])
    }

    @Test("the transports' windows follow the firmware's queues")
    func transportWindows() async {
        #expect(StreamTransport.tcp(host: "127.0.0.1", port: 5000).maximumCommandsInFlight == 8)
        #expect(StreamTransport.serial(path: "/dev/null").maximumCommandsInFlight == 4)
        #expect(MockTransport().maximumCommandsInFlight == 1)
        // A configured window wins, and is at least one.
        #expect(MeshCoreSession.Configuration(maximumCommandsInFlight: 0).maximumCommandsInFlight == 1)
    }
}

/// Counts calls, for a fake radio whose answers change.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func next() -> Int { lock.withLock { defer { count += 1 }; return count } }
}

/// A flag the fake radio reads from its answer rule.
private final class Gate: @unchecked Sendable {
    private let lock = NSLock()
    private var opened = false
    var isOpen: Bool { lock.withLock { opened } }
    func open() { lock.withLock { opened = true } }
}
