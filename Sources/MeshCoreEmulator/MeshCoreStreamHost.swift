import Foundation
import MeshCore
import Logging
import NIOCore
import NIOPosix
import TetherCore
import TetherSimulator

/// Serves a ``CompanionRadio`` over TCP (as the WiFi companion firmware does) and over a file
/// descriptor such as a pseudo-terminal's master side (as the USB serial firmware does).
///
/// Frames use the stream framing: app → radio `<` + u16 LE length + frame, radio → app `>` +
/// u16 LE length + frame, reassembled with a bound on length. One app at a time: a new TCP
/// client replaces the previous one, as the WiFi firmware does; a serial descriptor becomes the
/// app as soon as it sends a frame. Received frames hop to the `SimulationActor` to reach the
/// radio; frames the radio produces are written in order as soon as they are ready.
///
/// Memory stays bounded whatever an app sends (see ``Limits``): an app's commands are read
/// only while fewer than ``Limits/replyBacklog`` frames wait to be written to it, so an app
/// that sends without reading is slowed by the kernel's flow control; one that leaves its
/// backlog unread for ``Limits/stallTimeout`` is disconnected; and when an app leaves, what
/// was waiting for it is dropped (its messages go back to the radio's queue) so the next app
/// is served at once.
@SimulationActor
public final class MeshCoreStreamHost {
    /// Per-app bounds.
    public struct Limits: Sendable, Hashable {
        /// Frames (replies and pushes) that may wait to be written to an app before the host
        /// stops reading that app's commands.
        public var replyBacklog: Int
        /// How long an app may leave a full backlog unread before it is disconnected.
        public var stallTimeout: Duration

        /// Creates limits; `replyBacklog` is at least 1.
        public init(replyBacklog: Int = 64, stallTimeout: Duration = .seconds(10)) {
            self.replyBacklog = max(1, replyBacklog)
            self.stallTimeout = stallTimeout
        }
    }

    /// The radio being served.
    public let radio: CompanionRadio
    /// The per-app bounds.
    public let limits: Limits
    /// Frames received from apps so far.
    public private(set) var framesReceived = 0
    /// Frames written to apps so far.
    public private(set) var framesSent = 0
    /// Apps disconnected (or, on the serial descriptor, detached) because they left their
    /// replies unread.
    public private(set) var stalledClientsDropped = 0
    /// Times the host stopped reading an app's commands because its replies waited unread.
    public private(set) var readPauses = 0

    private enum Kind { case tcp, serial }

    @SimulationActor
    private final class Client {
        let channel: any Channel
        let kind: Kind
        var task: Task<Void, Never>?
        /// Frames handed to the socket whose write has not completed.
        var unconfirmed = 0
        /// Completed writes so far; the stall timer compares it.
        var progress = 0
        /// The read loop, parked while the backlog is full.
        var waitingForRoom: CheckedContinuation<Bool, Never>?

        init(channel: any Channel, kind: Kind) {
            self.channel = channel
            self.kind = kind
        }
    }

    private let group: any EventLoopGroup
    private let logger: Logger
    private var server: (any Channel)?
    private var clients: [Int: Client] = [:]
    private var active: Int?
    /// Counts activations: a write of an earlier activation of the same app is not current.
    private var activation = 0
    private var nextClientID = 0
    private var flushScheduled = false
    private var closed = false

