import Foundation
import MeshCore
import NIOCore
import NIOPosix
import TetherCore
import TetherSimulator
import MeshCoreEmulator

/// `tether bench --hostile-streams`: resident memory while a peer floods a MeshCore byte
/// stream, on both sides (the emulator's TCP host and the client transport), in real time.
enum StreamBench {
    struct Figure {
        let name: String
        let value: Double
        let unit: String
    }

    /// Floods for `seconds` in each case and reports the resident-memory growth.
    static func run(seconds: Double, progress: @escaping @Sendable (String) -> Void) async throws -> [Figure] {
        var figures: [Figure] = []
        progress("an app floods the emulator's host with GET_DEVICE_TIME and never reads")
        figures += try await hostFlood(seconds: seconds)
        for kind in RadioFlood.allCases {
            progress("a radio floods the client with \(kind.rawValue.replacingOccurrences(of: "_", with: " "))")
            figures += try await clientFlood(kind, seconds: seconds)
        }
        return figures
    }

    // MARK: Host

    private static func hostFlood(seconds: Double) async throws -> [Figure] {
        let (network, host) = await { @SimulationActor in
            let network = MeshNetwork(clock: ContinuousClock(), seed: 1, startEpoch: 1_767_225_600)
            let radio = network.addRadio(name: "Bench")
            return (network, MeshCoreStreamHost(radio: radio))
        }()
        defer { Task { @SimulationActor in network.shutdown() } }
        let port = try await host.listen(host: "127.0.0.1", port: 0)
        let baseline = ResidentMemory.current()
        let one = MeshCoreStreamFraming.frame(try MeshCoreCommand.getDeviceTime.encoded(), direction: .toRadio)
        var chunk = Data()
        for _ in 0..<16_384 { chunk += one }
        // The flooding app: writes as fast as the kernel takes bytes, reads nothing.
        let flooder = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.autoRead, value: false)
            .connect(host: "127.0.0.1", port: port).get()
        let written = LockedValue(0)
        let flood = Task {
            while !Task.isCancelled {
                do { try await flooder.writeAndFlush(ByteBuffer(bytes: chunk)) } catch { return }
                written.update { $0 += chunk.count }
            }
        }
        let peak = await ResidentMemory.peak(during: .seconds(seconds))
        // A well-behaved app arrives: how long until it is served.
        let start = ContinuousClock.now
        let served = try await firstReply(port: port)
        let wait = ContinuousClock.now - start
        flood.cancel()
        try? await flooder.close()
        await host.close()
        let read = await { @SimulationActor in host.framesReceived }()
        guard served else { throw CLIError("the second app was not served") }
        return [
            Figure(name: "meshcore_host_flood_sent", value: Double(written.get()) / 1_048_576, unit: "MB"),
            Figure(name: "meshcore_host_flood_frames_read", value: Double(read), unit: "frames"),
            Figure(name: "meshcore_host_flood_rss_growth", value: max(0, peak - baseline) / 1_048_576, unit: "MB"),
            Figure(name: "meshcore_host_next_app_served_after", value: wait.seconds * 1000, unit: "ms"),
        ]
    }

    /// Connects, sends APP_START and waits (at most 30 s) for SELF_INFO.
    private static func firstReply(port: Int) async throws -> Bool {
        let transport = StreamTransport.tcp(host: "127.0.0.1", port: port)
        let session = MeshCoreSession(transport: transport, configuration: .init(commandTimeout: .seconds(30)))
        defer { Task { await session.stop() } }
        _ = try await session.start()
        return true
    }

    // MARK: Client

    enum RadioFlood: String, CaseIterable {
        case random_bytes, valid_pushes, msg_waiting_storm
    }

    private static func clientFlood(_ kind: RadioFlood, seconds: Double) async throws -> [Figure] {
        let radio = try await HostileRadio.start(kind)
        let transport = StreamTransport.tcp(host: "127.0.0.1", port: radio.port)
        let session = MeshCoreSession(transport: transport)
        let baseline = ResidentMemory.current()
        _ = try await session.start()
        // A consumer like `tether mesh listen`: takes every event.
        let events = await session.events()
        let consumed = LockedValue(0)
        let consumer = Task { for await _ in events { consumed.update { $0 += 1 } } }
        let peak = await ResidentMemory.peak(during: .seconds(seconds))
        consumer.cancel()
        await session.stop()
        await radio.stop()
        return [
            Figure(name: "meshcore_client_\(kind.rawValue)_sent", value: Double(radio.sent.get()) / 1_048_576, unit: "MB"),
            Figure(name: "meshcore_client_\(kind.rawValue)_events", value: Double(consumed.get()), unit: "events"),
            Figure(name: "meshcore_client_\(kind.rawValue)_rss_growth", value: max(0, peak - baseline) / 1_048_576, unit: "MB"),
        ]
    }
}

