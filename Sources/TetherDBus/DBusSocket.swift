#if os(Linux)
import Foundation
import Glibc

/// A stream socket to a D-Bus server, with `SCM_RIGHTS` descriptor passing on Unix sockets.
///
/// Blocking during authentication (bounded by `poll` timeouts), non-blocking afterwards when
/// the connection drives it from dispatch sources.
final class DBusSocket: @unchecked Sendable {
    let fd: Int32
    let isUnix: Bool
    private var closed = false

    private init(fd: Int32, isUnix: Bool) {
        self.fd = fd
        self.isUnix = isUnix
    }

    deinit { close() }

    func close() {
        guard !closed else { return }
        closed = true
        _ = Glibc.close(fd)
    }

    /// Connects to the first transport that accepts.
    static func connect(to address: DBusAddress) throws(DBusError) -> DBusSocket {
        var failures: [String] = []
        for transport in address.transports {
            do {
                return try connect(transport)
            } catch {
                failures.append(error.message)
            }
        }
        throw DBusError(name: DBusError.noServer, message: failures.joined(separator: "; "))
    }

    private static func connect(_ transport: DBusAddress.Transport) throws(DBusError) -> DBusSocket {
        switch transport {
        case .unixPath(let path):
            return try connectUnix(name: Array(path.utf8), abstract: false, display: path)
        case .unixAbstract(let name):
            return try connectUnix(name: Array(name.utf8), abstract: true, display: "@" + name)
        case .tcp(let host, let port):
            return try connectTCP(host: host, port: port)
        }
    }

