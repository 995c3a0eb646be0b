import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import MeshCore
@testable import TetherCore
@testable import TetherSimulator
@testable import MeshCoreEmulator

/// What a test client's channel reports: bytes as they arrive, then its end.
enum ByteStreamEvent: Sendable {
    case bytes(Data)
    case closed((any Error)?)
}

/// Forwards a test client's inbound bytes and its end to an `AsyncStream` (unbounded: tests
/// read what they asked for; a test that wants a client that never reads turns autoRead off).
final class ByteStreamEventHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let continuation: AsyncStream<ByteStreamEvent>.Continuation
    private var error: (any Error)?

    init(_ continuation: AsyncStream<ByteStreamEvent>.Continuation) {
        self.continuation = continuation
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        if buffer.readableBytes > 0 { continuation.yield(.bytes(Data(buffer.readableBytesView))) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.error = error
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        continuation.yield(.closed(error))
        continuation.finish()
        context.fireChannelInactive()
    }
}

/// A raw NIO client of the stream host: writes `<`-framed commands, reassembles `>` frames.
final class EmulatorStreamClient: @unchecked Sendable {
    // Used by one test task at a time, sequentially.
    let channel: any Channel
    private var events: AsyncStream<ByteStreamEvent>.AsyncIterator
    private var reassembler: LengthPrefixedReassembler<ContinuousClock.Instant> = MeshCoreStreamFraming.reassembler(receiving: .fromRadio)
    private var pending: [Data] = []
    private(set) var isClosed = false

    private init(channel: any Channel, events: AsyncStream<ByteStreamEvent>) {
        self.channel = channel
        self.events = events.makeAsyncIterator()
    }

    /// A TCP client; with `reading` false it never reads what the host sends (and its
    /// receive buffer is made small, so the host's replies back up at once).
    static func tcp(port: Int, reading: Bool = true) async throws -> EmulatorStreamClient {
        let (stream, continuation) = AsyncStream.makeStream(of: ByteStreamEvent.self)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.autoRead, value: reading)
            .channelOption(.socketOption(.so_rcvbuf), value: reading ? 128 * 1024 : 4096)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(ByteStreamEventHandler(continuation)) }
            }
            .connect(host: "127.0.0.1", port: port).get()
        return EmulatorStreamClient(channel: channel, events: stream)
    }

    static func descriptor(_ descriptor: Int32) async throws -> EmulatorStreamClient {
        let (stream, continuation) = AsyncStream.makeStream(of: ByteStreamEvent.self)
        let channel = try await NIOPipeBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(ByteStreamEventHandler(continuation)) }
            }
            .takingOwnershipOfDescriptor(inputOutput: descriptor).get()
        return EmulatorStreamClient(channel: channel, events: stream)
    }

    /// Writes `chunk` again and again until the connection fails (the host closed it), each
    /// write awaited so the test client buffers nothing itself.
    func flood(_ chunk: Data) -> Task<Int, Never> {
        let channel = self.channel
        return Task {
            var written = 0
            while true {
                do { try await channel.writeAndFlush(ByteBuffer(bytes: chunk)) } catch { return written }
                written += chunk.count
            }
        }
    }

    func write(_ bytes: Data) async throws {
        try await channel.writeAndFlush(ByteBuffer(bytes: bytes))
    }

    func send(_ commands: MeshCoreCommand...) async throws {
        var bytes = Data()
        for command in commands { bytes += MeshCoreStreamFraming.frame(try command.encoded(), direction: .toRadio) }
        try await write(bytes)
    }

    /// The next `count` frames (nil entries never: throws on close or after the safety timeout).
    func frames(_ count: Int) async throws -> [MeshCoreFrame] {
        try await withSafetyTimeout(30) { [self] in
            while pending.count < count {
                guard let event = await events.next() else { throw EmulatorStreamClosed() }
                switch event {
                case .bytes(let bytes): pending += reassembler.push(bytes, at: .now)
                case .closed:
                    isClosed = true
                    throw EmulatorStreamClosed()
                }
            }
            let taken = pending.prefix(count)
            pending.removeFirst(count)
            return try taken.map { try MeshCoreFrame(decoding: $0) }
        }
    }

    /// Waits for the host to close the connection.
    func waitForClose() async throws {
        try await withSafetyTimeout(30) { [self] in
            while let event = await events.next() {
                if case .closed = event { break }
            }
            isClosed = true
        }
    }

    func close() async {
        try? await channel.close()
    }
}

struct EmulatorStreamClosed: Error {}

/// A radio served over TCP and over a pseudo-terminal.
@Suite(.serialized) struct EmulatorStreamHostTests {
    static func makeHost() async -> (MeshNetwork, MeshCoreStreamHost) {
        SimulationLogging.bootstrapForTests()
        return await { @SimulationActor in
            let network = MeshNetwork(clock: ContinuousClock(), seed: 5, startEpoch: EmulatorMesh.epoch)
            let radio = network.addRadio(name: "Base")
            network.addNode(name: "Alice", hops: 1)
            network.addNode(name: "Echo", hops: 2, echoBot: true)
            network.addNode(name: "Far", hops: 4)
            network.introduceAll(to: radio)
            return (network, MeshCoreStreamHost(radio: radio))
        }()
    }

