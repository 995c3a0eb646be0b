#if os(Linux)
import Foundation
import Glibc
import Logging

/// A connection to a D-Bus message bus, owned by one serial dispatch queue.
///
/// Every callback — replies, signal handlers, incoming method calls, the disconnect handler —
/// runs on ``queue`` in the order the messages arrived on the socket, so a reply is never
/// reordered against the signals sent before it (BlueZ emits a read's `Value` change before
/// the read's reply). Methods may be called from any thread or task.
///
/// Memory is bounded: an incoming message larger than ``maximumMessageSize`` closes the
/// connection with an error, and at most ``maximumOutboundBytes`` wait to be written (further
/// sends fail with `LimitsExceeded`).
public final class DBusConnection: @unchecked Sendable {
    /// The queue that owns the connection and runs every callback.
    public let queue: DispatchQueue
    /// Our unique name on the bus (`:1.42`).
    public private(set) var uniqueName = ""
    /// Whether file descriptors can be passed (Unix socket, and the bus agreed).
    public let supportsUnixFDs: Bool
    /// The authentication mechanism the bus accepted (`EXTERNAL` or `ANONYMOUS`).
    public let authenticationMechanism: String
    /// The address connected to.
    public let address: DBusAddress
    /// The largest incoming message accepted.
    public let maximumMessageSize: Int
    /// The most bytes queued for writing.
    public let maximumOutboundBytes: Int

    /// The default bound on incoming messages: 8 MiB (BlueZ's largest, `GetManagedObjects`
    /// with many devices, is well under 1 MiB).
    public static let defaultMaximumMessageSize = 8 * 1024 * 1024

    private let socket: DBusSocket
    private let logger: Logger
    private let queueKey = DispatchSpecificKey<ObjectIdentifier>()
    private var readSource: DispatchSourceRead?
    private var writeSource: DispatchSourceWrite?
    private var writeSourceSuspended = true
    private var inbound: [UInt8] = []
    private var inboundFDs: [Int32] = []
    /// Received descriptors waiting for their message, at most (a message carries ≤ 253).
    static let maximumPendingFDs = 1024
    private var outbound: [(bytes: [UInt8], fds: [Int32], offset: Int)] = []
    private var outboundBytes = 0
    private var nextSerial: UInt32 = 1
    private var pending: [UInt32: PendingCall] = [:]
    private var signalHandlers: [UInt64: (DBusMatchRule, @Sendable (DBusMessage) -> Void)] = [:]
    private var signalHandlerOrder: [UInt64] = []
    private var objectHandlers: [DBusObjectPath: ObjectHandler] = [:]
    private var disconnectHandlers: [(token: UInt64, handler: @Sendable (DBusError) -> Void)] = []
    private var nextToken: UInt64 = 1
    private(set) var closeReason: DBusError?

    private struct PendingCall {
        let completion: @Sendable (Result<DBusMessage, DBusError>) -> Void
        let timeout: DispatchWorkItem?
    }

    private struct ObjectHandler {
        let subtree: Bool
        let handler: @Sendable (DBusIncomingCall) -> Void
    }

    private init(socket: DBusSocket, address: DBusAddress, outcome: DBusAuthentication.Outcome, label: String,
                 maximumMessageSize: Int, maximumOutboundBytes: Int, logger: Logger) {
        self.socket = socket
        self.address = address
        self.supportsUnixFDs = outcome.unixFDs
        self.authenticationMechanism = outcome.mechanism
        self.queue = DispatchQueue(label: label)
        self.maximumMessageSize = maximumMessageSize
        self.maximumOutboundBytes = maximumOutboundBytes
        self.logger = logger
        queue.setSpecific(key: queueKey, value: ObjectIdentifier(self))
    }

    deinit {
        // Released without close(): the sources must still be cancelled (libdispatch traps when
        // a suspended or never-activated source is released), and they close the socket.
        stopIO()
        for fd in inboundFDs { _ = Glibc.close(fd) }
        for entry in outbound { for fd in entry.fds { _ = Glibc.close(fd) } }
    }

