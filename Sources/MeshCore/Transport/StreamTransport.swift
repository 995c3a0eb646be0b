import Foundation
import Logging
import NIOCore
import NIOPosix
import TetherCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The byte-stream transport to a MeshCore radio: TCP to a WiFi companion (port 5000 by
/// default) or a serial line (115200 8N1), the way Linux users reach their radios.
///
/// Frames travel as `<` + u16 LE length + frame to the radio and `>` + u16 LE length + frame
/// back; inbound frames are reassembled across reads, bounded, and garbage is skipped. When the
/// radio closes the link the transport reports ``MeshLinkEvent/disconnected(reason:)`` and the
/// connection manager decides whether to connect again.
public actor StreamTransport: MeshTransport, MeshLinkReporting {
    /// Where the radio is.
    public enum Endpoint: Sendable, Hashable, CustomStringConvertible {
        /// A WiFi companion radio's TCP server.
        case tcp(host: String, port: Int)
        /// A radio on a serial device (USB CDC), e.g. `/dev/ttyACM0`.
        case serial(path: String, baudRate: Int)

        public var description: String {
            switch self {
            case .tcp(let host, let port): "tcp://\(host):\(port)"
            case .serial(let path, let baud): "serial:\(path)@\(baud)"
            }
        }
    }

    /// The WiFi companion firmware's default TCP port.
    public static let defaultTCPPort = 5000
    /// The companion firmware's serial speed.
    public static let defaultBaudRate = 115_200

    /// Where this transport connects.
    public nonisolated let endpoint: Endpoint
    /// How long a TCP connection attempt may take.
    public nonisolated let connectTimeout: Duration

    /// True while the link is up.
    public private(set) var isConnected = false
    /// Inbound frames dropped as oversized or corrupt since creation.
    public var discardedFrameCount: Int { reassembler.discardedFrameCount }

    private var channel: (any Channel)?
    private var connecting: Task<Void, any Error>?
    private var serial = 0
    private var received = Broadcaster<Data>(bufferSize: 4096)
    private var link = Broadcaster<MeshLinkEvent>(bufferSize: 64)
    private var reassembler: LengthPrefixedReassembler<ContinuousClock.Instant> = MeshCoreStreamFraming.reassembler(receiving: .fromRadio)
    private let clock = ContinuousClock()
    private let logger = Logger(label: "tether.meshcore.stream")

    /// Creates a transport to `endpoint` (not connected yet).
    public init(endpoint: Endpoint, connectTimeout: Duration = .seconds(5)) {
        self.endpoint = endpoint
        self.connectTimeout = connectTimeout
    }

    /// A transport to a WiFi companion at `host:port`.
    public static func tcp(host: String, port: Int = defaultTCPPort) -> StreamTransport {
        StreamTransport(endpoint: .tcp(host: host, port: port))
    }

    /// A transport to a radio on the serial device at `path`.
    public static func serial(path: String, baudRate: Int = defaultBaudRate) -> StreamTransport {
        StreamTransport(endpoint: .serial(path: path, baudRate: baudRate))
    }

    /// Frames from the radio, one element per frame.
    public var receivedData: AsyncStream<Data> {
        received.subscribe { [weak self] token in Task { await self?.removeReceiver(token) } }
    }

    /// Link changes: connected, then disconnected when either side closes.
    public func linkEvents() -> AsyncStream<MeshLinkEvent> {
        link.subscribe { [weak self] token in Task { await self?.removeLinkObserver(token) } }
    }

    /// Opens the TCP connection or the serial device. Overlapping calls share one attempt (a
    /// second connection would replace the first at the radio, which serves one app).
    public func connect() async throws {
        guard !isConnected else { return }
        if let connecting {
            try await connecting.value
            return
        }
        let attempt = Task { try await self.open() }
        connecting = attempt
        defer { connecting = nil }
        try await attempt.value
    }

    private func open() async throws {
        serial += 1
        let mine = serial
        let (events, continuation) = ByteStreamHandler.makeStream()
        let channel: any Channel
        do {
            channel = try await openChannel(continuation)
        } catch let error as MeshTransportError {
            throw error
        } catch {
            throw MeshTransportError.connectionFailed("\(endpoint): \(error)")
        }
        guard mine == serial else {
            // disconnect() ran while we were opening.
            try? await channel.close()
            throw MeshTransportError.notConnected
        }
        self.channel = channel
        reassembler.reset()
        isConnected = true
        logger.info("Connected", metadata: ["endpoint": "\(endpoint)"])
        link.yield(.connected)
        Task { [weak self] in
            for await event in events { await self?.handle(event, serial: mine) }
        }
    }

    /// Closes the link.
    public func disconnect() async {
        serial += 1
        let channel = self.channel
        self.channel = nil
        // Report the link down before awaiting the close, so nothing sees it "connected" then.
        if isConnected {
            isConnected = false
            link.yield(.disconnected(reason: nil))
        }
        if let channel { try? await channel.close() }
    }

    /// Sends one frame, framed as `<` + u16 LE length + frame.
    public func send(_ data: Data) async throws {
        guard isConnected, let channel else { throw MeshTransportError.notConnected }
        guard data.count <= MeshCoreFrameLimits.maximumFrameSize else { throw MeshTransportError.frameTooLarge(data.count) }
        let framed = MeshCoreStreamFraming.frame(data, direction: .toRadio)
        do {
            try await channel.writeAndFlush(ByteBuffer(bytes: framed))
        } catch {
            throw MeshTransportError.notConnected
        }
    }

    // MARK: Inbound

    private func handle(_ event: ByteStreamEvent, serial mine: Int) {
        guard mine == serial else { return }
        switch event {
        case .bytes(let bytes):
            let before = reassembler.discardedFrameCount
            for frame in reassembler.push(bytes, at: clock.now) { received.yield(frame) }
            if reassembler.discardedFrameCount > before {
                logger.warning("Discarded a corrupt or oversized frame from the radio", metadata: ["discarded": "\(reassembler.discardedFrameCount)"])
            }
        case .closed(let error):
            channel = nil
            guard isConnected else { return }
            isConnected = false
            let reason = error.map { "\($0)" } ?? "the radio closed the connection"
            logger.warning("Link lost", metadata: ["endpoint": "\(endpoint)", "reason": "\(reason)"])
            link.yield(.disconnected(reason: reason))
        }
    }

    // MARK: Opening

    private func openChannel(_ continuation: AsyncStream<ByteStreamEvent>.Continuation) async throws -> any Channel {
        switch endpoint {
        case .tcp(let host, let port):
            let timeout = connectTimeout
            let millis = Int64(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
            return try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.milliseconds(millis))
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(ByteStreamHandler(continuation)) }
                }
                .connect(host: host, port: port).get()
        case .serial(let path, let baudRate):
            let descriptor = try SerialPort.openRaw(path: path, baudRate: baudRate)
            do {
                return try await NIOPipeBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .channelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(ByteStreamHandler(continuation)) }
                    }
                    .takingOwnershipOfDescriptor(inputOutput: descriptor).get()
            } catch {
                _ = close(descriptor)
                throw MeshTransportError.serialPort("\(path): \(error)")
            }
        }
    }

    private func removeReceiver(_ token: Int) { received.remove(token) }
    private func removeLinkObserver(_ token: Int) { link.remove(token) }
}

