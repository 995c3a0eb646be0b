import Foundation
@testable import MeshCore
import TetherCore
import Testing
import TetherTesting

@Suite("Session", .timeLimit(.minutes(3)))
struct SessionTests {
    @Test("send before connect throws not-connected; start connects and performs APP_START → SELF_INFO")
    func startPerformsAppStart() async throws {
        let world = await SessionWorld()
        await #expect(throws: BLEError.notConnected) { try await world.radio.mock.send(Data([0x16, 0x03])) }
        let info = try await world.session.start()
        #expect(info.name == "Base")
        #expect(info.radioFrequency == 869.525)
        let sent = await world.radio.mock.sentData
        #expect(sent.count == 1)
        #expect(Array(sent[0].prefix(8)) == [0x01, 0x03, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20])
        #expect(String(decoding: sent[0].dropFirst(8), as: UTF8.self) == "Tether")
        #expect(await world.session.isStarted)
        #expect(await world.radio.mock.isConnected)
    }

    @Test("hand-written SELF_INFO bytes are parsed")
    func handWrittenSelfInfo() async throws {
        let key = (0..<32).map { String(format: "%02X", $0) }.joined()
        let bytes = ProtocolTestSupport.hex(
            "05 01 16 16 " + key + " 40 E2 01 00  C0 1D FE FF  00 00 00 00  A8 45 0D 00  90 D0 03 00  0B 05 " + "54 65 73 74")
        let world = await SessionWorld(reply: { command in
            if case .appStart = command { return [bytes] }
            return []
        })
        let info = try await world.session.start()
        #expect(info.name == "Test")
        #expect(info.txPower == 22)
        #expect(info.latitude == 0.123456)
        #expect(info.radioFrequency == 869.8)
        #expect(info.radioBandwidth == 250)
        #expect(info.spreadingFactor == 11)
    }

    @Test("device query asks for V3 (`16 03`) and parses DEVICE_INFO")
    func deviceQuery() async throws {
        let world = await SessionWorld()
        try await world.session.start()
        await world.radio.mock.clearSentData()
        let info = try await world.session.deviceQuery()
        #expect(await world.radio.mock.sentData == [Data([0x16, 0x03])])
        #expect(info.firmwareVersionCode == 13)
        #expect(info.maxContacts == 100)
        #expect(await world.session.deviceInfo == info)
    }

    @Test("battery and storage, time, channel, name, advert")
    func simpleCommands() async throws {
        let world = await SessionWorld()
        try await world.session.start()
        let battery = try await world.session.batteryAndStorage()
        #expect(battery == BatteryAndStorage(millivolts: 4120, usedKilobytes: 12, totalKilobytes: 1024))
        #expect(try await world.session.deviceTime() == FakeRadio.radioClock)
        let channel = try await world.session.channel(0)
        #expect(channel.name == "Public")
        try await world.session.setAdvertName("Base 2")
        try await world.session.sendSelfAdvert(flood: true)
        try await world.session.sendSelfAdvert(flood: false)
        try await world.session.setDeviceTime(1_704_067_200)
        let sent = Array(await world.radio.mock.sentData.dropFirst())
        let name: Data = Data([0x08]) + Data("Base 2".utf8)
        let expected: [Data] = [
            Data([0x14]), Data([0x05]), Data([0x1F, 0x00]), name,
            Data([0x07, 0x01]), Data([0x07]), Data([0x06, 0x80, 0x00, 0x92, 0x65]),
        ]
        #expect(sent == expected)
    }

    @Test("contacts: full listing and since")
    func contacts() async throws {
        let world = await SessionWorld()
        try await world.session.start()
        let list = try await world.session.contacts()
        #expect(list.contacts == [FakeRadio.alice])
        #expect(list.lastModified == FakeRadio.alice.lastModified)
        _ = try await world.session.contacts(since: 1_767_225_000)
        #expect(await world.radio.mock.sentData.last == Data([0x04, 0xA8, 0xB6, 0x55, 0x69]))
    }

