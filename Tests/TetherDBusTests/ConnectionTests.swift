import Foundation
import Glibc
import Testing

@testable import TetherDBus

/// glibc's `pipe2`, which the Glibc module does not import (it needs `_GNU_SOURCE`).
@_silgen_name("pipe2")
private func pipe2(_ fds: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32

/// A pipe, both ends close-on-exec from the start, so a `dbus-daemon` another test spawns
/// meanwhile cannot inherit an end (which would keep the pipe's reader count up).
private func makePipe() throws -> (read: Int32, write: Int32) {
    var fds: [Int32] = [0, 0]
    guard pipe2(&fds, O_CLOEXEC) == 0 else { throw TestFailure("pipe2: \(String(cString: strerror(errno)))") }
    return (fds[0], fds[1])
}

private func writeAll(_ fd: Int32, _ text: String) throws {
    let bytes = Array(text.utf8)
    guard Glibc.write(fd, bytes, bytes.count) == bytes.count else { throw TestFailure("write: \(String(cString: strerror(errno)))") }
}

/// Reads `count` bytes from `fd`, waiting at most 10 s for each chunk.
private func readExactly(_ fd: Int32, _ count: Int) -> String? {
    var bytes: [UInt8] = []
    while bytes.count < count {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, 10_000) == 1 else { return nil }
        var chunk = [UInt8](repeating: 0, count: count - bytes.count)
        let got = Glibc.read(fd, &chunk, chunk.count)
        guard got > 0 else { return nil }
        bytes += chunk[0..<got]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Whether every read end of the pipe whose write end is `fd` has been closed (Linux reports
/// POLLERR on a pipe's write end once it has no readers).
private func pipeHasNoReaders(_ writeEnd: Int32) -> Bool {
    var pfd = pollfd(fd: writeEnd, events: Int16(POLLOUT), revents: 0)
    return poll(&pfd, 1, 0) == 1 && pfd.revents & Int16(POLLERR) != 0
}

private func call(_ destination: String, _ path: DBusObjectPath, _ member: String, _ body: [DBusValue] = []) -> DBusMessage {
    .methodCall(destination: destination, path: path, interface: "com.example.Test", member: member, body: body)
}

/// A weak reference to a connection.
private final class WeakConnection: @unchecked Sendable {
    weak var object: DBusConnection?
}

/// Keeps incoming calls alive without answering them, and tells when one arrived.
private final class CallHolder: @unchecked Sendable {
    private let lock = NSLock()
    private var calls: [DBusIncomingCall] = []
    let arrived = OneShot<Void>()

    func hold(_ call: DBusIncomingCall) {
        lock.withLock { calls.append(call) }
        arrived.fulfill(())
    }

    var held: [DBusIncomingCall] { lock.withLock { calls } }
}

@Suite("Connection on a private dbus-daemon")
struct ConnectionTests {
    // MARK: Connecting

    @Test func helloGivesEachConnectionAUniqueName() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let a = try await bus.connect()
        defer { a.close() }
        let b = try await bus.connect()
        defer { b.close() }
        #expect(a.uniqueName.hasPrefix(":"))
        #expect(b.uniqueName.hasPrefix(":"))
        #expect(a.uniqueName != b.uniqueName)
        #expect(a.authenticationMechanism == "EXTERNAL")
        #expect(a.supportsUnixFDs)
        #expect(!a.isClosed)
        #expect(a.address == bus.address)
    }

    @Test func listNamesShowsTheBusAndBothPeers() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let a = try await bus.connect()
        defer { a.close() }
        let b = try await bus.connect()
        defer { b.close() }
        let names = try #require(try await a.callBus("ListNames").body.first?.stringArray)
        #expect(names.contains("org.freedesktop.DBus"))
        #expect(names.contains(a.uniqueName))
        #expect(names.contains(b.uniqueName))
        let owner = try await a.callBus("GetNameOwner", [.string(b.uniqueName)])
        #expect(owner.body == [.string(b.uniqueName)])
        #expect(owner.sender == "org.freedesktop.DBus")
    }

    @Test func abstractSocketsWork() async throws {
        let bus = try await PrivateBus.start(.unixAbstract)
        defer { bus.stop() }
        guard case .unixAbstract = bus.address.transports.first else {
            throw TestFailure("expected an abstract address, got \(bus.address)")
        }
        let a = try await bus.connect()
        defer { a.close() }
        #expect(a.uniqueName.hasPrefix(":"))
        #expect(a.supportsUnixFDs)
    }

    @Test func laterAlternativesAreTriedWhenEarlierOnesFail() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let missing = bus.directory.appendingPathComponent("no-such-socket").path
        let address = try DBusAddress(parsing: "unix:path=\(missing);\(bus.address.text)")
        let a = try await withTimeout("connecting") { try await DBusConnection.connect(to: address) }
        defer { a.close() }
        #expect(a.uniqueName.hasPrefix(":"))
    }

    @Test func connectingWhereNoServerListensFailsWithNoServer() async throws {
        let nowhere = FileManager.default.temporaryDirectory.appendingPathComponent("tether-no-bus-\(UUID().uuidString)").path
        for text in ["unix:path=\(nowhere)", "unix:abstract=tether-no-bus-\(UUID().uuidString)", "tcp:host=127.0.0.1,port=1"] {
            let address = try DBusAddress(parsing: text)
            let outcome = try await withTimeout("connecting to \(text)") { () -> DBusError? in
                do throws(DBusError) {
                    let connection = try await DBusConnection.connect(to: address, timeout: .seconds(5))
                    connection.close()
                    return nil
                } catch {
                    return error
                }
            }
            let error = try #require(outcome, "connecting to \(text) succeeded")
            #expect(error.name == DBusError.noServer, "\(text)")
            #expect(!error.message.isEmpty)
        }
    }

    // MARK: Method calls

    @Test func methodCallsBetweenTwoConnections() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let a = try await bus.connect()
        defer { a.close() }
        let b = try await bus.connect()
        defer { b.close() }
        let seenSender = Locked<String?>(nil)
        b.export("/test") { call in
            seenSender.withLock { $0 = call.message.sender }
            switch call.message.member {
            case "Echo": call.reply(call.message.body)
            case "Fail": call.fail("com.example.Error.Nope", "nope: \(call.message.body.first?.string ?? "")")
            default: call.fail(DBusError.unknownMethod, "no \(call.message.member ?? "")")
            }
        }
        let body: [DBusValue] = [
            .string("hi"), .properties(["Level": .int32(3), "Name": .string("x")]), .bytes(Data([0, 1, 255])),
            .objectPath("/a/b"), .array(.structure([.uint64, .double]), [.structure([.uint64(.max), .double(0.5)])]),
        ]
        let reply = try await a.reply(to: call(b.uniqueName, "/test", "Echo", body))
        #expect(reply.kind == .methodReturn)
        #expect(reply.body == body)
        #expect(reply.sender == b.uniqueName)
        #expect(seenSender.value == a.uniqueName, "the bus stamps the caller's unique name")

        let error = try await a.error(from: call(b.uniqueName, "/test", "Fail", [.string("x")]))
        #expect(error == DBusError(name: "com.example.Error.Nope", message: "nope: x"))

        // The async API throws the error reply as a DBusError.
        let thrown = try await withTimeout("a failing call") { () -> DBusError? in
            do throws(DBusError) {
                _ = try await a.call(call(b.uniqueName, "/test", "Fail", [.string("y")]))
                return nil
            } catch {
                return error
            }
        }
        #expect(thrown?.name == "com.example.Error.Nope")
        #expect(thrown?.message == "nope: y")
    }

    @Test func callsToMissingObjectsAndNamesFail() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let a = try await bus.connect()
        defer { a.close() }
        let b = try await bus.connect()
        defer { b.close() }
        b.export("/sub", subtree: true) { call in call.reply([.objectPath(call.message.path!)]) }
        b.export("/exact") { call in call.reply() }
        #expect(try await a.error(from: call(b.uniqueName, "/nothing", "M")).name == DBusError.unknownObject)
        #expect(try await a.error(from: call(b.uniqueName, "/exact/child", "M")).name == DBusError.unknownObject,
                "a non-subtree export does not answer below its path")
        #expect(try await a.reply(to: call(b.uniqueName, "/sub/x/y", "M")).body == [.objectPath("/sub/x/y")])
        #expect(try await a.error(from: call("com.example.Nobody", "/", "M")).name == DBusError.serviceUnknown)
        // After unexport the object is gone.
        b.unexport("/exact")
        #expect(try await a.error(from: call(b.uniqueName, "/exact", "M")).name == DBusError.unknownObject)
    }

    @Test func peerInterfaceIsAnsweredForEveryConnection() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let a = try await bus.connect()
        defer { a.close() }
        let b = try await bus.connect()
        defer { b.close() }
        let ping = DBusMessage.methodCall(destination: b.uniqueName, path: "/any/path", interface: "org.freedesktop.DBus.Peer", member: "Ping")
        #expect(try await a.reply(to: ping).body == [])
        let machine = DBusMessage.methodCall(destination: b.uniqueName, path: "/", interface: "org.freedesktop.DBus.Peer", member: "GetMachineId")
        #expect(try await a.reply(to: machine).body.first?.string?.isEmpty == false)
    }

    @Test func wellKnownNamesRouteCalls() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let a = try await bus.connect()
        defer { a.close() }
        let b = try await bus.connect()
        defer { b.close() }
        b.export("/named") { call in call.reply([.string("it's me")]) }
        let requested = try await b.callBus("RequestName", [.string("com.example.Tether"), .uint32(0)])
        #expect(requested.body == [.uint32(1)], "primary owner")
        #expect(try await a.reply(to: call("com.example.Tether", "/named", "Who")).body == [.string("it's me")])
    }

    @Test func callTimeoutGivesNoReply() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let a = try await bus.connect()
        defer { a.close() }
        let b = try await bus.connect()
        defer { b.close() }
        let holder = CallHolder()
        b.export("/hold") { call in holder.hold(call) }
        let started = ContinuousClock.now
        let outcome = OneShot<Result<DBusMessage, DBusError>>()
        a.call(call(b.uniqueName, "/hold", "Wait"), timeout: .milliseconds(300)) { outcome.fulfill($0) }
        try await withTimeout("the call to arrive") { await holder.arrived.value }
        let result = try await withTimeout("the timeout") { await outcome.value }
        let error = try #require(result.failure)
        #expect(error.name == DBusError.noReply)
        #expect(error.message.contains("Wait"))
        #expect(ContinuousClock.now - started >= .milliseconds(300))
        #expect(holder.held.count == 1, "the call is still alive on the other side")
        // A late answer is dropped, and the connection still works.
        holder.held.first?.reply([.string("late")])
        #expect(try await a.callBus("GetId").body.first?.string?.isEmpty == false)
        #expect(outcome.current?.failure?.name == DBusError.noReply)
    }

    @Test func anUnansweredCallThatIsReleasedFailsTheCaller() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let a = try await bus.connect()
        defer { a.close() }
        let b = try await bus.connect()
        defer { b.close() }
        b.export("/drop") { _ in } // the call is released without an answer
        let error = try await a.error(from: call(b.uniqueName, "/drop", "Forget"), timeout: .seconds(20))
        #expect(error.name == DBusError.failed)
        #expect(error.message.contains("did not answer"))
    }

    @Test func answeringTwiceSendsOneReply() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let a = try await bus.connect()
        defer { a.close() }
        let b = try await bus.connect()
        defer { b.close() }
        b.export("/twice") { call in
            call.reply([.int32(1)])
            call.reply([.int32(2)])
            call.fail(DBusError.failed, "too late")
        }
        #expect(try await a.reply(to: call(b.uniqueName, "/twice", "M")).body == [.int32(1)])
        #expect(try await a.reply(to: call(b.uniqueName, "/twice", "M")).body == [.int32(1)])
    }

    // MARK: Signals

    @Test func thousandSignalsArriveInOrder() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let a = try await bus.connect()
        defer { a.close() }
        let b = try await bus.connect()
        defer { b.close() }
        // The bus routes the whole interface here; locally only Tick reaches the handler.
        try await a.addMatchBounded(DBusMatchRule(sender: b.uniqueName, interface: "com.example.Seq"))
        let ticks = Collector<UInt32>()
        let others = Collector<DBusMessage>()
        a.onSignal(DBusMatchRule(interface: "com.example.Seq", member: "Tick")) { message in
            if case .uint32(let n)? = message.body.first { ticks.append(n) } else { others.append(message) }
        }
        for i in UInt32(0)..<1000 {
            if i % 100 == 0 { b.emit(path: "/seq", interface: "com.example.Seq", member: "Tock", body: [.uint32(i)]) }
            guard case .success = b.emit(path: "/seq", interface: "com.example.Seq", member: "Tick", body: [.uint32(i)]) else {
                throw TestFailure("emitting signal \(i) failed")
            }
        }
        let received = try await withTimeout("1000 signals") { await ticks.first(1000) }
        #expect(received == Array(0..<1000))
        #expect(others.items.isEmpty, "Tock must not reach a Tick handler")
    }

    @Test func aReplyArrivesAfterTheSignalsSentBeforeIt() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let a = try await bus.connect()
        defer { a.close() }
        let b = try await bus.connect()
        defer { b.close() }
        b.export("/order") { [weak b] call in
            for i in 0..<50 { b?.emit(path: "/order", interface: "com.example.Order", member: "Step", body: [.int32(Int32(i))]) }
            call.reply([.string("done")])
        }
        let rule = DBusMatchRule(interface: "com.example.Order", member: "Step")
        try await a.addMatchBounded(rule)
        let steps = Locked(0)
        a.onSignal(rule) { _ in steps.withLock { $0 += 1 } }
        let seen = OneShot<(Result<DBusMessage, DBusError>, Int)>()
        a.call(call(b.uniqueName, "/order", "Run")) { result in
            // Runs on a's queue, after every message that arrived before the reply.
            seen.fulfill((result, steps.value))
        }
        let (result, stepsBeforeReply) = try await withTimeout("the reply") { await seen.value }
        #expect(try result.get().body == [.string("done")])
        #expect(stepsBeforeReply == 50)
    }

    @Test func signalStreamDeliversAndUnsubscribesWhenItEnds() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let a = try await bus.connect()
        defer { a.close() }
        let b = try await bus.connect()
        defer { b.close() }
        let rule = DBusMatchRule(interface: "com.example.Stream")
        let handlersBefore = a.signalHandlerCount
        let received = try await withTimeout("three streamed signals") { () -> [DBusMessage] in
            let stream = try await a.signals(matching: rule)
            #expect(a.signalHandlerCount == handlersBefore + 1)
            for i in 0..<3 { b.emit(path: "/s", interface: "com.example.Stream", member: "Item", body: [.int32(Int32(i))]) }
            b.emit(path: "/s", interface: "com.example.Other", member: "Item", body: [.int32(99)])
            var messages: [DBusMessage] = []
            for await message in stream {
                messages.append(message)
                if messages.count == 3 { break }
            }
            return messages
        }
        #expect(received.map(\.body) == [[.int32(0)], [.int32(1)], [.int32(2)]])
        #expect(received.allSatisfy { $0.sender == b.uniqueName && $0.path == "/s" })
        // The stream is gone: its handler was removed (on a's queue).
        try await a.drainQueue()
        #expect(a.signalHandlerCount == handlersBefore)
    }

    @Test func cancellingASubscriptionStopsDelivery() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let a = try await bus.connect()
        defer { a.close() }
        let b = try await bus.connect()
        defer { b.close() }
        let rule = DBusMatchRule(interface: "com.example.Sub")
        try await a.addMatchBounded(rule)
        let first = Collector<Int32>()
        let second = Collector<Int32>()
        let subscription = a.onSignal(rule) { message in first.append(Int32(message.body.first?.integer ?? -1)) }
        a.onSignal(rule) { message in second.append(Int32(message.body.first?.integer ?? -1)) }
        b.emit(path: "/", interface: "com.example.Sub", member: "N", body: [.int32(1)])
        _ = try await withTimeout("the first signal") { await second.first(1) }
        subscription.cancel()
        subscription.cancel() // idempotent
        b.emit(path: "/", interface: "com.example.Sub", member: "N", body: [.int32(2)])
        _ = try await withTimeout("the second signal") { await second.first(2) }
        #expect(first.items == [1])
        #expect(second.items == [1, 2])
    }

    // MARK: File descriptors

    @Test func passesFileDescriptorsBothWays() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let a = try await bus.connect()
        defer { a.close() }
        let b = try await bus.connect()
        defer { b.close() }
        let writeEndOnB = Locked<Int32>(-1)
        b.export("/fd") { call in
            switch call.message.member {
            case "Read":
                guard case .unixFD(let index)? = call.message.body.first, Int(index) < call.message.unixFDs.count else {
                    return call.fail(DBusError.invalidArgs, "no descriptor")
                }
                let fd = call.message.unixFDs[Int(index)]
                let text = readExactly(fd, 20)
                _ = Glibc.close(fd)
                call.reply([.string(text ?? "<nothing>")])
            case "Open":
                do {
                    let (readEnd, writeEnd) = try makePipe()
                    try writeAll(writeEnd, "from the other side")
                    writeEndOnB.withLock { $0 = writeEnd }
                    call.reply([.unixFD(0)], unixFDs: [readEnd])
                } catch {
                    call.fail(DBusError.failed, "\(error)")
                }
            default:
                call.fail(DBusError.unknownMethod, "?")
            }
        }

        // a → b: b reads what a wrote into the pipe.
        let (readEnd, writeEnd) = try makePipe()
        defer { _ = Glibc.close(writeEnd) }
        try writeAll(writeEnd, "hello through a pipe")
        var message = call(b.uniqueName, "/fd", "Read", [.unixFD(0)])
        message.unixFDs = [readEnd]
        let reply = try await a.reply(to: message)
        #expect(reply.body == [.string("hello through a pipe")])
        // The connection closed its copy once sent and b closed the one it received: no reader is left.
        #expect(pipeHasNoReaders(writeEnd), "a sent descriptor is closed on the sending side")

        // b → a: a reply carrying a descriptor.
        let opened = try await a.reply(to: call(b.uniqueName, "/fd", "Open"))
        #expect(opened.body == [.unixFD(0)])
        let received = try #require(opened.unixFDs.first)
        #expect(opened.unixFDs.count == 1)
        #expect(readExactly(received, 19) == "from the other side")
        _ = Glibc.close(received)
        let bWriteEnd = writeEndOnB.value
        defer { _ = Glibc.close(bWriteEnd) }
        #expect(pipeHasNoReaders(bWriteEnd), "a descriptor sent in a reply is closed on the replying side")
    }

    // MARK: TCP and ANONYMOUS

    @Test func tcpFallsBackToAnonymousWithoutDescriptorPassing() async throws {
        let bus = try await PrivateBus.start(.tcpAnonymous)
        defer { bus.stop() }
        guard case .tcp? = bus.address.transports.first else { throw TestFailure("expected a TCP address, got \(bus.address)") }
        let a = try await bus.connect()
        defer { a.close() }
        let b = try await bus.connect()
        defer { b.close() }
        #expect(a.authenticationMechanism == "ANONYMOUS")
        #expect(!a.supportsUnixFDs)
        #expect(a.uniqueName.hasPrefix(":"))
        b.export("/tcp") { call in call.reply(call.message.body) }
        #expect(try await a.reply(to: call(b.uniqueName, "/tcp", "Echo", [.string("over tcp")])).body == [.string("over tcp")])

        let (readEnd, writeEnd) = try makePipe()
        defer {
            _ = Glibc.close(readEnd)
            _ = Glibc.close(writeEnd)
        }
        var message = call(b.uniqueName, "/tcp", "Echo", [.unixFD(0)])
        message.unixFDs = [readEnd]
        let error = try await a.error(from: message)
        #expect(error.name == DBusError.failed)
        #expect(error.message.contains("cannot pass file descriptors"))
        var signal = DBusMessage.signal(path: "/", interface: "a.b", member: "C", body: [.unixFD(0)])
        signal.unixFDs = [readEnd]
        #expect(a.send(signal).failure?.message.contains("cannot pass file descriptors") == true)
        #expect(!pipeHasNoReaders(writeEnd), "a refused descriptor stays the caller's")
        #expect(!a.isClosed)
    }

    // MARK: Closing

    @Test func closeFailsPendingCallsAndRunsOnDisconnect() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let a = try await bus.connect()
        let b = try await bus.connect()
        defer { b.close() }
        let holder = CallHolder()
        b.export("/hold") { call in holder.hold(call) }
        let pending = OneShot<Result<DBusMessage, DBusError>>()
        a.call(call(b.uniqueName, "/hold", "Wait"), timeout: .seconds(120)) { pending.fulfill($0) }
        try await withTimeout("the call to arrive") { await holder.arrived.value }
        let reason = OneShot<DBusError>()
        let handlerRuns = Locked(0)
        a.onDisconnect { error in
            handlerRuns.withLock { $0 += 1 }
            reason.fulfill(error)
        }
        a.close()
        let result = try await withTimeout("the pending call to fail") { await pending.value }
        #expect(result.failure?.name == DBusError.disconnected)
        #expect(try await withTimeout("onDisconnect") { await reason.value }.name == DBusError.disconnected)
        #expect(a.isClosed)
        // Closing again does nothing; sending fails at once; a late onDisconnect runs at once.
        a.close()
        #expect(a.send(.signal(path: "/", interface: "a.b", member: "C")).failure?.name == DBusError.disconnected)
        #expect(try await a.error(from: call(b.uniqueName, "/hold", "Again")).name == DBusError.disconnected)
        #expect(try await a.closeReasonBounded().name == DBusError.disconnected)
        try await a.drainQueue()
        #expect(handlerRuns.value == 1)
    }

    @Test func killingTheDaemonDisconnectsAndFailsPendingCalls() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let a = try await bus.connect()
        defer { a.close() }
        let b = try await bus.connect()
        defer { b.close() }
        let holder = CallHolder()
        b.export("/hold") { call in holder.hold(call) }
        let pending = OneShot<Result<DBusMessage, DBusError>>()
        a.call(call(b.uniqueName, "/hold", "Wait"), timeout: .seconds(120)) { pending.fulfill($0) }
        try await withTimeout("the call to arrive") { await holder.arrived.value }
        let reasonA = OneShot<DBusError>()
        let reasonB = OneShot<DBusError>()
        a.onDisconnect { reasonA.fulfill($0) }
        b.onDisconnect { reasonB.fulfill($0) }
        bus.kill()
        #expect(try await withTimeout("a to notice") { await reasonA.value }.name == DBusError.disconnected)
        #expect(try await withTimeout("b to notice") { await reasonB.value }.name == DBusError.disconnected)
        let result = try await withTimeout("the pending call to fail") { await pending.value }
        #expect(result.failure?.name == DBusError.disconnected)
        #expect(a.isClosed && b.isClosed)
    }

    @Test func releasingAnOpenConnectionDoesNotCrash() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let reference = WeakConnection()
        var queue: DispatchQueue?
        do {
            let a = try await bus.connect()
            reference.object = a
            queue = a.queue
            #expect(try await a.callBus("GetId").body.first?.string?.isEmpty == false)
            try await a.drainQueue()
        }
        // Nothing but the test held it (never closed): it is gone, and the process did not trap
        // releasing its dispatch sources.
        queue?.sync {}
        #expect(reference.object == nil)
        // The bus is still usable.
        let b = try await bus.connect()
        defer { b.close() }
        #expect(try await b.callBus("ListNames").body.first?.stringArray?.contains(b.uniqueName) == true)
    }

    // MARK: Limits

    @Test func aSignalAboveMaximumMessageSizeClosesTheConnection() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let a = try await bus.connect(maximumMessageSize: 4096)
        defer { a.close() }
        let b = try await bus.connect()
        defer { b.close() }
        #expect(a.maximumMessageSize == 4096)
        let rule = DBusMatchRule(interface: "com.example.Big")
        try await a.addMatchBounded(rule)
        let sizes = Collector<Int>()
        a.onSignal(rule) { message in sizes.append(message.body.first?.bytes?.count ?? -1) }
        let reason = OneShot<DBusError>()
        a.onDisconnect { reason.fulfill($0) }
        // Under the limit: delivered.
        b.emit(path: "/", interface: "com.example.Big", member: "Blob", body: [.bytes(Data(count: 1000))])
        #expect(try await withTimeout("the small signal") { await sizes.first(1) } == [1000])
        // Over it: the connection closes with an error instead of buffering it.
        b.emit(path: "/", interface: "com.example.Big", member: "Blob", body: [.bytes(Data(count: 64 * 1024))])
        let error = try await withTimeout("the connection to close") { await reason.value }
        #expect(error.name == DBusError.protocolError)
        #expect(error.message.contains("exceeds the limit of 4096"))
        #expect(a.isClosed)
        #expect(sizes.items == [1000])
        // The sender is unaffected.
        #expect(try await b.callBus("GetId").body.first?.string?.isEmpty == false)
    }

    @Test func aReplyAboveMaximumMessageSizeFailsThePendingCall() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let a = try await bus.connect(maximumMessageSize: 8192)
        defer { a.close() }
        let b = try await bus.connect()
        defer { b.close() }
        b.export("/big") { call in call.reply([.bytes(Data(count: 100_000))]) }
        let error = try await a.error(from: call(b.uniqueName, "/big", "Get"))
        #expect(error.name == DBusError.protocolError)
        #expect(a.isClosed)
    }
}