    /// Connects, authenticates and registers on the bus (`Hello`).
    ///
    /// - Parameters:
    ///   - address: where the bus listens.
    ///   - label: the owning queue's label, for debuggers and logs.
    ///   - timeout: bound on connecting, authenticating and `Hello` together.
    ///   - maximumMessageSize: the largest message accepted from the bus; a longer one ends
    ///     the connection (the bus is a peer too).
    ///   - maximumOutboundBytes: how much may wait to be written before sends are refused.
    ///   - logger: where the connection logs.
    public static func connect(
        to address: DBusAddress, label: String = "tether.dbus", timeout: Duration = .seconds(10),
        maximumMessageSize: Int = defaultMaximumMessageSize, maximumOutboundBytes: Int = 64 * 1024 * 1024,
        logger: Logger = Logger(label: "tether.dbus")
    ) async throws(DBusError) -> DBusConnection {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        // The connection built on the thread crosses to the task under a lock as well as
        // through the continuation: ThreadSanitizer on Linux does not see a continuation
        // resumed from a `Thread` as an ordering, and its false reports would hide real races.
        let handoff = Handoff<Result<DBusConnection, DBusError>>()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            // The handshake blocks (bounded by the deadline): keep it off the cooperative pool.
            Thread.detachNewThread {
                let result: Result<DBusConnection, DBusError>
                do throws(DBusError) {
                    let socket = try DBusSocket.connect(to: address)
                    let outcome = try DBusAuthentication.authenticate(socket, deadline: deadline)
                    socket.setNonBlocking()
                    result = .success(DBusConnection(socket: socket, address: address, outcome: outcome, label: label,
                                                     maximumMessageSize: maximumMessageSize,
                                                     maximumOutboundBytes: maximumOutboundBytes, logger: logger))
                } catch {
                    result = .failure(error)
                }
                handoff.put(result)
                continuation.resume()
            }
        }
        let connection = try (handoff.take()
            ?? .failure(DBusError(name: DBusError.failed, message: "the connection thread ended without a result"))).get()
        connection.queue.sync { connection.startIO() }
        let remaining = ContinuousClock.now.duration(to: deadline)
        do throws(DBusError) {
            let reply = try await connection.call(
                .methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                            interface: "org.freedesktop.DBus", member: "Hello"),
                timeout: max(remaining, .milliseconds(1)))
            guard let name = reply.body.first?.string else {
                throw DBusError(name: DBusError.protocolError, message: "Hello returned no unique name")
            }
            connection.queue.sync { connection.uniqueName = name }
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    /// Connects to the system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else the standard socket).
    public static func connectToSystemBus(
        environment: [String: String] = ProcessInfo.processInfo.environment, label: String = "tether.dbus",
        timeout: Duration = .seconds(10), logger: Logger = Logger(label: "tether.dbus")
    ) async throws(DBusError) -> DBusConnection {
        try await connect(to: try DBusAddress.systemBus(environment: environment), label: label, timeout: timeout, logger: logger)
    }

    /// Whether the caller is running on ``queue``.
    public var isOnQueue: Bool { DispatchQueue.getSpecific(key: queueKey) == ObjectIdentifier(self) }

    /// Runs `body` on ``queue``: at once when already there, else asynchronously.
    public func perform(_ body: @escaping @Sendable () -> Void) {
        if isOnQueue { body() } else { queue.async(execute: body) }
    }

    /// Whether the connection is closed.
    public var isClosed: Bool {
        isOnQueue ? closeReason != nil : queue.sync { closeReason != nil }
    }

    // MARK: Sending

    /// Sends a message that expects no reply (a signal, a reply, a `noReplyExpected` call).
    /// Returns its serial, or the error that prevented sending.
    @discardableResult
    public func send(_ message: DBusMessage) -> Result<UInt32, DBusError> {
        if isOnQueue { return enqueue(message) }
        return queue.sync { enqueue(message) }
    }

    /// Calls a method; `completion` runs on ``queue`` with the reply or the error (an error
    /// reply, `NoReply` after `timeout`, `Disconnected`).
    public func call(_ message: DBusMessage, timeout: Duration = .seconds(25),
                     completion: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void) {
        perform { [self] in
            switch enqueue(message) {
            case .failure(let error):
                completion(.failure(error))
            case .success(let serial):
                let item = DispatchWorkItem { [weak self] in
                    guard let self, let call = self.pending.removeValue(forKey: serial) else { return }
                    call.completion(.failure(DBusError(
                        name: DBusError.noReply,
                        message: "no reply to \(message.interface ?? "").\(message.member ?? "") within \(timeout)")))
                }
                pending[serial] = PendingCall(completion: completion, timeout: item)
                queue.asyncAfter(deadline: .now() + DispatchTimeInterval(timeout), execute: item)
            }
        }
    }