    @Test("an ERR reply becomes a typed error for each code")
    func errorCodes() async throws {
        for code: UInt8 in 1...6 {
            let world = await SessionWorld(reply: { command in
                if case .appStart = command { return FakeRadio.standard(command) }
                return [Data([0x01, code])]
            })
            try await world.session.start()
            let error = await #expect(throws: MeshCoreError.self) { try await world.session.setDeviceTime(1) }
            #expect(error?.radioErrorCode == MeshCoreErrorCode(rawValue: code))
            // The session stays usable after an error.
            await world.radio.setReply(FakeRadio.standard)
            #expect(try await world.session.deviceTime() == FakeRadio.radioClock)
        }
    }

    @Test("set time earlier than the radio's clock: ERR 6 → illegal argument")
    func backwardsTime() async throws {
        let world = await SessionWorld(reply: { command in
            if case .setDeviceTime(let seconds) = command, seconds < FakeRadio.radioClock { return [Data([0x01, 0x06])] }
            return FakeRadio.standard(command)
        })
        try await world.session.start()
        let error = await #expect(throws: MeshCoreError.self) { try await world.session.setDeviceTime(FakeRadio.radioClock - 1) }
        #expect(error == .commandFailed(command: "setDeviceTime", code: .illegalArgument))
        try await world.session.setDeviceTime(FakeRadio.radioClock + 10)
    }

    @Test("a command without a reply times out after 5 s of virtual time; the next one works")
    func commandTimeout() async throws {
        let world = await SessionWorld(reply: { command in
            if case .getBatteryAndStorage = command { return [] }
            return FakeRadio.standard(command)
        })
        try await world.session.start()
        let session = world.session, clock = world.clock
        let start = clock.now
        let outcome = try await world.run { () -> MeshCoreError? in
            do { _ = try await session.batteryAndStorage(); return nil } catch let error as MeshCoreError { return error }
        }
        #expect(outcome == .timeout(command: "getBatteryAndStorage"))
        let elapsed = start.duration(to: clock.now)
        #expect(elapsed >= .seconds(5) && elapsed < .milliseconds(5100))
        #expect(try await world.session.deviceTime() == FakeRadio.radioClock)
    }

    @Test("concurrent callers each get their own reply, with pushes interleaved")
    func concurrentCorrelation() async throws {
        let world = await SessionWorld(autoFetch: false, reply: { command in
            var out: [Data] = [Data([0x80]) + Data(repeating: 7, count: 32)]  // an ADVERT push before every reply
            out += FakeRadio.standard(command)
            return out
        })
        try await world.session.start()
        let session = world.session
        async let time = session.deviceTime()
        async let battery = session.batteryAndStorage()
        async let info = session.deviceQuery()
        async let channel = session.channel(0)
        async let contacts = session.contacts()
        let results = try await (time, battery, info, channel, contacts)
        #expect(results.0 == FakeRadio.radioClock)
        #expect(results.1.millivolts == 4120)
        #expect(results.2.firmwareVersionCode == 13)
        #expect(results.3.name == "Public")
        #expect(results.4.contacts.count == 1)
        #expect(await session.unexpectedReplyCount == 0)
    }

    @Test("20 concurrent callers on a radio that answers in order, each matched")
    func manyConcurrentCallers() async throws {
        let world = await SessionWorld()
        try await world.session.start()
        let session = world.session
        let values = try await withThrowingTaskGroup(of: (Int, UInt8).self) { group in
            for index in 0..<20 {
                group.addTask {
                    if index.isMultiple(of: 2) {
                        return (index, try await session.channel(0).index)
                    } else {
                        return (index, UInt8(truncatingIfNeeded: try await session.batteryAndStorage().millivolts))
                    }
                }
            }
            var all: [Int: UInt8] = [:]
            for try await (index, value) in group { all[index] = value }
            return all
        }
        for (index, value) in values {
            #expect(value == (index.isMultiple(of: 2) ? 0 : UInt8(truncatingIfNeeded: 4120)))
        }
        #expect(values.count == 20)
    }

