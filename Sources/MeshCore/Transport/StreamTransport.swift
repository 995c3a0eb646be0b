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
///
/// Memory stays bounded whatever the radio (or whatever sits on the line) sends: frames wait
/// for their reader in a queue of ``frameQueueCapacity``; when it is full the transport stops
/// reading, so the kernel's flow control slows the sender, and nothing already received is
/// dropped. At most 144 KiB of unread bytes, one partial frame, ``frameQueueCapacity``
/// frames (≤ 300 bytes each) and the frames of the one 16 KiB read being queued are held per
/// connection.
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
    /// Frames received and not yet taken by the reader of ``receivedData``; the transport
    /// stops reading the link while this many wait.
    public static let frameQueueCapacity = 256

    /// Where this transport connects.
    public nonisolated let endpoint: Endpoint
    /// How long a TCP connection attempt may take.
    public nonisolated let connectTimeout: Duration

    /// 8 over TCP: the WiFi firmware reads the next command only once its replies are written,
    /// so the socket holds the rest. 4 on a serial line, whose receive buffer is small (64
    /// bytes on some boards) and overflows silently.
    public nonisolated var maximumCommandsInFlight: Int {
        switch endpoint {
        case .tcp: 8
        case .serial: 4
        }
    }

    /// True while the link is up.
    public private(set) var isConnected = false
    /// Inbound frames dropped as oversized or corrupt since creation.
    public var discardedFrameCount: Int { reassembler.discardedFrameCount }
    /// Frames received and waiting for the reader of ``receivedData``.
    public var queuedFrameCount: Int { inbox.count }
    /// Bytes skipped outside any frame (line noise, garbage) since creation.
    public var skippedByteCount: Int { reassembler.skippedByteCount }

    private var channel: (any Channel)?
    private var connecting: Task<Void, any Error>?
    private var serial = 0
    private var link = Broadcaster<MeshLinkEvent>(bufferSize: 64)
    private var reassembler: LengthPrefixedReassembler<ContinuousClock.Instant> = MeshCoreStreamFraming.reassembler(receiving: .fromRadio)
    private var inbox = FrameInbox(capacity: StreamTransport.frameQueueCapacity)
    private var discardsReported = 0
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

    /// Frames from the radio, one element per frame, in order.
    ///
    /// One reader at a time: asking again ends the previous stream (a session subscribes
    /// afresh on every start). The stream outlives reconnections; frames that arrive while
    /// nobody reads wait in the queue, and while it is full the link is not read.
    public var receivedData: AsyncStream<Data> {
        let subscription = inbox.subscribe()
        return AsyncStream(unfolding: { [weak self] in
            await self?.nextFrame(subscription)
        })
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
        let connection: ByteStreamChannel.Connection
        do {
            connection = try await openChannel()
        } catch let error as MeshTransportError {
            throw error
        } catch {
            throw MeshTransportError.connectionFailed("\(endpoint): \(MeshTransportError.describe(error))")
        }
        guard mine == serial else {
            // disconnect() ran while we were opening.
            await ByteStreamChannel.discard(connection)
            throw MeshTransportError.notConnected
        }
        channel = connection.channel
        reassembler.reset()
        if inbox.count > 0 {
            // Replies of the last connection would answer this one's commands wrongly.
            logger.notice("Dropped frames of the previous connection that nobody read", metadata: ["frames": "\(inbox.count)"])
        }
        inbox.removeAll()
        isConnected = true
        logger.info("Connected", metadata: ["endpoint": "\(endpoint)"])
        link.yield(.connected)
        Task { [weak self] in
            var failure: (any Error)?
            do {
                try await connection.executeThenClose { inbound, _ in
                    for try await buffer in inbound {
                        guard let self, await self.ingest(buffer, serial: mine) else { return }
                    }
                }
            } catch {
                failure = error
            }
            await self?.closed(failure, serial: mine)
        }
    }

    /// Closes the link.
    public func disconnect() async {
        serial += 1
        let channel = self.channel
        self.channel = nil
        inbox.releaseProducer()
        // Report the link down before awaiting the close, so nothing sees it "connected" then.
        if isConnected {
            isConnected = false
            link.yield(.disconnected(reason: nil))
        }
        if let channel { try? await channel.close() }
    }

    /// Sends one frame, framed as `<` + u16 LE length + frame.
    ///
    /// Throws ``MeshTransportError/radioNotReading`` instead of queueing more when the radio
    /// has left 64 KiB of earlier frames unread.
    public func send(_ data: Data) async throws {
        guard isConnected, let channel, channel.isActive else { throw MeshTransportError.notConnected }
        guard data.count <= MeshCoreFrameLimits.maximumFrameSize else { throw MeshTransportError.frameTooLarge(data.count) }
        guard channel.isWritable else { throw MeshTransportError.radioNotReading }
        let framed = MeshCoreStreamFraming.frame(data, direction: .toRadio)
        do {
            try await channel.writeAndFlush(ByteBuffer(bytes: framed))
        } catch {
            throw MeshTransportError.notConnected
        }
    }

    // MARK: Inbound

    /// Reassembles one read and queues its frames, waiting while the queue is full. False
    /// when the connection is no longer current.
    private func ingest(_ buffer: ByteBuffer, serial mine: Int) async -> Bool {
        guard mine == serial else { return false }
        let frames = reassembler.push(Data(buffer.readableBytesView), at: clock.now)
        reportDiscards()
        var waited = false
        for frame in frames {
            while inbox.isFull {
                waited = true
                let room = await withCheckedContinuation { inbox.parkProducer($0) }
                guard room, mine == serial else { return false }
            }
            guard mine == serial else { return false }
            inbox.append(frame)
        }
        // Reading stopped while the queue was full: that pause is the app's, not the radio's
        // silence, and must not time out the partial frame the last read ended in.
        if waited { reassembler.resumeReading(at: clock.now) }
        return true
    }

    /// One warning per run of discarded frames, not one per read: a line full of noise must
    /// not flood the log.
    private func reportDiscards() {
        let discarded = reassembler.discardedFrameCount
        guard discarded > discardsReported else { return }
        if discardsReported == 0 || discarded >= discardsReported * 2 {
            logger.warning("Discarded corrupt or oversized frames from the radio", metadata: [
                "discarded": "\(discarded)", "skippedBytes": "\(reassembler.skippedByteCount)"])
            discardsReported = discarded
        }
    }

    private func nextFrame(_ subscription: Int) async -> Data? {
        if let frame = inbox.take(subscription) { return frame }
        guard inbox.isCurrent(subscription), !Task.isCancelled else { return nil }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                inbox.park(subscription, continuation)
            }
        } onCancel: {
            Task { [weak self] in await self?.cancelReader(subscription) }
        }
    }

    private func cancelReader(_ subscription: Int) { inbox.endReader(subscription) }

    private func closed(_ error: (any Error)?, serial mine: Int) {
        guard mine == serial else { return }
        channel = nil
        inbox.releaseProducer()
        guard isConnected else { return }
        isConnected = false
        let reason = error.map { MeshTransportError.describe($0) } ?? "the radio closed the connection"
        logger.warning("Link lost", metadata: ["endpoint": "\(endpoint)", "reason": "\(reason)"])
        link.yield(.disconnected(reason: reason))
    }

    // MARK: Opening

    private func openChannel() async throws -> ByteStreamChannel.Connection {
        switch endpoint {
        case .tcp(let host, let port):
            let timeout = connectTimeout
            let millis = Int64(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
            return try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.milliseconds(millis))
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .connect(host: host, port: port) { ByteStreamChannel.wrap($0) }
        case .serial(let path, let baudRate):
            let descriptor = try SerialPort.openRaw(path: path, baudRate: baudRate)
            do {
                return try await NIOPipeBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .takingOwnershipOfDescriptor(inputOutput: descriptor) { ByteStreamChannel.wrap($0) }
            } catch {
                _ = close(descriptor)
                throw MeshTransportError.serialPort("\(path): \(MeshTransportError.describe(error))")
            }
        }
    }

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