    /// Creates a host for `radio`; nothing is served until ``listen(host:port:)`` or
    /// ``serve(fileDescriptor:)``.
    ///
    /// - Parameters:
    ///   - radio: The radio to serve.
    ///   - limits: The per-app bounds (reply backlog, stall timeout).
    ///   - group: The event loops for the sockets.
    ///   - logger: Receives connections, replacements and stalled apps.
    public init(
        radio: CompanionRadio,
        limits: Limits = Limits(),
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "meshcore.emulator.stream-host")
    ) {
        self.radio = radio
        self.limits = limits
        self.group = group
        self.logger = logger
    }

    /// The number of open app connections (TCP clients and served descriptors).
    public var connectionCount: Int { clients.count }

    /// Starts listening for TCP clients; returns the bound port (useful with port 0).
    public func listen(host: String = "127.0.0.1", port: Int = 5000) async throws -> Int {
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            // Replies wait in the radio, where they are counted, not in a kernel buffer that
            // grows to megabytes for an app that does not read.
            .childChannelOption(.socketOption(.so_sndbuf), value: 32 * 1024)
            .childChannelInitializer { [weak self] channel in
                ByteStreamChannel.wrap(channel).map { connection in
                    Task { @SimulationActor in
                        if let self { self.attach(connection, kind: .tcp) } else { await ByteStreamChannel.discard(connection) }
                    }
                }
            }
            .bind(host: host, port: port).get()
        server = channel
        guard let bound = channel.localAddress?.port else {
            throw MeshCoreStreamHostError.noLocalAddress
        }
        logger.info("listening on \(host):\(bound)")
        return bound
    }

    /// Serves the radio on a descriptor (for example the master side of a pty), taking
    /// ownership of it: it is closed with the host.
    public func serve(fileDescriptor: Int32) async throws {
        let connection = try await NIOPipeBootstrap(group: group)
            .takingOwnershipOfDescriptor(inputOutput: fileDescriptor) { ByteStreamChannel.wrap($0) }
        attach(connection, kind: .serial)
    }

    /// Stops listening, closes every connection and detaches the app.
    public func close() async {
        closed = true
        let server = self.server
        self.server = nil
        let all = Array(clients.values)
        clients.removeAll()
        for client in all {
            client.task?.cancel()
            client.waitingForRoom?.resume(returning: false)
            client.waitingForRoom = nil
        }
        deactivate()
        try? await server?.close()
        for client in all { try? await client.channel.close() }
    }

    // MARK: Connections

    private func attach(_ connection: ByteStreamChannel.Connection, kind: Kind) {
        guard !closed else {
            Task { await ByteStreamChannel.discard(connection) }
            return
        }
        nextClientID += 1
        let id = nextClientID
        if kind == .tcp {
            // One app at a time, as the WiFi firmware: the newcomer wins.
            for (other, client) in clients where client.kind == .tcp {
                logger.info("a new TCP client replaces client \(other)")
                drop(other)
            }
        }
        let client = Client(channel: connection.channel, kind: kind)
        clients[id] = client
        client.task = Task { @SimulationActor [weak self] in
            do {
                try await connection.executeThenClose { inbound, _ in
                    var reassembler: LengthPrefixedReassembler<ContinuousClock.Instant> =
                        MeshCoreStreamFraming.reassembler(receiving: .toRadio)
                    for try await buffer in inbound {
                        for frame in reassembler.push(Data(buffer.readableBytesView), at: ContinuousClock.now) {
                            guard let self, self.clients[id] != nil else { return }
                            self.received(frame, from: id)
                            guard await self.roomForMore(id) else { return }
                            // A pause for room is the host's, not the app's silence.
                            reassembler.resumeReading(at: ContinuousClock.now)
                        }
                    }
                }
            } catch {
                self?.logger.debug("client \(id) ended: \(error)")
            }
            self?.detach(id)
        }
        if kind == .tcp { activate(id) }
    }

    private func received(_ frame: Data, from id: Int) {
        guard clients[id] != nil else { return }
        if active != id { activate(id) }
        framesReceived += 1
        radio.receive(frame)
    }

    /// Frames waiting to be written to the app: the radio's outbox plus writes in flight.
    private func backlog(_ client: Client) -> Int {
        radio.pendingOutputCount + client.unconfirmed
    }

    /// Waits until the app's backlog is below the limit; false when the app is gone. An app
    /// that completes no write for ``Limits/stallTimeout`` meanwhile is disconnected (a TCP
    /// client), or loses its backlog and its place as the app (the serial descriptor, which
    /// cannot be opened again).
    private func roomForMore(_ id: Int) async -> Bool {
        guard let client = clients[id] else { return false }
        guard active == id, backlog(client) >= limits.replyBacklog else { return true }
        readPauses += 1
        let timeout = limits.stallTimeout
        let watchdog = Task { @SimulationActor [weak self] in
            var progress = client.progress
            while true {
                do { try await Task.sleep(for: timeout) } catch { return }
                guard let self, self.clients[id] === client, client.waitingForRoom != nil else { return }
                if client.progress != progress {
                    progress = client.progress
                    continue
                }
                self.stalledClientsDropped += 1
                self.logger.warning("client \(id) left \(self.backlog(client)) replies unread for \(timeout)")
                switch client.kind {
                case .tcp: self.drop(id)
                case .serial:
                    self.deactivate()
                    self.wake(client)
                }
                return
            }
        }
        defer { watchdog.cancel() }
        return await withCheckedContinuation { continuation in
            client.waitingForRoom?.resume(returning: false)
            client.waitingForRoom = continuation
        }
    }

    private func wakeIfRoom(_ client: Client) {
        guard backlog(client) < limits.replyBacklog else { return }
        wake(client)
    }

    private func wake(_ client: Client) {
        guard let waiting = client.waitingForRoom else { return }
        client.waitingForRoom = nil
        waiting.resume(returning: true)
    }

    /// Disconnects an app now: its read loop stops and its backlog is dropped.
    private func drop(_ id: Int) {
        guard let client = clients[id] else { return }
        client.channel.close(promise: nil)
        detach(id)
    }

    private func detach(_ id: Int) {
        guard let client = clients.removeValue(forKey: id) else { return }
        client.waitingForRoom?.resume(returning: false)
        client.waitingForRoom = nil
        if active == id { deactivate() }
    }

    private func activate(_ id: Int) {
        deactivate()
        active = id
        activation += 1
        radio.outputHandler = { [weak self] in self?.scheduleFlush() }
        radio.appConnected()
        scheduleFlush()
    }

    private func deactivate() {
        guard let previous = active else { return }
        active = nil
        // Its backlog goes with it (appDisconnected): a read loop parked on it goes on.
        if let client = clients[previous] { wake(client) }
        radio.outputHandler = nil
        radio.appDisconnected()
    }

    // MARK: Output

    /// Writes asynchronously, so the radio is never re-entered from its own command handler.
    private func scheduleFlush() {
        guard !flushScheduled else { return }
        flushScheduled = true
        Task { @SimulationActor [weak self] in
            guard let self else { return }
            self.flushScheduled = false
            self.flush()
        }
    }

    /// Hands frames to the active app's socket, at most ``Limits/replyBacklog`` unconfirmed
    /// at a time (written together, confirmed together): an app that does not read stops the
    /// flow here, not in memory.
    private func flush() {
        guard let id = active, let client = clients[id] else { return }
        var batch: [CompanionRadio.Output] = []
        var bytes = ByteBuffer()
        while client.unconfirmed + batch.count < limits.replyBacklog, let output = radio.nextOutput() {
            batch.append(output)
            bytes.writeBytes(MeshCoreStreamFraming.frame(output.frame, direction: .fromRadio))
        }
        guard !batch.isEmpty else {
            wakeIfRoom(client)
            return
        }
        framesSent += batch.count
        client.unconfirmed += batch.count
        let written = batch
        let writtenIn = activation
        client.channel.writeAndFlush(bytes).whenComplete { [weak self] result in
            Task { @SimulationActor in
                guard let self else { return }
                client.unconfirmed -= written.count
                let current = self.clients[id] === client && self.active == id && self.activation == writtenIn
                switch result {
                case .success:
                    client.progress += 1
                    for output in written { self.radio.delivered(output) }
                case .failure where current:
                    // Back to the front of the outbox in their order.
                    for output in written.reversed() { self.radio.undelivered(output) }
                case .failure:
                    // The app left: appDisconnected already put its messages back in the queue,
                    // and its replies are no one else's.
                    break
                }
                guard current else { return }
                self.wakeIfRoom(client)
                if self.radio.hasPendingOutput { self.scheduleFlush() }
            }
        }
        wakeIfRoom(client)
    }
}

/// Why a ``MeshCoreStreamHost`` could not start.
public enum MeshCoreStreamHostError: Error, Sendable, Hashable, LocalizedError {
    /// The listening socket reported no local address.
    case noLocalAddress

    public var errorDescription: String? {
        switch self {
        case .noLocalAddress: "The listening socket has no local address"
        }
    }
}