    @Test("channel message: the radio answers OK")
    func channelMessage() async throws {
        let world = await SessionWorld()
        try await world.session.start()
        try await world.session.sendChannelMessage("hello mesh", channel: 0, timestamp: 1_704_067_200)
        #expect(await world.radio.mock.sentData.last == Data([0x03, 0x00, 0x00, 0x80, 0x00, 0x92, 0x65]) + Data("hello mesh".utf8))
    }

    @Test("direct message: SENT, then SEND_CONFIRMED with the same ack")
    func directMessageAcknowledged() async throws {
        let world = await SessionWorld(reply: { command in
            var out = FakeRadio.standard(command)
            if case .sendTextMessage = command { out.append(Data([0x82, 0xD4, 0xC3, 0xB2, 0xA1, 0xE8, 0x03, 0x00, 0x00])) }
            return out
        })
        try await world.session.start()
        let session = world.session
        let delivery = try await world.run { try await session.sendMessageAwaitingAcknowledgement(to: FakeRadio.aliceKey, text: "hi", timestamp: 1_704_067_200) }
        #expect(delivery.attempts == 1)
        #expect(delivery.confirmation == SendConfirmation(ack: 0xA1B2_C3D4, roundTrip: 1000))
        let sent = await world.radio.mock.sentData.last!
        #expect(sent == Data([0x02, 0x00, 0x00, 0x80, 0x00, 0x92, 0x65]) + FakeRadio.aliceKey.prefix(6) + Data("hi".utf8))
    }

    @Test("direct message: no ack → retried with the attempt raised; after two, the path is reset and it floods")
    func directMessageRetried() async throws {
        let world = await SessionWorld(reply: { command in
            if case .resetPath = command { return [MeshCoreFrame.ok(value: nil).encoded()] }
            guard case .sendTextMessage(let message) = command else { return FakeRadio.standard(command) }
            let ack = UInt32(0x1000 + UInt32(message.attempt))
            // Direct until the path is reset; the flooded third attempt is acknowledged.
            let flood = message.attempt == 2
            var out = [MeshCoreFrame.sent(SentResult(isFlood: flood, expectedAck: ack, suggestedTimeout: 3000)).encoded()]
            if flood { out.append(MeshCoreFrame.sendConfirmed(SendConfirmation(ack: ack, roundTrip: 2500)).encoded()) }
            return out
        })
        try await world.session.start()
        let session = world.session, clock = world.clock
        let start = clock.now
        let delivery = try await world.run { try await session.sendMessageAwaitingAcknowledgement(to: FakeRadio.aliceKey, text: "ping") }
        #expect(delivery.attempts == 3)
        #expect(delivery.confirmation.ack == 0x1002)
        #expect(delivery.sent.isFlood)
        // Two unanswered waits of 3 s × 1.25 each.
        #expect(start.duration(to: clock.now) >= .milliseconds(7500))
        let sends = await world.radio.commands.compactMap { command -> String? in
            switch command {
            case .sendTextMessage(let message): "send \(message.attempt)"
            case .resetPath(let key): key == FakeRadio.aliceKey ? "reset" : "reset other"
            default: nil
            }
        }
        #expect(sends == ["send 0", "send 1", "reset", "send 2"])
    }

    @Test("a contact reached by flooding gets two flooded sends, then the message is reported not acknowledged")
    func floodedMessageRetriedTwice() async throws {
        let world = await SessionWorld(reply: { command in
            guard case .sendTextMessage(let message) = command else { return FakeRadio.standard(command) }
            return [MeshCoreFrame.sent(SentResult(isFlood: true, expectedAck: 0x2000 + UInt32(message.attempt), suggestedTimeout: 3000)).encoded()]
        })
        try await world.session.start()
        let session = world.session
        let failure = try await world.run { () -> MeshCoreError? in
            do { _ = try await session.sendMessageAwaitingAcknowledgement(to: FakeRadio.aliceKey, text: "anyone?"); return nil }
            catch let error as MeshCoreError { return error }
        }
        #expect(failure == .notAcknowledged(attempts: 2))
        #expect(await world.radio.commands.contains { if case .resetPath = $0 { true } else { false } } == false)
    }

