import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import MeshCore
@testable import TetherCore
@testable import TetherSimulator
@testable import MeshCoreEmulator

/// Byte streams stay bounded whatever the other end sends, and nothing received is dropped
/// on the way to its reader: the emulator's host stops reading an app that does not read its
/// replies and disconnects it when it stalls; the client transport stops reading a radio whose
/// frames nobody takes yet, and a listing sent faster than it is handled arrives whole.
@Suite(.serialized) struct StreamBoundsTests {
    /// Many GET_DEVICE_TIME frames back to back (each answered by an 8-byte CURR_TIME).
    static func timeRequests(_ count: Int) throws -> Data {
        let one = MeshCoreStreamFraming.frame(try MeshCoreCommand.getDeviceTime.encoded(), direction: .toRadio)
        var chunk = Data(capacity: one.count * count)
        for _ in 0..<count { chunk += one }
        return chunk
    }

    /// A radio alone on its mesh, served on a free TCP port with `limits`.
    static func serve(_ limits: MeshCoreStreamHost.Limits) async throws -> (MeshNetwork, MeshCoreStreamHost, Int) {
        SimulationLogging.bootstrapForTests()
        let (network, host) = await { @SimulationActor in
            let network = MeshNetwork(clock: ContinuousClock(), seed: 9, startEpoch: EmulatorMesh.epoch)
            let radio = network.addRadio(name: "Base")
            return (network, MeshCoreStreamHost(radio: radio, limits: limits))
        }()
        return (network, host, try await host.listen(host: "127.0.0.1", port: 0))
    }

    @Test func anAppThatSendsButNeverReadsIsPausedThenDisconnected() async throws {
        let (network, host, port) = try await Self.serve(.init(replyBacklog: 8, stallTimeout: .milliseconds(300)))
        let greedy = try await EmulatorStreamClient.tcp(port: port, reading: false)
        let flood = greedy.flood(try Self.timeRequests(8_192))
        // The host stops reading the greedy app once its replies back up, then drops it.
        try await greedy.waitForClose()
        let sent = await flood.value
        let state = await { @SimulationActor in (host.stalledClientsDropped, host.connectionCount, host.framesReceived, host.radio.isAppConnected) }()
        #expect(state.0 == 1)
        #expect(state.1 == 0)
        #expect(!state.3, "the radio no longer serves the dropped app")
        // What the host took in is what the kernel's buffers let through, not what was sent.
        #expect(state.2 < sent / 4, "host read \(state.2) frames of \(sent / 4) sent")

        // The next app is served at once: no backlog of the last one stands in its way.
        let next = try await EmulatorStreamClient.tcp(port: port)
        try await next.send(.appStart(appName: "next"))
        #expect(try await next.frames(1).first?.code == 0x05)
        await next.close()
        await host.close()
        await { @SimulationActor in network.shutdown() }()
    }

    @Test func aNewAppIsServedWhileTheLastOneFloods() async throws {
        // A long stall timeout: the flooding app is replaced, not timed out.
        let (network, host, port) = try await Self.serve(.init(replyBacklog: 8, stallTimeout: .seconds(600)))
        let greedy = try await EmulatorStreamClient.tcp(port: port, reading: false)
        let flood = greedy.flood(try Self.timeRequests(8_192))
        // Until the host has stopped reading it: its replies are stuck in the socket.
        try await withSafetyTimeout {
            while await ({ @SimulationActor in host.readPauses }()) == 0 { await Task.yield() }
        }
        let next = try await EmulatorStreamClient.tcp(port: port)
        try await greedy.waitForClose()
        _ = await flood.value
        try await next.send(.appStart(appName: "next"), .getDeviceTime)
        let frames = try await next.frames(2)
        // Its own answers first: nothing the greedy app left unread reaches it.
        #expect(frames.first?.code == 0x05)
        #expect(frames.last?.code == 0x09)
        #expect(await { @SimulationActor in host.stalledClientsDropped }() == 0)
        await next.close()
        await host.close()
        await { @SimulationActor in network.shutdown() }()
    }

    @Test func framesNobodyReadsYetWaitAndTheLinkIsNotRead() async throws {
        let radio = try await BurstRadio.start()
        let transport = StreamTransport.tcp(host: "127.0.0.1", port: radio.port)
        try await transport.connect()
        // 30,000 frames (1.1 MB) at once; nobody has subscribed yet.
        let count = 30_000
        let pushes = (0..<count).map { MeshCoreFrame.advert(publicKey: Data(repeating: UInt8($0 % 256), count: 31) + Data([UInt8($0 / 256)])) }
        radio.send(pushes)
        try await withSafetyTimeout {
            while await transport.queuedFrameCount < StreamTransport.frameQueueCapacity { await Task.yield() }
        }
        // The transport stopped reading: the radio's side cannot write any more.
        try await withSafetyTimeout {
            while radio.isWritable { await Task.yield() }
        }
        #expect(await transport.queuedFrameCount == StreamTransport.frameQueueCapacity, "reading stopped at the queue's capacity")
        let stream = await transport.receivedData
        let received = try await withSafetyTimeout {
            var iterator = stream.makeAsyncIterator()
            var taken: [Data] = []
            while taken.count < count, let frame = await iterator.next() { taken.append(frame) }
            return taken
        }
        let whole = received == pushes.map { $0.encoded() }
        #expect(received.count == count)
        #expect(whole, "every frame, in order")
        await transport.disconnect()
        await radio.stop()
    }