    /// Calls a method and waits for its reply. An error reply is thrown as a ``DBusError``.
    ///
    /// The reply is handed over after its callback ran on ``queue``; code that must see it in
    /// order with signals uses ``call(_:timeout:completion:)``.
    public func call(_ message: DBusMessage, timeout: Duration = .seconds(25)) async throws(DBusError) -> DBusMessage {
        // The reply is decoded on the I/O queue; it crosses under a lock as well (see `connect`).
        let handoff = Handoff<Result<DBusMessage, DBusError>>()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            call(message, timeout: timeout) { result in
                handoff.put(result)
                continuation.resume()
            }
        }
        return try (handoff.take() ?? .failure(DBusError(name: DBusError.failed, message: "the call ended without a reply"))).get()
    }

    /// Emits a signal.
    @discardableResult
    public func emit(path: DBusObjectPath, interface: String, member: String, body: [DBusValue] = []) -> Result<UInt32, DBusError> {
        send(.signal(path: path, interface: interface, member: member, body: body))
    }

    private func enqueue(_ message: DBusMessage) -> Result<UInt32, DBusError> {
        dispatchPrecondition(condition: .onQueue(queue))
        if let closeReason { return .failure(closeReason) }
        if !message.unixFDs.isEmpty, !supportsUnixFDs {
            return .failure(DBusError(name: DBusError.failed, message: "this connection cannot pass file descriptors (\(address))"))
        }
        let serial = nextSerial
        nextSerial = nextSerial == UInt32.max ? 1 : nextSerial + 1
        let bytes: [UInt8]
        do {
            bytes = try message.encoded(serial: serial)
        } catch {
            return .failure(DBusError(name: DBusError.invalidArgs, message: error.description))
        }
        guard outboundBytes + bytes.count <= maximumOutboundBytes else {
            return .failure(DBusError(name: DBusError.limitsExceeded, message: "more than \(maximumOutboundBytes) bytes waiting to be sent"))
        }
        logger.trace("→ \(message.description) serial=\(serial)")
        outbound.append((bytes, message.unixFDs, 0))
        outboundBytes += bytes.count
        flush()
        // The write may have found the socket dead: then nothing will answer this message.
        if let closeReason { return .failure(closeReason) }
        return .success(serial)
    }

    private func flush() {
        while let first = outbound.first {
            let result = first.bytes.withUnsafeBytes { raw in
                socket.send(UnsafeRawBufferPointer(rebasing: raw[first.offset...]), fds: first.offset == 0 ? first.fds : [])
            }
            switch result {
            case .transferred(let count):
                if outbound[0].offset == 0, !outbound[0].fds.isEmpty {
                    // The descriptors went with these first bytes and the peer holds its own
                    // copies now: ours were handed over with the message, so close them.
                    for fd in outbound[0].fds { _ = Glibc.close(fd) }
                    outbound[0].fds = []
                }
                outbound[0].offset += count
                outboundBytes -= count
                if outbound[0].offset == outbound[0].bytes.count { outbound.removeFirst() }
            case .wouldBlock:
                if writeSourceSuspended, let writeSource {
                    writeSourceSuspended = false
                    writeSource.resume()
                }
                return
            case .closed(let reason):
                shutDown(DBusError(name: DBusError.disconnected, message: reason))
                return
            }
        }
        if !writeSourceSuspended, let writeSource {
            writeSourceSuspended = true
            writeSource.suspend()
        }
    }

    // MARK: Receiving

    private func startIO() {
        let read = DispatchSource.makeReadSource(fileDescriptor: socket.fd, queue: queue)
        read.setEventHandler { [weak self] in self?.readAvailable() }
        let write = DispatchSource.makeWriteSource(fileDescriptor: socket.fd, queue: queue)
        write.setEventHandler { [weak self] in self?.flush() }
        // libdispatch watches the descriptor by number until a source's cancellation completes,
        // and the kernel gives a closed number to the next socket at once (another connection's,
        // whose events would then be lost): close only once both sources are done with it.
        let socket = self.socket
        let cancelled = DispatchGroup()
        cancelled.enter()
        cancelled.enter()
        read.setCancelHandler { cancelled.leave() }
        write.setCancelHandler { cancelled.leave() }
        cancelled.notify(queue: queue) { socket.close() }
        read.resume()
        readSource = read
        writeSource = write
        writeSourceSuspended = true
    }

    /// Cancels the dispatch sources, whose cancel handlers then close the socket (at once if
    /// I/O never started).
    private func stopIO() {
        guard let readSource, let writeSource else {
            socket.close()
            return
        }
        readSource.cancel()
        // A suspended (or never activated) source must be resumed before its release.
        if writeSourceSuspended { writeSource.resume() }
        writeSource.cancel()
        self.readSource = nil
        self.writeSource = nil
        writeSourceSuspended = false
    }

    private func readAvailable() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        // Bounded per wake-up so a flood cannot starve the queue's other work.
        for _ in 0..<16 {
            guard closeReason == nil else { return }
            let result = buffer.withUnsafeMutableBytes { socket.receive(into: $0, fds: &inboundFDs) }
            switch result {
            case .transferred(let count):
                inbound.append(contentsOf: buffer[0..<count])
                processInbound()
                // Descriptors no message claimed (a peer that sends more than it announces)
                // would pile up: a bus daemon never does this.
                if inboundFDs.count > Self.maximumPendingFDs {
                    shutDown(DBusError(name: DBusError.limitsExceeded,
                                       message: "the peer sent more than \(Self.maximumPendingFDs) file descriptors no message claimed"))
                    return
                }
            case .wouldBlock:
                return
            case .closed(let reason):
                processInbound()
                shutDown(DBusError(name: DBusError.disconnected, message: reason))
                return
            }
        }
    }

    private func processInbound() {
        var start = 0
        defer { if start > 0 { inbound.removeFirst(start) } }
        while closeReason == nil, inbound.count - start >= DBusMessage.fixedHeaderLength {
            let length: Int
            do {
                length = try DBusMessage.frameLength(prefix: inbound[start...], maximumLength: maximumMessageSize)
            } catch {
                shutDown(DBusError(name: DBusError.protocolError, message: error.description))
                return
            }
            guard inbound.count - start >= length else { return }
            let bytes = Array(inbound[start..<(start + length)])
            start += length
            do {
                let message = try DBusMessage.decode(bytes, unixFDs: inboundFDs)
                inboundFDs.removeFirst(message.unixFDs.count)
                dispatch(message)
            } catch {
                // A message we cannot read is skipped, not fatal: the stream is still framed.
                logger.warning("skipped a malformed D-Bus message: \(error)")
            }
        }
    }

    private func dispatch(_ message: DBusMessage) {
        logger.trace("← \(message.description)")
        switch message.kind {
        case .methodReturn, .error:
            guard let replySerial = message.replySerial, let call = pending.removeValue(forKey: replySerial) else {
                closeUnclaimed(message.unixFDs)
                return
            }
            call.timeout?.cancel()
            call.completion(message.kind == .error ? .failure(DBusError(reply: message)) : .success(message))
        case .signal:
            var delivered = false
            for token in signalHandlerOrder {
                guard let (rule, handler) = signalHandlers[token], rule.matches(message) else { continue }
                delivered = true
                handler(message)
            }
            if !delivered { closeUnclaimed(message.unixFDs) }
        case .methodCall:
            handleMethodCall(message)
        }
    }

    private func closeUnclaimed(_ fds: [Int32]) {
        for fd in fds { _ = Glibc.close(fd) }
    }

    private func handleMethodCall(_ message: DBusMessage) {
        let call = DBusIncomingCall(message: message, connection: self)
        if message.interface == "org.freedesktop.DBus.Peer" {
            switch message.member {
            case "Ping": call.reply()
            case "GetMachineId":
                let id = (try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
                call.reply([.string(id ?? "00000000000000000000000000000000")])
            default: call.fail(DBusError.unknownMethod, "no method \(message.member ?? "") on org.freedesktop.DBus.Peer")
            }
            return
        }
        guard let path = message.path, let handler = objectHandler(for: path) else {
            closeUnclaimed(message.unixFDs)
            call.fail(DBusError.unknownObject, "no object at \(message.path?.rawValue ?? "?")")
            return
        }
        handler.handler(call)
    }

    private func objectHandler(for path: DBusObjectPath) -> ObjectHandler? {
        if let exact = objectHandlers[path] { return exact }
        var current = path.parent
        while let candidate = current {
            if let handler = objectHandlers[candidate], handler.subtree { return handler }
            current = candidate.parent
        }
        return nil
    }

    // MARK: Signals

    /// A registration; ``cancel()`` removes it (no delivery starts after it returns).
    public final class Subscription: @unchecked Sendable {
        private let onCancel: @Sendable () -> Void
        private let lock = NSLock()
        private var cancelled = false
        init(_ onCancel: @escaping @Sendable () -> Void) { self.onCancel = onCancel }
        /// Removes the registration (idempotent).
        public func cancel() {
            let first = lock.withLock { () -> Bool in
                defer { cancelled = true }
                return !cancelled
            }
            if first { onCancel() }
        }
    }

    /// Delivers signals matching `rule` to `handler` on ``queue``, in arrival order. Local
    /// only: ask the bus to route them with ``addMatch(_:)``.
    @discardableResult
    public func onSignal(_ rule: DBusMatchRule, _ handler: @escaping @Sendable (DBusMessage) -> Void) -> Subscription {
        let register: @Sendable () -> UInt64 = { [self] in
            let token = nextToken
            nextToken += 1
            // A closed connection delivers nothing: keep no handler (nor what it captures).
            guard closeReason == nil else { return token }
            signalHandlers[token] = (rule, handler)
            signalHandlerOrder.append(token)
            return token
        }
        let token = isOnQueue ? register() : queue.sync(execute: register)
        return Subscription { [weak self] in
            guard let self else { return }
            // Synchronous off the queue, so no delivery starts after cancel() returns (a
            // handler may capture an object that is about to go away).
            let unregister = {
                self.signalHandlers[token] = nil
                self.signalHandlerOrder.removeAll { $0 == token }
            }
            if self.isOnQueue { unregister() } else { self.queue.sync(execute: unregister) }
        }
    }

    /// How many signal handlers are registered; tests check that ended subscriptions are gone.
    var signalHandlerCount: Int {
        isOnQueue ? signalHandlers.count : queue.sync { signalHandlers.count }
    }

    /// Asks the bus to route messages matching `rule` to this connection.
    public func addMatch(_ rule: DBusMatchRule) async throws(DBusError) {
        _ = try await call(.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                       interface: "org.freedesktop.DBus", member: "AddMatch", body: [.string(rule.description)]))
    }

    /// Stops the bus routing `rule` here.
    public func removeMatch(_ rule: DBusMatchRule) async throws(DBusError) {
        _ = try await call(.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                       interface: "org.freedesktop.DBus", member: "RemoveMatch", body: [.string(rule.description)]))
    }

    /// Signals matching `rule` as a stream (after `AddMatch`), in arrival order; it finishes when
    /// the connection closes. At most `bufferLimit` wait for the consumer; beyond that the oldest
    /// are dropped and logged.
    public func signals(matching rule: DBusMatchRule, bufferLimit: Int = 4096) async throws(DBusError) -> AsyncStream<DBusMessage> {
        let (stream, continuation) = AsyncStream.makeStream(of: DBusMessage.self, bufferingPolicy: .bufferingNewest(bufferLimit))
        let logger = self.logger
        let subscription = onSignal(rule) { message in
            if case .dropped = continuation.yield(message) {
                logger.warning("signal stream for \(rule) is \(bufferLimit) behind: dropped the oldest")
            }
        }
        // The stream ends with the connection, so a `for await` over it never hangs.
        let closing = onDisconnect { _ in continuation.finish() }
        continuation.onTermination = { _ in
            subscription.cancel()
            closing.cancel()
        }
        do {
            try await addMatch(rule)
        } catch {
            subscription.cancel()
            throw error
        }
        return stream
    }

    // MARK: Exported objects

    /// Routes method calls on `path` (and, with `subtree`, below it) to `handler` on ``queue``.
    /// The handler must answer each call once (``DBusIncomingCall/reply(_:unixFDs:)`` or
    /// ``DBusIncomingCall/fail(_:_:)``), now or later.
    ///
    /// In effect when this returns (like ``onSignal(_:_:)``): a call another peer makes after
    /// that is routed here even if it arrives while the queue is still reading.
    public func export(_ path: DBusObjectPath, subtree: Bool = false, handler: @escaping @Sendable (DBusIncomingCall) -> Void) {
        let register = { [self] in
            guard closeReason == nil else { return }
            objectHandlers[path] = ObjectHandler(subtree: subtree, handler: handler)
        }
        if isOnQueue { register() } else { queue.sync(execute: register) }
    }

    /// Stops routing calls on `path`; in effect when this returns.
    public func unexport(_ path: DBusObjectPath) {
        let unregister = { [self] in objectHandlers[path] = nil }
        if isOnQueue { unregister() } else { queue.sync(execute: unregister) }
    }

    // MARK: Closing

    /// Runs `handler` on ``queue`` once when the connection closes (at once if it already has).
    @discardableResult
    public func onDisconnect(_ handler: @escaping @Sendable (DBusError) -> Void) -> Subscription {
        let register: @Sendable () -> UInt64? = { [self] in
            if let closeReason {
                handler(closeReason)
                return nil
            }
            let token = nextToken
            nextToken += 1
            disconnectHandlers.append((token, handler))
            return token
        }
        guard let token = isOnQueue ? register() : queue.sync(execute: register) else { return Subscription {} }
        return Subscription { [weak self] in
            guard let self else { return }
            let remove: @Sendable () -> Void = { self.disconnectHandlers.removeAll { $0.token == token } }
            if self.isOnQueue { remove() } else { self.queue.sync(execute: remove) }
        }
    }

    /// Closes the connection; pending calls fail with `Disconnected`.
    public func close() {
        perform { [self] in shutDown(DBusError(name: DBusError.disconnected, message: "the connection was closed")) }
    }

    private func shutDown(_ reason: DBusError) {
        guard closeReason == nil else { return }
        closeReason = reason
        logger.debug("D-Bus connection closed: \(reason)")
        stopIO()
        for fd in inboundFDs { _ = Glibc.close(fd) }
        inboundFDs.removeAll()
        for entry in outbound { for fd in entry.fds { _ = Glibc.close(fd) } }
        outbound.removeAll()
        outboundBytes = 0
        let calls = pending
        pending.removeAll()
        for (_, call) in calls.sorted(by: { $0.key < $1.key }) {
            call.timeout?.cancel()
            call.completion(.failure(reason))
        }
        let handlers = disconnectHandlers
        disconnectHandlers.removeAll()
        for (_, handler) in handlers { handler(reason) }
        // Handlers often capture their owner, which owns this connection: dropping them breaks
        // the cycle, so a closed connection and its users are freed.
        signalHandlers.removeAll()
        signalHandlerOrder.removeAll()
        objectHandlers.removeAll()
    }
}