    @Test("an acknowledgement of an earlier attempt that arrives during a retry still counts")
    func lateAckOfEarlierAttempt() async throws {
        let mockBox = MockBox()
        let world = await SessionWorld(reply: { command in
            guard case .sendTextMessage(let message) = command else { return FakeRadio.standard(command) }
            // Attempt 0's ack only comes back once attempt 1 is under way.
            if message.attempt == 1 {
                mockBox.push(MeshCoreFrame.sendConfirmed(SendConfirmation(ack: 0x1000, roundTrip: 4000)).encoded())
            }
            return [MeshCoreFrame.sent(SentResult(isFlood: true, expectedAck: 0x1000 + UInt32(message.attempt), suggestedTimeout: 3000)).encoded()]
        })
        mockBox.mock = world.radio.mock
        try await world.session.start()
        let session = world.session
        let delivery = try await world.run { try await session.sendMessageAwaitingAcknowledgement(to: FakeRadio.aliceKey, text: "slow path") }
        #expect(delivery.attempts == 2)
        #expect(delivery.confirmation.ack == 0x1000)
        #expect(delivery.sent.expectedAck == 0x1000)
    }

    @Test("a fetched message that arrives after its SYNC_NEXT_MESSAGE timed out is published, not lost")
    func lateSyncReplyPublished() async throws {
        let late = MeshCoreFrame.contactMessage(ContactMessage(senderPrefix: FakeRadio.aliceKey.prefix(6), pathLength: 1, timestamp: 77, text: "slow radio")).encoded()
        let world = await SessionWorld(autoFetch: false, reply: { command in
            if case .syncNextMessage = command { return [] }
            return FakeRadio.standard(command)
        })
        let events = Collector(await world.session.events())
        try await world.session.start()
        let session = world.session
        let outcome = try await world.run { () -> MeshCoreError? in
            do { _ = try await session.syncMessages(); return nil } catch let error as MeshCoreError { return error }
        }
        #expect(outcome == .timeout(command: "syncNextMessage"))
        await world.radio.mock.simulateReceive(late)
        try await world.until { await events.count >= 1 }
        guard case .contactMessage(let message)? = await events.items.first else {
            Issue.record("expected the late message, got \(await events.items)")
            return
        }
        #expect(message.text == "slow radio")
        #expect(message.timestamp == 77)
    }

    @Test("cancelling a caller ends its command at once, and the session goes on")
    func cancellation() async throws {
        let world = await SessionWorld(reply: { command in
            if case .getBatteryAndStorage = command { return [] }
            return FakeRadio.standard(command)
        })
        try await world.session.start()
        let session = world.session
        let task = Task { try await session.batteryAndStorage() }
        try await world.until { await world.radio.codes.contains(0x14) }
        task.cancel()
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(try await world.session.deviceTime() == FakeRadio.radioClock)
    }

    @Test("direct message never acknowledged → notAcknowledged; unknown contact → ERR 2")
    func directMessageFails() async throws {
        let world = await SessionWorld()
        try await world.session.start()
        let session = world.session
        let outcome = try await world.run { () -> MeshCoreError? in
            do { _ = try await session.sendMessageAwaitingAcknowledgement(to: FakeRadio.aliceKey, text: "x", policy: MessageRetryPolicy(maxAttempts: 2)); return nil }
            catch let error as MeshCoreError { return error }
        }
        #expect(outcome == .notAcknowledged(attempts: 2))
        await world.radio.setReply { command in
            if case .sendTextMessage = command { return [Data([0x01, 0x02])] }
            return FakeRadio.standard(command)
        }
        let error = await #expect(throws: MeshCoreError.self) { _ = try await session.sendMessage(to: Data(repeating: 9, count: 6), text: "x") }
        #expect(error?.radioErrorCode == .notFound)
    }

