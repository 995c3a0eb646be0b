#if os(Linux)
import Foundation
import TetherTesting
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why the bluezoo rig could not start, or could not carry out a command.
///
/// The description ends with the launcher's recent stderr (bluezoo's log), which is what a failing
/// test needs to show.
struct BluezooRigError: Error, CustomStringConvertible {
    /// What went wrong, followed by the launcher's recent log.
    let description: String
}

/// A private system bus with bluezoo owning org.bluez (BlueZ's D-Bus API without bluetoothd).
///
/// The rig runs `Tests/TetherBlueZTests/Rig/bluezoo_launcher.py` with `.venv/bin/python`
/// (`./scripts/test-peers` installs bluezoo 1.0.2 there). The launcher starts its own
/// `dbus-daemon`, runs a patched bluezoo on it as the system bus and takes commands on stdin; see
/// `Rig/README.md` for the protocol and for how bluezoo differs from bluetoothd. Closing the
/// launcher's stdin (``stop()``, or this test process ending in any way) ends bluezoo and the bus.
///
/// Adapters are powered when they appear. A peripheral is another adapter with an
/// `LEAdvertisement1` (with `Discoverable: true`) and a GATT application registered on it.
final class BluezooRig: Sendable {
    /// The private bus's D-Bus address (`unix:path=…,guid=…`); use it as the system bus.
    let busAddress: String

    private let launcher: Launcher
    private let freshAdapters: AdapterAllocator

    /// Adapters of ``shared``: hci0 and hci1.
    static let sharedAdapters: [(id: UInt8, address: String)] = [
        (0, "00:AA:01:00:00:00"),
        (1, "00:AA:01:01:00:01"),
    ]

    /// One rig per test process with ``sharedAdapters``, started by the first test that awaits
    /// `BluezooRig.shared.value` (a failed start fails every test that uses it).
    ///
    /// Tests run in parallel against it, so they must not disturb each other: each test uses its
    /// own adapters (``addFreshAdapter()``, removed when the test ends) or cleans up what it
    /// changed (`RemoveDevice`, `UnregisterApplication`, …). ``stopBluez()``, ``startBluez()`` and
    /// powering hci0/hci1 off affect every test on the rig: tests that do that start their own rig
    /// with ``start(adapters:scanInterval:)``.
    static let shared: Task<BluezooRig, any Error> = Task {
        try await BluezooRig.start(adapters: sharedAdapters)
    }

    private init(busAddress: String, launcher: Launcher, adapterIDs: [UInt8]) {
        self.busAddress = busAddress
        self.launcher = launcher
        self.freshAdapters = AdapterAllocator(taken: adapterIDs)
    }

    deinit {
        launcher.closeInput()
    }

    // MARK: Starting

    /// Starts a launcher with the given adapters (`hci<id>`, powered) and returns once bluezoo owns
    /// org.bluez on the new bus. `scanInterval` is the seconds between two simulated scans (the
    /// first scan after `StartDiscovery` is immediate).
    static func start(
        adapters: [(id: UInt8, address: String)],
        scanInterval: Double = 1
    ) async throws -> BluezooRig {
        let root = URL(fileURLWithPath: #filePath)  // Tests/TetherBlueZTests/Support/BluezooRig.swift
            .deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let python = root.appendingPathComponent(".venv/bin/python")
        let script = root.appendingPathComponent("Tests/TetherBlueZTests/Rig/bluezoo_launcher.py")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw BluezooRigError(description:
                "\(python.path) is missing: run ./scripts/test-peers (installs bluezoo==1.0.2 into .venv)")
        }
        guard bluezooIsInstalled(venv: root.appendingPathComponent(".venv")) else {
            throw BluezooRigError(description:
                "bluezoo is not installed in \(root.path)/.venv: run ./scripts/test-peers")
        }
        var arguments = [
            script.path,
            "--scan-interval", String(scanInterval),
            "--ready-timeout", String(Int(Timeouts.launcherReady.seconds)),
            "--command-timeout", String(Int(Timeouts.launcherCommand.seconds)),
        ]
        for adapter in adapters {
            arguments += ["-a", "\(adapter.id)=\(adapter.address)"]
        }
        _ = ignoreBrokenPipes
        let launcher = try Launcher(python: python, arguments: arguments)
        do {
            let first = try await launcher.nextLine(within: Timeouts.start, waitingFor: "ADDRESS")
            guard first.hasPrefix("ADDRESS ") else {
                throw launcher.failure("the launcher printed \(first.debugDescription) instead of ADDRESS")
            }
            let ready = try await launcher.nextLine(within: Timeouts.start, waitingFor: "READY")
            guard ready == "READY" else {
                throw launcher.failure("the launcher printed \(ready.debugDescription) instead of READY")
            }
            return BluezooRig(
                busAddress: String(first.dropFirst("ADDRESS ".count)),
                launcher: launcher,
                adapterIDs: adapters.map(\.id))
        } catch {
            launcher.terminate()
            throw error
        }
    }