/// A value made on another thread (the handshake thread, the I/O queue), handed to the awaiting
/// task under a lock. ThreadSanitizer on Linux does not see a continuation's resume as ordering.
private final class Handoff<Value: Sendable>: @unchecked Sendable {
    // Guarded by `lock`.
    private var value: Value?
    private let lock = NSLock()

    func put(_ value: Value) { lock.withLock { self.value = value } }

    func take() -> Value? { lock.withLock { value } }
}

/// A method call made to one of our exported objects. Answer it exactly once; an unanswered
/// call is answered with an error when this object is released, so a caller never hangs.
public final class DBusIncomingCall: @unchecked Sendable {
    /// The call.
    public let message: DBusMessage
    private weak var connection: DBusConnection?
    private let lock = NSLock()
    private var answered = false

    init(message: DBusMessage, connection: DBusConnection) {
        self.message = message
        self.connection = connection
    }

    deinit {
        if !answered, !message.flags.contains(.noReplyExpected) {
            connection?.send(.error(to: message, name: DBusError.failed, message: "the object did not answer"))
        }
    }

    private func claim() -> Bool {
        lock.withLock {
            defer { answered = true }
            return !answered
        }
    }

    /// Replies with `body` (and descriptors, which are closed on our side once sent).
    public func reply(_ body: [DBusValue] = [], unixFDs: [Int32] = []) {
        guard claim() else { return }
        guard !message.flags.contains(.noReplyExpected) else { return }
        connection?.send(.methodReturn(to: message, body: body, unixFDs: unixFDs))
    }

    /// Replies with an error.
    public func fail(_ name: String, _ text: String) {
        guard claim() else { return }
        guard !message.flags.contains(.noReplyExpected) else { return }
        connection?.send(.error(to: message, name: name, message: text))
    }

    /// Replies with `error`.
    public func fail(_ error: DBusError) { fail(error.name, error.message) }
}
#endif