    @Test("MSG_WAITING drains the queue until NO_MORE_MESSAGES, both message formats")
    func messageSyncOnWaiting() async throws {
        let queue = MessageQueue([
            MeshCoreFrame.contactMessage(ContactMessage(senderPrefix: FakeRadio.aliceKey.prefix(6), pathLength: 0xFF, timestamp: 100, text: "v3 direct", snr: 7.5)).encoded(),
            ProtocolTestSupport.hex("07 A0 A1 A2 A3 A4 A5 02 00 65 00 00 00") + Data("legacy direct".utf8),
            ProtocolTestSupport.hex("11 1C 00 00 00 01 00 66 00 00 00") + Data("Bob: v3 channel".utf8),
            ProtocolTestSupport.hex("08 00 01 00 67 00 00 00") + Data("Carol: legacy channel".utf8),
        ])
        let world = await SessionWorld(reply: { command in
            if case .syncNextMessage = command { return [queue.next() ?? Data([0x0A])] }
            return FakeRadio.standard(command)
        })
        let events = Collector(await world.session.events())
        try await world.session.start()
        await world.radio.mock.simulateReceive(Data([0x83]))
        try await world.until { await events.count >= 5 }
        let items = await events.items
        #expect(items.first == .messageWaiting)
        let texts = items.compactMap { event -> String? in
            switch event {
            case .contactMessage(let message): message.text
            case .channelMessage(let message): "\(message.senderName ?? "?")|\(message.body)"
            default: nil
            }
        }
        #expect(texts == ["v3 direct", "legacy direct", "Bob|v3 channel", "Carol|legacy channel"])
        let syncs = await world.radio.codes.filter { $0 == 0x0A }.count
        #expect(syncs == 5)
    }

    @Test("malformed and unexpected frames are skipped and counted; the session goes on")
    func malformedFramesSkipped() async throws {
        let world = await SessionWorld()
        try await world.session.start()
        await world.radio.mock.simulateReceive(Data())
        await world.radio.mock.simulateReceive(Data([0x05, 0x01]))  // truncated SELF_INFO
        await world.radio.mock.simulateReceive(Data([0x09, 0x01, 0x02, 0x03, 0x04]))  // CURR_TIME nobody asked for
        try await world.until { await world.session.unexpectedReplyCount == 1 }
        #expect(try await world.session.deviceTime() == FakeRadio.radioClock)
        #expect(await world.session.malformedFrameCount == 2)
        #expect(await world.session.unexpectedReplyCount == 1)
    }

    @Test("a link loss fails the command in flight at once with linkLost")
    func linkLossFailsPending() async throws {
        let world = await SessionWorld(reply: { command in
            if case .getContacts = command { return [] }
            return FakeRadio.standard(command)
        })
        try await world.session.start()
        let session = world.session
        let task = Task { () -> MeshCoreError? in
            do { _ = try await session.contacts(); return nil } catch let error as MeshCoreError { return error } catch { return nil }
        }
        try await world.until { await world.radio.codes.contains(0x04) }
        await world.radio.mock.simulateLinkLoss()
        #expect(await task.value == .linkLost)
        #expect(await !session.isStarted)
    }
}

/// A queue of frames handed out one at a time (thread-safe).
final class MessageQueue: @unchecked Sendable {
    private let lock = NSLock()
    private var frames: [Data]
    init(_ frames: [Data]) { self.frames = frames }
    func next() -> Data? {
        lock.lock(); defer { lock.unlock() }
        return frames.isEmpty ? nil : frames.removeFirst()
    }
    func push(_ frame: Data) {
        lock.lock(); defer { lock.unlock() }
        frames.append(frame)
    }
    var count: Int {
        lock.lock(); defer { lock.unlock() }
        return frames.count
    }
}