/// A radio that answers APP_START, then sends as fast as the app's socket takes it.
final class HostileRadio: @unchecked Sendable {
    let port: Int
    /// Bytes written to the app so far.
    let sent: LockedValue<Int>
    private let server: any Channel

    private init(server: any Channel, sent: LockedValue<Int>) {
        self.server = server
        self.sent = sent
        port = server.localAddress?.port ?? 0
    }

    static func start(_ kind: StreamBench.RadioFlood) async throws -> HostileRadio {
        let counter = LockedValue(0)
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(HostileRadioHandler(kind, counter: counter))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return HostileRadio(server: server, sent: counter)
    }

    func stop() async { try? await server.close() }
}

final class HostileRadioHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let kind: StreamBench.RadioFlood
    private let counter: LockedValue<Int>
    private var started = false
    private let chunk: ByteBuffer

    init(_ kind: StreamBench.RadioFlood, counter: LockedValue<Int>) {
        self.kind = kind
        self.counter = counter
        var bytes = Data()
        switch kind {
        case .random_bytes:
            var generator = SplitMix64(seed: 11)
            // No '>' (0x3E): pure noise for the reassembler to skip.
            while bytes.count < 65_536 {
                let byte = UInt8(truncatingIfNeeded: generator.next())
                bytes.append(byte == 0x3E ? 0 : byte)
            }
        case .valid_pushes:
            let push = MeshCoreStreamFraming.frame(MeshCoreFrame.advert(publicKey: Data(repeating: 0x42, count: 32)).encoded(), direction: .fromRadio)
            while bytes.count < 65_536 { bytes += push }
        case .msg_waiting_storm:
            let push = MeshCoreStreamFraming.frame(MeshCoreFrame.messageWaiting.encoded(), direction: .fromRadio)
            while bytes.count < 65_536 { bytes += push }
        }
        chunk = ByteBuffer(bytes: bytes)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !started else { return }
        started = true
        let selfInfo = MeshCoreFrame.selfInfo(SelfInfo(publicKey: Data(repeating: 0xAB, count: 32), name: "Hostile")).encoded()
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: MeshCoreStreamFraming.frame(selfInfo, direction: .fromRadio))), promise: nil)
        pump(context)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if started { pump(context) }
        context.fireChannelWritabilityChanged()
    }

    private func pump(_ context: ChannelHandlerContext) {
        while context.channel.isWritable && context.channel.isActive {
            context.writeAndFlush(wrapOutboundOut(chunk), promise: nil)
            counter.update { $0 += chunk.readableBytes }
        }
    }

    typealias OutboundOut = ByteBuffer
}

/// The process's resident memory, from /proc on Linux (the peak from getrusage elsewhere).
enum ResidentMemory {
    static func current() -> Double {
        #if os(Linux)
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
           let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "") {
            return kilobytes * 1024
        }
        #endif
        var usage = rusage()
        #if os(Linux)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_maxrss) * 1024
        #else
        getrusage(RUSAGE_SELF, &usage)
        return Double(usage.ru_maxrss)
        #endif
    }

    /// The highest resident size seen, sampled every 50 ms for `duration`.
    static func peak(during duration: Duration) async -> Double {
        var peak = current()
        let end = ContinuousClock.now + duration
        while ContinuousClock.now < end {
            try? await Task.sleep(for: .milliseconds(50))
            peak = max(peak, current())
        }
        return peak
    }
}
