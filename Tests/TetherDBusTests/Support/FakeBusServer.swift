import Foundation
import Glibc

@testable import TetherDBus

/// A scripted D-Bus "server" on a Unix socket, for what a real `dbus-daemon` never does:
/// malformed messages, garbage framing, a handshake that stalls or rejects everything.
///
/// Every blocking step waits on `poll` with a deadline, so a script cannot hang a test.
final class FakeBusServer: @unchecked Sendable {
    let address: DBusAddress
    private let directory: URL
    private let listenFD: Int32
    private let lock = NSLock()
    private var closed = false
    /// nil when the script finished, else why it failed.
    let finished = OneShot<String?>()

    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("tether-fake-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("bus").path
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in bytes.enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, 4) == 0 else {
            let text = String(cString: strerror(errno))
            _ = Glibc.close(fd)
            throw TestFailure("bind/listen \(path): \(text)")
        }
        listenFD = fd
        self.address = try DBusAddress(parsing: "unix:path=\(path)")
    }

    deinit { close() }

    /// Stops listening and removes the socket's directory (idempotent).
    func close() {
        let first = lock.withLock {
            defer { closed = true }
            return !closed
        }
        guard first else { return }
        _ = Glibc.close(listenFD)
        try? FileManager.default.removeItem(at: directory)
    }

    /// Accepts one client on a thread and runs `script` with it; ``finished`` tells the outcome.
    func serve(_ script: @escaping @Sendable (FakePeer) throws -> Void) {
        let listenFD = self.listenFD
        let finished = self.finished
        Thread.detachNewThread {
            do {
                var pfd = pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)
                guard poll(&pfd, 1, 20_000) == 1 else { throw TestFailure("no client connected within 20 s") }
                let fd = accept(listenFD, nil, nil)
                guard fd >= 0 else { throw TestFailure("accept: \(String(cString: strerror(errno)))") }
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                let peer = FakePeer(fd: fd)
                defer { peer.close() }
                try script(peer)
                finished.fulfill(nil)
            } catch {
                finished.fulfill("\(error)")
            }
        }
    }
}

/// The server's end of one connection.
final class FakePeer: @unchecked Sendable {
    let fd: Int32
    private var buffer: [UInt8] = []
    private var nextSerial: UInt32 = 1

    init(fd: Int32) { self.fd = fd }

    func close() { _ = Glibc.close(fd) }

    /// Reads more bytes into the buffer (waiting at most 20 s); false at end of stream.
    private func fill() throws -> Bool {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, 20_000) == 1 else { throw TestFailure("the client sent nothing within 20 s") }
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &chunk, chunk.count, 0)
        guard count >= 0 else { throw TestFailure("recv: \(String(cString: strerror(errno)))") }
        buffer += chunk[0..<count]
        return count > 0
    }

    /// One CRLF-terminated handshake line (a leading NUL byte is dropped).
    func readLine() throws -> String {
        while true {
            if buffer.first == 0 { buffer.removeFirst() }
            if let end = buffer.indices.first(where: { $0 > 0 && buffer[$0] == 10 && buffer[$0 - 1] == 13 }) {
                let line = String(decoding: buffer[..<(end - 1)], as: UTF8.self)
                buffer.removeFirst(end + 1)
                return line
            }
            guard try fill() else { throw TestFailure("the client closed during the handshake") }
        }
    }

    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw TestFailure("send: \(String(cString: strerror(errno)))") }
            offset += sent
        }
    }

    func writeLine(_ text: String) throws { try write(Array((text + "\r\n").utf8)) }

    /// Answers AUTH with OK and NEGOTIATE_UNIX_FD with AGREE until the client says BEGIN.
    func acceptHandshake() throws {
        while true {
            let line = try readLine()
            if line.hasPrefix("AUTH ") {
                try writeLine("OK 0123456789abcdef0123456789abcdef")
            } else if line == "NEGOTIATE_UNIX_FD" {
                try writeLine("AGREE_UNIX_FD")
            } else if line == "BEGIN" {
                return
            } else {
                try writeLine("ERROR")
            }
        }
    }

    /// The next whole message from the client.
    func readMessage() throws -> DBusMessage {
        while true {
            if buffer.count >= DBusMessage.fixedHeaderLength {
                let length = try DBusMessage.frameLength(prefix: buffer, maximumLength: 1 << 20)
                if buffer.count >= length {
                    let bytes = Array(buffer[..<length])
                    buffer.removeFirst(length)
                    return try DBusMessage.decode(bytes)
                }
            }
            guard try fill() else { throw TestFailure("the client closed the connection") }
        }
    }

    /// Sends a message with the next serial.
    func send(_ message: DBusMessage) throws {
        var message = message
        message.sender = message.sender ?? "org.freedesktop.DBus"
        try write(try message.encoded(serial: nextSerial))
        nextSerial += 1
    }

    /// The handshake and the Hello exchange, as a bus does them.
    func acceptClient(uniqueName: String = ":1.1") throws {
        try acceptHandshake()
        let hello = try readMessage()
        guard hello.member == "Hello" else { throw TestFailure("expected Hello, got \(hello)") }
        try send(.methodReturn(to: hello, body: [.string(uniqueName)]))
    }

    /// Waits until the client closes its end (bounded).
    func waitForClose() throws {
        while try fill() {}
    }
}
