import Foundation
import Glibc
import Testing
import TetherTesting

@testable import TetherDBus

/// A private `dbus-daemon` for one test: its own config in a temporary directory, started with
/// `--nofork --print-address`, killed when the test is done (``stop()``, or `deinit`).
///
/// A missing `dbus-daemon` fails the test (scripts/test-peers installs it); it is never skipped.
final class PrivateBus: @unchecked Sendable {
    /// Where the daemon listens and how it authenticates.
    enum Listener: Sendable {
        /// A Unix socket at a path in the temporary directory; EXTERNAL authentication.
        case unixPath
        /// A Unix socket in the abstract namespace; EXTERNAL authentication.
        case unixAbstract
        /// TCP on 127.0.0.1 (a free port); ANONYMOUS authentication only.
        case tcpAnonymous
    }

    /// The address the daemon printed.
    let address: DBusAddress
    /// The daemon's process id.
    let pid: Int32
    /// The temporary directory holding the config (and the socket, for ``Listener/unixPath``).
    let directory: URL

    private let process: Process
    /// Kept open so the daemon's stdout stays a valid pipe.
    private let output: Pipe
    /// Signalled once, by the process's termination handler.
    private let exited: DispatchSemaphore
    private let lock = NSLock()
    private var stopped = false
    private var reaped = false
    /// The watchdog's stdin; closed on ``stop()`` (the daemon is already dead by then).
    private var watchdog: Pipe?

    private init(address: DBusAddress, process: Process, output: Pipe, exited: DispatchSemaphore, directory: URL) {
        self.address = address
        self.process = process
        self.output = output
        self.exited = exited
        self.pid = process.processIdentifier
        self.directory = directory
    }

    deinit { stop() }

    /// The daemon binary: `/usr/bin/dbus-daemon`, else the first on `PATH`.
    static func daemonPath() throws -> String {
        var candidates = ["/usr/bin/dbus-daemon"]
        if let path = ProcessInfo.processInfo.environment["PATH"] {
            candidates += path.split(separator: ":").map { "\($0)/dbus-daemon" }
        }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw TestFailure("""
                dbus-daemon is not installed (looked at /usr/bin/dbus-daemon and on PATH); \
                TetherDBusTests run a private bus with it — run scripts/test-peers to install it
                """)
        }
        return found
    }

    /// Starts a daemon and waits (at most `seconds`) for it to print its address.
    static func start(_ listener: Listener = .unixPath, seconds: Double = 20) async throws -> PrivateBus {
        let seconds = Patience.seconds(seconds)
        let daemon = try daemonPath()
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("tether-dbus-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let listen: String
        let auth: String
        switch listener {
        case .unixPath:
            listen = "unix:path=\(directory.path)/bus"
            auth = "<auth>EXTERNAL</auth>"
        case .unixAbstract:
            listen = "unix:abstract=tether-test-\(UUID().uuidString)"
            auth = "<auth>EXTERNAL</auth>"
        case .tcpAnonymous:
            listen = "tcp:host=127.0.0.1,port=0"
            auth = "<auth>ANONYMOUS</auth><allow_anonymous/>"
        }
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>\(listen)</listen>
              \(auth)
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """
        let configURL = directory.appendingPathComponent("bus.conf")
        try config.write(to: configURL, atomically: true, encoding: .utf8)
        let logURL = directory.appendingPathComponent("daemon.log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: daemon)
        process.arguments = ["--config-file=\(configURL.path)", "--nofork", "--print-address=1"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: logURL)
        process.standardInput = FileHandle.nullDevice
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.run()

        let readFD = output.fileHandleForReading.fileDescriptor
        let line: Result<String, TestFailure> = await withCheckedContinuation { continuation in
            // poll() blocks: keep it off the cooperative pool.
            Thread.detachNewThread {
                continuation.resume(returning: readLine(fd: readFD, seconds: seconds))
            }
        }
        let text: String
        switch line {
        case .success(let printed):
            text = printed
        case .failure(let failure):
            _ = Glibc.kill(process.processIdentifier, SIGKILL)
            _ = exited.wait(timeout: .now() + 5)
            let log = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(at: directory)
            throw TestFailure("dbus-daemon did not start: \(failure.description); its log: \(log)")
        }
        let address: DBusAddress
        do {
            address = try DBusAddress(parsing: text)
        } catch {
            _ = Glibc.kill(process.processIdentifier, SIGKILL)
            throw TestFailure("dbus-daemon printed an address Tether cannot parse: '\(text)': \(error)")
        }
        let bus = PrivateBus(address: address, process: process, output: output, exited: exited, directory: directory)
        bus.watchdog = try? startWatchdog(for: process.processIdentifier)
        return bus
    }

    /// A shell that kills the daemon when its stdin closes: the test process's end of the pipe
    /// closes however that process ends (a crash, a kill), so no daemon outlives its tests.
    private static func startWatchdog(for pid: Int32) throws -> Pipe {
        let watchdog = Process()
        watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
        watchdog.arguments = ["-c", "read -r _; kill -9 \(pid) 2>/dev/null"]
        let input = Pipe()
        watchdog.standardInput = input
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        try watchdog.run()
        return input
    }

    /// Reads the first line the daemon prints, waiting on `poll` with a deadline.
    private static func readLine(fd: Int32, seconds: Double) -> Result<String, TestFailure> {
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
        var bytes: [UInt8] = []
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { return .failure(TestFailure("no address within \(seconds) s")) }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Int32(remaining.components.seconds * 1000 + 1))
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 512)
            let count = read(fd, &chunk, chunk.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return .failure(TestFailure("it exited before printing its address")) }
            bytes += chunk[0..<count]
            if let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) {
                return .success(String(decoding: bytes[..<newline], as: UTF8.self))
            }
        }
    }

    /// Connects a client to the bus (bounded).
    func connect(
        label: String = "tether.dbus.test", maximumMessageSize: Int = DBusConnection.defaultMaximumMessageSize
    ) async throws -> DBusConnection {
        let address = self.address
        return try await withTimeout("connecting to \(address)") {
            try await DBusConnection.connect(to: address, label: label, timeout: Patience.duration(.seconds(15)),
                                             maximumMessageSize: maximumMessageSize)
        }
    }

    /// Kills the daemon at once (SIGKILL), as a crash would, and waits (bounded) for it to exit.
    func kill() {
        let alreadyReaped = lock.withLock { reaped }
        guard !alreadyReaped, process.isRunning else { return }
        _ = Glibc.kill(pid, SIGKILL)
        if exited.wait(timeout: .now() + 10) == .success {
            lock.withLock { reaped = true }
        }
    }

    /// Stops the daemon and removes its directory (idempotent).
    func stop() {
        let first = lock.withLock {
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        kill()
        try? watchdog?.fileHandleForWriting.close()
        try? FileManager.default.removeItem(at: directory)
    }
}