    /// A command written after the launcher died must fail with EPIPE, not kill the test process
    /// with SIGPIPE (whose default action is to terminate): ignored once, process-wide.
    private static let ignoreBrokenPipes: Void = {
        _ = signal(SIGPIPE, SIG_IGN)
    }()

    private static func bluezooIsInstalled(venv: URL) -> Bool {
        let lib = venv.appendingPathComponent("lib")
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: lib.path)) ?? []
        return versions.contains { version in
            FileManager.default.fileExists(
                atPath: lib.appendingPathComponent("\(version)/site-packages/bluezoo/__init__.py").path)
        }
    }

    // MARK: Commands

    /// Adds adapter `hci<id>` with `address` (bluezoo's `org.bluezoo.Manager1.AddAdapter`),
    /// powered. Fails if the id or the address is taken.
    func addAdapter(id: UInt8, address: String) async throws {
        try await launcher.command("add-adapter \(id) \(address)")
        freshAdapters.markTaken(id)
    }

    /// Adds a powered adapter with an id and an address no other adapter of this rig has had, and
    /// returns them; remove it with ``removeAdapter(id:)`` when the test ends.
    func addFreshAdapter() async throws -> (id: UInt8, address: String) {
        let (id, address) = try freshAdapters.next()
        do {
            try await launcher.command("add-adapter \(id) \(address)")
        } catch {
            freshAdapters.release(id)
            throw error
        }
        return (id, address)
    }

    /// Removes adapter `hci<id>` (its connections end, then its objects leave the bus).
    func removeAdapter(id: UInt8) async throws {
        try await launcher.command("remove-adapter \(id)")
        freshAdapters.release(id)
    }

    /// Powers adapter `hci<id>` on or off (`Adapter1.Powered`); off also ends its connections
    /// and discovery sessions, as in BlueZ.
    func setPowered(_ on: Bool, adapter id: UInt8) async throws {
        try await launcher.command("power \(id) \(on ? "on" : "off")")
    }

    /// Simulates bluetoothd exiting: returns once org.bluez has no owner. Every BlueZ object
    /// disappears without `InterfacesRemoved`; clients only see `NameOwnerChanged`.
    func stopBluez() async throws {
        try await launcher.command("stop-bluez")
    }

    /// Simulates bluetoothd starting (again): returns once org.bluez is owned, with the adapters
    /// it had when stopped, all powered, and nothing else (no devices, applications,
    /// advertisements or agents).
    func startBluez() async throws {
        try await launcher.command("start-bluez", within: Timeouts.startBluez)
    }

    /// Checks that the launcher (and bluezoo, if running) answers.
    func ping() async throws {
        try await launcher.command("ping")
    }

    /// The launcher's recent stderr (bluezoo's log), for a failing test's message.
    var recentLog: String {
        launcher.recentLog
    }

    /// Closes the launcher's stdin: it stops bluezoo and the dbus-daemon and exits (within
    /// milliseconds; nothing waits for it). Commands sent afterwards fail.
    func stop() {
        launcher.closeInput()
    }
}

// MARK: - Timeouts

/// Bounds, not delays (each stretched by ``Patience``).
private enum Timeouts {
    /// ADDRESS and READY, each.
    static let start = Patience.duration(.seconds(20))
    /// One control command (the launcher gives bluezoo `launcherCommand` to answer).
    static let command = Patience.duration(.seconds(10))
    /// `start-bluez` (the launcher gives bluezoo `launcherReady` to own org.bluez).
    static let startBluez = Patience.duration(.seconds(20))
    static let launcherReady = Patience.duration(.seconds(15))
    static let launcherCommand = Patience.duration(.seconds(5))
}

private extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

// MARK: - Adapter ids

/// Ids and addresses for ``BluezooRig/addFreshAdapter()``: the lowest free id, and an address made
/// from a counter so that no address is ever reused (bluezoo keeps discovered devices forever).
private final class AdapterAllocator: @unchecked Sendable {
    private let lock = NSLock()
    private var taken: Set<UInt8>
    private var used: Set<UInt8> = []
    private var serial: UInt16 = 0

    init(taken: [UInt8]) {
        self.taken = Set(taken)
    }