/// Opening a serial device raw at 8N1.
enum SerialPort {
    /// Opens `path` non-blocking and configures it raw, 8 data bits, no parity, one stop bit,
    /// no flow control, at `baudRate`. Devices that are not terminals (a FIFO) are left as they are.
    static func openRaw(path: String, baudRate: Int) throws -> CInt {
        guard let speed = speed(for: baudRate) else {
            throw MeshTransportError.serialPort("unsupported baud rate \(baudRate)")
        }
        let descriptor = path.withCString { open($0, O_RDWR | O_NOCTTY | O_NONBLOCK) }
        guard descriptor >= 0 else {
            throw MeshTransportError.serialPort("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        if let problem = unsuitable(descriptor) {
            _ = close(descriptor)
            throw MeshTransportError.serialPort("\(path) \(problem): give a serial port (/dev/ttyUSB0, /dev/ttyACM0), a pseudo-terminal or a FIFO")
        }
        var settings = termios()
        if tcgetattr(descriptor, &settings) == 0 {
            cfmakeraw(&settings)
            cfsetispeed(&settings, speed)
            cfsetospeed(&settings, speed)
            settings.c_cflag |= tcflag_t(CLOCAL) | tcflag_t(CREAD) | tcflag_t(CS8)
            settings.c_cflag &= ~(tcflag_t(PARENB) | tcflag_t(CSTOPB) | tcflag_t(CRTSCTS))
            guard tcsetattr(descriptor, TCSANOW, &settings) == 0 else {
                let reason = String(cString: strerror(errno))
                _ = close(descriptor)
                throw MeshTransportError.serialPort("cannot configure \(path): \(reason)")
            }
        }
        return descriptor
    }

    /// Why a descriptor cannot carry a companion-radio stream, if it cannot: only terminals,
    /// FIFOs and sockets can be watched for input (a path opens neither a socket nor a folder
    /// read-write, but a descriptor handed over might be one). A regular file, a directory, a block device,
    /// or a character device that is no terminal (`/dev/null`, `/dev/zero`, `/dev/urandom`)
    /// would be refused by the event loop (epoll: EPERM) or read as an endless stream.
    static func unsuitable(_ descriptor: CInt) -> String? {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return "cannot be examined (\(String(cString: strerror(errno))))" }
        switch status.st_mode & S_IFMT {
        case S_IFIFO, S_IFSOCK: return nil
        case S_IFCHR: return isatty(descriptor) == 1 ? nil : "is a device but not a terminal"
        case S_IFREG: return "is a regular file"
        case S_IFDIR: return "is a directory"
        default: return "is not a serial port"
        }
    }

    private static func speed(for baudRate: Int) -> speed_t? {
        switch baudRate {
        case 9600: speed_t(B9600)
        case 19200: speed_t(B19200)
        case 38400: speed_t(B38400)
        case 57600: speed_t(B57600)
        case 115_200: speed_t(B115200)
        case 230_400: speed_t(B230400)
        case 460_800: speed_t(B460800)
        case 921_600: speed_t(B921600)
        default: nil
        }
    }
}