    @Test func aListingSentFasterThanItIsHandledArrivesWhole() async throws {
        let radio = try await BurstRadio.start()
        let contacts = (0..<12_000).map { BurstRadio.contact($0) }
        radio.listing = contacts
        let session = MeshCoreSession(
            transport: StreamTransport.tcp(host: "127.0.0.1", port: radio.port),
            configuration: .init(maximumReplyFrames: 20_000))
        try await session.start()
        let listing = try await session.contacts()
        #expect(listing.contacts.count == 12_000)
        let inOrder = listing.contacts == contacts
        #expect(inOrder, "the contacts as sent, in order")
        #expect(listing.omittedCount == 0)
        await session.stop()
        await radio.stop()
    }

    @Test func aListingLongerThanTheLimitSaysWhatItLeftOut() async throws {
        let radio = try await BurstRadio.start()
        radio.listing = (0..<3_000).map { BurstRadio.contact($0) }
        let session = MeshCoreSession(
            transport: StreamTransport.tcp(host: "127.0.0.1", port: radio.port),
            configuration: .init(maximumReplyFrames: 1_000))
        try await session.start()
        let listing = try await session.contacts()
        // The first frame kept is CONTACTS_START; then 999 contacts.
        #expect(listing.contacts.count == 999)
        #expect(listing.omittedCount == 2_001)
        let kept = listing.contacts == Array(radio.listing.prefix(999))
        #expect(kept, "the first 999 contacts are the ones kept")

        // A listing that goes on far beyond the limit fails instead of growing.
        radio.listing = (0..<5_000).map { BurstRadio.contact($0) }
        await #expect(throws: MeshCoreError.replyTooLong(command: "getContacts", frames: 4_001)) {
            try await session.contacts()
        }
        await session.stop()
        await radio.stop()
    }
}

/// A fake companion radio on TCP that answers APP_START and writes whole contact listings,
/// and any frames a test gives it, in one write each: a burst far faster than the app can
/// handle frame by frame.
final class BurstRadio: @unchecked Sendable {
    // Mutated by tests before the command that uses it; read on the event loop afterwards.
    var listing: [MeshContact] = []
    let port: Int
    private let server: any Channel
    private let lock = NSLock()
    private var client: (any Channel)?

    private init(server: any Channel) {
        self.server = server
        self.port = server.localAddress?.port ?? 0
    }

    static func contact(_ index: Int) -> MeshContact {
        var key = Data(count: 32)
        key[0] = UInt8(index & 0xFF)
        key[1] = UInt8((index >> 8) & 0xFF)
        key[2] = 0xC0
        return MeshContact(publicKey: key, type: .chat, name: "node \(index)", lastAdvert: UInt32(index), lastModified: UInt32(index))
    }

    static func start() async throws -> BurstRadio {
        let holder = BurstRadioHolder()
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            // A small send buffer: an app that stops reading makes the radio unwritable soon.
            .childChannelOption(.socketOption(.so_sndbuf), value: 8 * 1024)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(BurstRadioHandler(holder))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let radio = BurstRadio(server: server)
        holder.radio = radio
        return radio
    }

    /// Writes `frames` to the connected app in one write.
    func send(_ frames: [MeshCoreFrame]) {
        var bytes = Data()
        for frame in frames { bytes += MeshCoreStreamFraming.frame(frame.encoded(), direction: .fromRadio) }
        let client = lock.withLock { self.client }
        client?.writeAndFlush(ByteBuffer(bytes: bytes), promise: nil)
    }

    /// Whether the app's socket still takes what the radio writes.
    var isWritable: Bool { lock.withLock { client?.isWritable ?? false } }

    func attach(_ channel: any Channel) {
        lock.withLock { client = channel }
    }

    func answer(_ command: Data) {
        switch command.first {
        case 0x01: // APP_START
            send([.selfInfo(SelfInfo(publicKey: Data(repeating: 0xAB, count: 32), name: "Burst"))])
        case 0x04: // GET_CONTACTS
            let contacts = listing
            send([.contactsStart(count: UInt32(contacts.count))] + contacts.map { .contact($0) } + [.endOfContacts(lastModified: UInt32(contacts.count))])
        default:
            send([.error(.unsupportedCommand)])
        }
    }

    func stop() async {
        let client = lock.withLock { self.client }
        try? await client?.close()
        try? await server.close()
    }
}

final class BurstRadioHolder: @unchecked Sendable {
    // Set once before any connection arrives.
    var radio: BurstRadio?
}

final class BurstRadioHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let holder: BurstRadioHolder
    private var reassembler: LengthPrefixedReassembler<ContinuousClock.Instant> = MeshCoreStreamFraming.reassembler(receiving: .toRadio)

    init(_ holder: BurstRadioHolder) { self.holder = holder }

    func channelActive(context: ChannelHandlerContext) {
        holder.radio?.attach(context.channel)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        for frame in reassembler.push(Data(buffer.readableBytesView), at: .now) { holder.radio?.answer(frame) }
    }
}