    @Test func servesTheCompanionProtocolOverTCP() async throws {
        let (network, host) = await Self.makeHost()
        let port = try await host.listen(host: "127.0.0.1", port: 0)
        #expect(port > 0)
        let client = try await EmulatorStreamClient.tcp(port: port)
        try await client.send(.appStart(appName: "tcp test"))
        guard case .selfInfo(let info)? = try await client.frames(1).first else {
            Issue.record("no SELF_INFO")
            return
        }
        #expect(info.name == "Base")
        // Several commands in one segment. As on the firmware, a reply may overtake the rest
        // of a contact listing, which goes out frame by frame.
        try await client.send(.deviceQuery(protocolVersion: 3), .getContacts(since: nil), .getBatteryAndStorage)
        let frames = try await client.frames(7)
        #expect(frames[0].code == 0x0D)
        #expect(frames[1] == .contactsStart(count: 3))
        #expect(frames.filter { $0.code == 0x0C }.count == 1)
        let listing = frames.dropFirst(2).filter { $0.code != 0x0C }
        #expect(listing.prefix(3).allSatisfy { $0.code == 0x03 })
        #expect(listing.last == .endOfContacts(lastModified: EmulatorMesh.epoch))
        // Garbage before a frame is skipped; a frame split byte by byte is reassembled.
        let framed = MeshCoreStreamFraming.frame(try MeshCoreCommand.getDeviceTime.encoded(), direction: .toRadio)
        try await client.write(Data("noise".utf8))
        for byte in framed { try await client.write(Data([byte])) }
        guard case .currentTime(let time)? = try await client.frames(1).first else {
            Issue.record("no CURR_TIME")
            return
        }
        #expect(time >= EmulatorMesh.epoch)
        // An undecodable frame is answered with ERR 1, over the stream too.
        try await client.write(MeshCoreStreamFraming.frame(Data([0x42]), direction: .toRadio))
        #expect(try await client.frames(1) == [.error(.unsupportedCommand)])
        await client.close()
        await host.close()
        await { @SimulationActor in network.shutdown() }()
    }

    /// Connections that arrive while the host closes are closed without a trace (NIO traps
    /// when an async channel is dropped without finishing its writer: it crashed a test run).
    @Test func connectionsArrivingWhileTheHostClosesAreClosedCleanly() async throws {
        for _ in 0..<20 {
            let (network, host) = await Self.makeHost()
            let port = try await host.listen(host: "127.0.0.1", port: 0)
            let clients = Task {
                await withTaskGroup(of: EmulatorStreamClient?.self) { group in
                    for _ in 0..<8 { group.addTask { try? await EmulatorStreamClient.tcp(port: port) } }
                    var all: [EmulatorStreamClient] = []
                    for await client in group { if let client { all.append(client) } }
                    return all
                }
            }
            await Task.yield()
            await host.close()
            for client in await clients.value { await client.close() }
            await { @SimulationActor in network.shutdown() }()
        }
        // Still here: no connection was dropped unfinished. And the StreamTransport side: a
        // disconnect while a connection opens discards it as cleanly.
        let (network, host) = await Self.makeHost()
        let port = try await host.listen(host: "127.0.0.1", port: 0)
        for _ in 0..<20 {
            let transport = StreamTransport.tcp(host: "127.0.0.1", port: port)
            let opening = Task { try? await transport.connect() }
            await transport.disconnect()
            _ = await opening.value
            await transport.disconnect()
        }
        await host.close()
        await { @SimulationActor in network.shutdown() }()
    }

    @Test func aNewTCPClientReplacesTheOldOne() async throws {
        let (network, host) = await Self.makeHost()
        let port = try await host.listen(host: "127.0.0.1", port: 0)
        let first = try await EmulatorStreamClient.tcp(port: port)
        try await first.send(.deviceQuery(protocolVersion: 3))
        _ = try await first.frames(1)
        let second = try await EmulatorStreamClient.tcp(port: port)
        try await first.waitForClose()
        #expect(first.isClosed)
        try await second.send(.getDeviceTime)
        #expect(try await second.frames(1).first?.code == 0x09)
        let state = await { @SimulationActor in (host.radio.isAppConnected, host.radio.protocolVersion, host.connectionCount) }()
        #expect(state.0)
        #expect(state.1 == 0, "the new app starts over")
        #expect(state.2 == 1)
        await second.close()
        await host.close()
        await { @SimulationActor in network.shutdown() }()
    }

    @Test func servesTheRadioOnAPseudoTerminal() async throws {
        let (network, host) = await Self.makeHost()
        let terminal = try PseudoTerminal.open()
        #expect(terminal.path.hasPrefix("/dev/"))
        try await host.serve(fileDescriptor: terminal.master)
        let descriptor = open(terminal.path, O_RDWR | O_NOCTTY)
        #expect(descriptor >= 0)
        let app = try await EmulatorStreamClient.descriptor(descriptor)
        try await app.send(.appStart(appName: "serial"), .getChannel(0))
        let frames = try await app.frames(2)
        #expect(frames.first?.code == 0x05)
        #expect(frames.last == .channelInfo(ChannelInfo(index: 0, name: "Public", secret: MeshPublicChannel.secret)))
        #expect(await { @SimulationActor in host.radio.isAppConnected }())
        await app.close()
        await host.close()
        terminal.closeSubordinate()
        await { @SimulationActor in network.shutdown() }()
    }
}