    func next() throws -> (UInt8, String) {
        try lock.withLock {
            // An id is not reused while unused ones remain: a late second removal of a test's
            // adapter (its own, then its cleanup's) must not hit another test's new adapter.
            guard let id = (0...UInt8.max).first(where: { !taken.contains($0) && !used.contains($0) })
                ?? (0...UInt8.max).first(where: { !taken.contains($0) }) else {
                throw BluezooRigError(description: "all 256 adapter ids of the rig are in use")
            }
            used.insert(id)
            guard serial < UInt16.max else {
                throw BluezooRigError(description: "the rig has run out of fresh adapter addresses")
            }
            serial += 1
            taken.insert(id)
            let bytes = [UInt8(0), 0xAA, 0x02, id, UInt8(serial >> 8), UInt8(serial & 0xFF)]
            let address = bytes.map { byte in
                let hex = String(byte, radix: 16, uppercase: true)
                return hex.count == 1 ? "0" + hex : hex
            }.joined(separator: ":")
            return (id, address)
        }
    }

    func markTaken(_ id: UInt8) {
        lock.withLock { _ = taken.insert(id) }
    }

    func release(_ id: UInt8) {
        lock.withLock { _ = taken.remove(id) }
    }
}

// MARK: - Launcher process

/// The launcher process: stdout lines as they arrive (a reader thread), a tail of its stderr, and
/// one command in flight at a time.
private final class Launcher: @unchecked Sendable {
    private let process = Process()
    private let input: FileHandle
    private let lock = NSLock()
    private let gate = CommandGate()
    private let errorsEnded = DispatchSemaphore(value: 0)