    private static func connectUnix(name: [UInt8], abstract: Bool, display: String) throws(DBusError) -> DBusSocket {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw DBusError(name: DBusError.noServer, message: "socket(): \(errnoText())") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let bytes = abstract ? [0] + name : name
        guard bytes.count < capacity else {
            _ = Glibc.close(fd)
            throw DBusError(name: DBusError.badAddress, message: "socket path too long: \(display)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in bytes.enumerated() { raw[i] = byte }
        }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)! + bytes.count + (abstract ? 0 : 1))
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
        }
        guard result == 0 else {
            let text = errnoText()
            _ = Glibc.close(fd)
            throw DBusError(name: DBusError.noServer, message: "cannot connect to \(display): \(text)")
        }
        return DBusSocket(fd: fd, isUnix: true)
    }

    private static func connectTCP(host: String, port: UInt16) throws(DBusError) -> DBusSocket {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw DBusError(name: DBusError.noServer, message: "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            entry = current.pointee.ai_next
            let fd = socket(current.pointee.ai_family, current.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), current.pointee.ai_protocol)
            guard fd >= 0 else { lastError = errnoText(); continue }
            if Glibc.connect(fd, current.pointee.ai_addr, current.pointee.ai_addrlen) == 0 {
                var one: Int32 = 1
                _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                return DBusSocket(fd: fd, isUnix: false)
            }
            lastError = errnoText()
            _ = Glibc.close(fd)
        }
        throw DBusError(name: DBusError.noServer, message: "cannot connect to \(host):\(port): \(lastError)")
    }

    func setNonBlocking() {
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    }

    // MARK: Blocking I/O for the authentication handshake

    /// Writes all of `bytes`, waiting at most until `deadline`.
    func writeAll(_ bytes: [UInt8], deadline: ContinuousClock.Instant) throws(DBusError) {
        var offset = 0
        while offset < bytes.count {
            try wait(for: Int16(POLLOUT), until: deadline)
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw DBusError(name: DBusError.disconnected, message: "send: \(errnoText())")
            }
            offset += written
        }
    }

    /// Reads one CRLF-terminated line (at most 16 KiB), byte by byte so no message byte that
    /// follows the handshake is consumed.
    func readLine(deadline: ContinuousClock.Instant) throws(DBusError) -> String {
        var line: [UInt8] = []
        while true {
            try wait(for: Int16(POLLIN), until: deadline)
            var byte: UInt8 = 0
            let count = Glibc.recv(fd, &byte, 1, 0)
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw DBusError(name: DBusError.disconnected, message: "recv: \(errnoText())")
            }
            guard count == 1 else { throw DBusError(name: DBusError.disconnected, message: "the bus closed the connection during authentication") }
            if byte == UInt8(ascii: "\n"), line.last == UInt8(ascii: "\r") {
                line.removeLast()
                return String(decoding: line, as: UTF8.self)
            }
            line.append(byte)
            guard line.count <= 16384 else { throw DBusError(name: DBusError.authFailed, message: "authentication line longer than 16 KiB") }
        }
    }

    private func wait(for events: Int16, until deadline: ContinuousClock.Instant) throws(DBusError) {
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { throw DBusError(name: DBusError.noReply, message: "timed out during authentication") }
            let milliseconds = Int32(clamping: remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1)
            var pfd = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&pfd, 1, milliseconds)
            if ready < 0, errno == EINTR { continue }
            if ready < 0 { throw DBusError(name: DBusError.disconnected, message: "poll: \(errnoText())") }
            if ready > 0 { return }
        }
    }

    // MARK: Non-blocking I/O with descriptors

    enum IOResult {
        case transferred(Int)
        case wouldBlock
        case closed(String)
    }

    /// Sends bytes, with `fds` attached (only on the first call for a message).
    func send(_ bytes: UnsafeRawBufferPointer, fds: [Int32]) -> IOResult {
        var iov = iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress), iov_len: bytes.count)
        var header = msghdr()
        return withUnsafeMutablePointer(to: &iov) { iovPointer -> IOResult in
            header.msg_iov = iovPointer
            header.msg_iovlen = 1
            let controlLength = fds.isEmpty ? 0 : Self.controlSpace(fdCount: fds.count)
            var control = [UInt8](repeating: 0, count: max(controlLength, 1))
            return control.withUnsafeMutableBytes { controlBuffer -> IOResult in
                if !fds.isEmpty {
                    Self.fillRights(controlBuffer, fds: fds)
                    header.msg_control = controlBuffer.baseAddress
                    header.msg_controllen = controlLength
                }
                while true {
                    let sent = sendmsg(fd, &header, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
                    if sent >= 0 { return .transferred(sent) }
                    if errno == EINTR { continue }
                    if errno == EAGAIN || errno == EWOULDBLOCK { return .wouldBlock }
                    return .closed("send: \(errnoText())")
                }
            }
        }
    }

    /// Receives up to `buffer.count` bytes; descriptors that arrive are appended to `fds`.
    func receive(into buffer: UnsafeMutableRawBufferPointer, fds: inout [Int32]) -> IOResult {
        var iov = iovec(iov_base: buffer.baseAddress, iov_len: buffer.count)
        var header = msghdr()
        let controlLength = isUnix ? Self.controlSpace(fdCount: 64) : 0
        var control = [UInt8](repeating: 0, count: max(controlLength, 1))
        return withUnsafeMutablePointer(to: &iov) { iovPointer -> IOResult in
            header.msg_iov = iovPointer
            header.msg_iovlen = 1
            return control.withUnsafeMutableBytes { controlBuffer -> IOResult in
                if controlLength > 0 {
                    header.msg_control = controlBuffer.baseAddress
                    header.msg_controllen = controlLength
                }
                while true {
                    let count = recvmsg(fd, &header, Int32(MSG_DONTWAIT) | Int32(MSG_CMSG_CLOEXEC))
                    if count < 0 {
                        if errno == EINTR { continue }
                        if errno == EAGAIN || errno == EWOULDBLOCK { return .wouldBlock }
                        return .closed("recv: \(errnoText())")
                    }
                    if controlLength > 0 { Self.collectRights(controlBuffer, length: Int(header.msg_controllen), into: &fds) }
                    if count == 0 { return .closed("the bus closed the connection") }
                    return .transferred(count)
                }
            }
        }
    }

    // `CMSG_*` are macros Swift does not import; these are their Linux definitions.
    private static let headerSize = MemoryLayout<cmsghdr>.size
    private static func align(_ length: Int) -> Int { (length + MemoryLayout<Int>.size - 1) & ~(MemoryLayout<Int>.size - 1) }
    private static func controlSpace(fdCount: Int) -> Int { align(headerSize) + align(fdCount * MemoryLayout<Int32>.size) }

    private static func fillRights(_ buffer: UnsafeMutableRawBufferPointer, fds: [Int32]) {
        var header = cmsghdr()
        header.cmsg_len = align(headerSize) + fds.count * MemoryLayout<Int32>.size
        header.cmsg_level = SOL_SOCKET
        header.cmsg_type = Int32(SCM_RIGHTS)
        buffer.storeBytes(of: header, as: cmsghdr.self)
        for (i, fd) in fds.enumerated() {
            buffer.storeBytes(of: fd, toByteOffset: align(headerSize) + i * MemoryLayout<Int32>.size, as: Int32.self)
        }
    }

    private static func collectRights(_ buffer: UnsafeMutableRawBufferPointer, length: Int, into fds: inout [Int32]) {
        var offset = 0
        while offset + headerSize <= length {
            let header = buffer.loadUnaligned(fromByteOffset: offset, as: cmsghdr.self)
            let messageLength = Int(header.cmsg_len)
            guard messageLength >= headerSize, offset + messageLength <= length else { return }
            if header.cmsg_level == SOL_SOCKET, header.cmsg_type == Int32(SCM_RIGHTS) {
                let count = (messageLength - align(headerSize)) / MemoryLayout<Int32>.size
                for i in 0..<count {
                    fds.append(buffer.loadUnaligned(fromByteOffset: offset + align(headerSize) + i * MemoryLayout<Int32>.size, as: Int32.self))
                }
            }
            offset += align(messageLength)
        }
    }
}

func errnoText(_ code: Int32 = errno) -> String {
    String(cString: strerror(code))
}
#endif
