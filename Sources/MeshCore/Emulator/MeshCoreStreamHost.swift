import Foundation
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
/// app as soon as it sends a frame. Received frames hop to the ``SimulationActor`` to reach the
/// radio; frames the radio produces are written in order as soon as they are ready.
@SimulationActor
public final class MeshCoreStreamHost {
    /// The radio being served.
    public let radio: CompanionRadio
    /// Frames received from apps so far.
    public private(set) var framesReceived = 0
    /// Frames written to apps so far.
    public private(set) var framesSent = 0

    private enum Kind { case tcp, serial }

    private struct Client {
        let channel: any Channel
        let kind: Kind
        let task: Task<Void, Never>
    }

    private let group: any EventLoopGroup
    private let logger: Logger
    private var server: (any Channel)?
    private var clients: [Int: Client] = [:]
    private var active: Int?
    private var nextClientID = 0
    private var flushScheduled = false
    private var closed = false

    /// Creates a host for `radio`; nothing is served until ``listen(host:port:)`` or
    /// ``serve(fileDescriptor:)``.
    public init(
        radio: CompanionRadio,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "meshcore.emulator.stream-host")
    ) {
        self.radio = radio
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
            .childChannelInitializer { [weak self] channel in
                let (stream, continuation) = ByteStreamHandler.makeStream()
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteStreamHandler(continuation))
                }.map {
                    Task { @SimulationActor in self?.attach(channel, kind: .tcp, events: stream) }
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
        let (stream, continuation) = ByteStreamHandler.makeStream()
        let channel = try await NIOPipeBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteStreamHandler(continuation))
                }
            }
            .takingOwnershipOfDescriptor(inputOutput: fileDescriptor).get()
        attach(channel, kind: .serial, events: stream)
    }

    /// Stops listening, closes every connection and detaches the app.
    public func close() async {
        closed = true
        let server = self.server
        self.server = nil
        let channels = clients.values.map(\.channel)
        for client in clients.values { client.task.cancel() }
        clients.removeAll()
        deactivate()
        try? await server?.close()
        for channel in channels { try? await channel.close() }
    }

    // MARK: Connections

    private func attach(_ channel: any Channel, kind: Kind, events: AsyncStream<ByteStreamEvent>) {
        guard !closed else {
            channel.close(promise: nil)
            return
        }
        nextClientID += 1
        let id = nextClientID
        if kind == .tcp {
            // One app at a time, as the WiFi firmware: the newcomer wins.
            for (other, client) in clients where client.kind == .tcp {
                logger.info("a new TCP client replaces client \(other)")
                client.channel.close(promise: nil)
            }
        }
        let task = Task { @SimulationActor [weak self] in
            var reassembler: LengthPrefixedReassembler<ContinuousClock.Instant> =
                MeshCoreStreamFraming.reassembler(receiving: .toRadio)
            for await event in events {
                guard let self else { return }
                switch event {
                case .bytes(let bytes):
                    for frame in reassembler.push(bytes, at: ContinuousClock.now) {
                        self.received(frame, from: id)
                    }
                case .closed:
                    self.detach(id)
                }
            }
        }
        clients[id] = Client(channel: channel, kind: kind, task: task)
        if kind == .tcp { activate(id) }
    }

    private func received(_ frame: Data, from id: Int) {
        guard clients[id] != nil else { return }
        if active != id { activate(id) }
        framesReceived += 1
        radio.receive(frame)
    }

    private func detach(_ id: Int) {
        guard clients.removeValue(forKey: id) != nil else { return }
        if active == id { deactivate() }
    }

    private func activate(_ id: Int) {
        deactivate()
        active = id
        radio.outputHandler = { [weak self] in self?.scheduleFlush() }
        radio.appConnected()
        scheduleFlush()
    }

    private func deactivate() {
        guard active != nil else { return }
        active = nil
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

    private func flush() {
        guard let active, let channel = clients[active]?.channel else { return }
        while let output = radio.nextOutput() {
            framesSent += 1
            let framed = MeshCoreStreamFraming.frame(output.frame, direction: .fromRadio)
            channel.writeAndFlush(ByteBuffer(bytes: framed)).whenComplete { [weak self] result in
                Task { @SimulationActor in
                    guard let self else { return }
                    switch result {
                    case .success: self.radio.delivered(output)
                    case .failure: self.radio.undelivered(output)
                    }
                }
            }
        }
    }
}

/// Why a ``MeshCoreStreamHost`` could not start.
public enum MeshCoreStreamHostError: Error, Sendable, Hashable {
    /// The listening socket reported no local address.
    case noLocalAddress
}