    // Guarded by `lock`.
    private var lines: [String] = []
    private var partialLine = Data()
    private var outputClosed = false
    private var waiter: Waiter?
    private var nextWaiterID: UInt64 = 0
    private var errorTail = Data()
    private var inputClosed = false
    private var broken: String?

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<String, any Error>
        let timer: DispatchWorkItem
    }

    private static let errorTailLimit = 16_384
    private static let echoLog = ProcessInfo.processInfo.environment["TETHER_RIG_VERBOSE"] == "1"

    init(python: URL, arguments: [String]) throws {
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.executableURL = python
        process.arguments = arguments
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        input = stdin.fileHandleForWriting
        do {
            try process.run()
        } catch {
            throw BluezooRigError(description: "could not run \(python.path): \(error)")
        }
        // Process.run() closed our copies of the child's ends: EOF arrives when the launcher (and
        // the processes it started, which share its stderr) exit.
        let output = stdout.fileHandleForReading
        let errors = stderr.fileHandleForReading
        // `availableData` returns what one read(2) gets (empty at EOF); corelibs' `read(upToCount:)`
        // waits for the whole count.
        Thread { [self] in
            while case let data = output.availableData, !data.isEmpty {
                receiveOutput(data)
            }
            outputEnded()
        }.start()
        Thread { [self] in
            while case let data = errors.availableData, !data.isEmpty {
                receiveError(data)
            }
            errorsEnded.signal()
        }.start()
    }

    // MARK: Commands

    /// Sends one command and waits for its answer; throws on `ERR` or when no answer comes.
    func command(_ line: String, within timeout: Duration = Timeouts.command) async throws {
        await gate.acquire()
        defer { gate.release() }
        if let broken = lock.withLock({ broken }) {
            throw failure("\(line): the rig is unusable: \(broken)")
        }
        try send(line)
        let answer: String
        do {
            answer = try await nextLine(within: timeout, waitingFor: "the answer to \(line)")
        } catch {
            // A late answer would be taken for the next command's: the rig is done.
            lock.withLock { broken = broken ?? "no answer to \(line)" }
            terminate()
            throw error
        }
        if answer == "OK \(line)" {
            return
        }
        if answer.hasPrefix("ERR ") {
            throw failure("launcher: \(answer)")
        }
        lock.withLock { broken = broken ?? "unexpected answer \(answer.debugDescription)" }
        terminate()
        throw failure("\(line): unexpected answer \(answer.debugDescription)")
    }

    private func send(_ line: String) throws {
        let closed = lock.withLock { inputClosed }
        guard !closed else {
            throw failure("\(line): the rig was stopped")
        }
        do {
            try input.write(contentsOf: Data((line + "\n").utf8))
        } catch {
            throw failure("\(line): could not write to the launcher (\(exitDescription)): \(error)")
        }
    }

    /// "running", "exited with status N" or "killed by signal N".
    private var exitDescription: String {
        if process.isRunning {
            return "running"
        }
        return process.terminationReason == .uncaughtSignal
            ? "killed by signal \(process.terminationStatus)"
            : "exited with status \(process.terminationStatus)"
    }

    // MARK: Lines

    /// The next stdout line, waiting at most `timeout`.
    func nextLine(within timeout: Duration, waitingFor what: String) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            lock.lock()
            if !lines.isEmpty {
                let line = lines.removeFirst()
                lock.unlock()
                continuation.resume(returning: line)
                return
            }
            if outputClosed {
                lock.unlock()
                continuation.resume(throwing: failure("the launcher exited while waiting for \(what)"))
                return
            }
            precondition(waiter == nil, "one reader of the launcher's output at a time")
            nextWaiterID += 1
            let id = nextWaiterID
            let timer = DispatchWorkItem { [weak self] in
                self?.expire(id, waitingFor: what, after: timeout)
            }
            waiter = Waiter(id: id, continuation: continuation, timer: timer)
            lock.unlock()
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout.seconds, execute: timer)
        }
    }

    private func expire(_ id: UInt64, waitingFor what: String, after timeout: Duration) {
        lock.lock()
        guard let current = waiter, current.id == id else {
            lock.unlock()
            return
        }
        waiter = nil
        lock.unlock()
        current.continuation.resume(throwing: failure("waited \(timeout) for \(what) from the launcher"))
    }

    private func receiveOutput(_ data: Data) {
        lock.lock()
        partialLine.append(data)
        var complete: [String] = []
        while let newline = partialLine.firstIndex(of: UInt8(ascii: "\n")) {
            complete.append(String(decoding: partialLine[partialLine.startIndex..<newline], as: UTF8.self))
            partialLine.removeSubrange(partialLine.startIndex...newline)
        }
        lines.append(contentsOf: complete)
        let resumed = takeWaiterIfLineAvailable()
        lock.unlock()
        resumed.map { $0.continuation.resume(returning: $0.line) }
    }

    /// With `lock` held: the waiter and the line it gets, if both exist.
    private func takeWaiterIfLineAvailable() -> (continuation: CheckedContinuation<String, any Error>, line: String)? {
        guard let current = waiter, !lines.isEmpty else {
            return nil
        }
        waiter = nil
        current.timer.cancel()
        return (current.continuation, lines.removeFirst())
    }

    private func outputEnded() {
        lock.lock()
        outputClosed = true
        if !partialLine.isEmpty {
            lines.append(String(decoding: partialLine, as: UTF8.self))
            partialLine.removeAll()
        }
        var resumed: (CheckedContinuation<String, any Error>, Result<String, any Error>)?
        if let line = takeWaiterIfLineAvailable() {
            resumed = (line.continuation, .success(line.line))
        } else if let current = waiter {
            waiter = nil
            current.timer.cancel()
            resumed = (current.continuation, .failure(BluezooRigError(description: "")))
        }
        lock.unlock()
        guard let (continuation, result) = resumed else {
            return
        }
        switch result {
        case .success(let line):
            continuation.resume(returning: line)
        case .failure:
            // The launcher's last words: its stderr ends when it and its children have exited.
            _ = errorsEnded.wait(timeout: .now() + 2)
            continuation.resume(throwing: failure("the launcher's output ended (\(exitDescription))"))
        }
    }

    // MARK: Stderr

    private func receiveError(_ data: Data) {
        if Self.echoLog {
            FileHandle.standardError.write(data)
        }
        lock.withLock {
            errorTail.append(data)
            if errorTail.count > Self.errorTailLimit {
                errorTail.removeFirst(errorTail.count - Self.errorTailLimit)
            }
        }
    }

    /// The launcher's last stderr bytes.
    var recentLog: String {
        lock.withLock { String(decoding: errorTail, as: UTF8.self) }
    }

    /// An error for `message` with the launcher's recent log attached.
    func failure(_ message: String) -> BluezooRigError {
        let log = recentLog
        return BluezooRigError(description: log.isEmpty
            ? "bluezoo rig: \(message) (the launcher logged nothing)"
            : "bluezoo rig: \(message)\n--- launcher log (most recent last) ---\n\(log)")
    }

    // MARK: Ending

    /// Closes the launcher's stdin; the launcher then ends bluezoo and the bus and exits.
    func closeInput() {
        let wasClosed = lock.withLock {
            defer { inputClosed = true }
            return inputClosed
        }
        if !wasClosed {
            try? input.close()
        }
    }

    /// Ends the launcher at once (SIGTERM: it still cleans up).
    func terminate() {
        closeInput()
        if process.isRunning {
            process.terminate()
        }
    }
}

/// One control command in flight at a time, in arrival order.
private final class CommandGate: @unchecked Sendable {
    private let lock = NSLock()
    private var busy = false
    private var queue: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if busy {
                queue.append(continuation)
                lock.unlock()
            } else {
                busy = true
                lock.unlock()
                continuation.resume()
            }
        }
    }

    func release() {
        lock.lock()
        if queue.isEmpty {
            busy = false
            lock.unlock()
        } else {
            let next = queue.removeFirst()
            lock.unlock()
            next.resume()
        }
    }
}
#endif
