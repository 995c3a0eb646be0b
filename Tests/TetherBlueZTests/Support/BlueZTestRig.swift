#if os(Linux)
import Foundation
import TetherTesting
import Logging
import TetherBlueZ
import TetherDBus

/// The BlueZ that the BlueZ tests run against.
///
/// Two kinds: bluezoo (BlueZ's D-Bus API without bluetoothd, ``BluezooRig``; the default, fast,
/// runs anywhere) and the real bluetoothd 5.66 with the Linux 6.1 Bluetooth stack in the QEMU
/// guest (``GuestRig``; `TETHER_BLUEZ_RIG=guest`, set by `./scripts/test` inside
/// `scripts/bluez-vm/run --host`). The suites that run on both get their rig from
/// ``BlueZRigs``, never by naming one.
protocol BlueZTestRig: Sendable {
    /// The bus address BlueZ is on; the test's drivers and hosts use it as their system bus.
    var busAddress: String { get }
    /// A powered adapter for the calling test alone; give it back with ``releaseAdapter(id:)``.
    func addFreshAdapter() async throws -> (id: UInt8, address: String)
    /// `count` adapters at once (tests that each took one and waited for another would
    /// deadlock a pool of fixed size).
    func addFreshAdapters(_ count: Int) async throws -> [(id: UInt8, address: String)]
    /// Gives an adapter back: bluezoo removes it; the guest forgets every device it knows
    /// (bonds and caches included) before the next test gets it.
    func releaseAdapter(id: UInt8) async throws
    /// Powers an adapter on or off (`Adapter1.Powered`).
    func setPowered(_ on: Bool, adapter id: UInt8) async throws
    /// Ends bluetoothd: org.bluez loses its owner (rigs of a test's own only).
    func stopBluez() async throws
    /// Starts bluetoothd again, every adapter powered (rigs of a test's own only).
    func startBluez() async throws
    /// Ends a rig of a test's own (nothing for the shared rig).
    func stop()
}

/// Which rig the BlueZ tests use, from `TETHER_BLUEZ_RIG` (`bluezoo`, the default, or `guest`).
enum BlueZRigs {
    /// True when the tests run against the real bluetoothd in the QEMU guest.
    static var isGuest: Bool {
        ProcessInfo.processInfo.environment["TETHER_BLUEZ_RIG"] == "guest"
    }

    /// How often a hosted peripheral registers its advertisement again: btvirt (BlueZ 5.66's
    /// virtual controller) reports an advertisement only when advertising or scanning is
    /// enabled, and the kernel drops reports that arrive while its discovery is starting, so a
    /// scan may otherwise wait for the kernel's 10.24 s discovery restart. bluezoo scans by itself.
    static var readvertiseInterval: Duration? { isGuest ? .seconds(1) : nil }

    /// The longest write without response: MTU − 3, at most the driver's value limit. bluezoo
    /// reports MTU 512 (no application MTU); the kernel and btvirt's controllers negotiate
    /// Linux's largest, 517, and the guest's peripherals refuse more than 510 bytes.
    static var commandLength: Int { isGuest ? 510 : 509 }

    /// The driver's value limit for the rig's peripherals: bluetoothd 5.66 (the guest's)
    /// refuses values of 511 and 512 bytes as a GATT server (fixed in 5.69).
    static var maximumValueLength: Int { isGuest ? 510 : 512 }

    /// The default bound on one awaited event: the guest's stack runs under TCG, and a
    /// reconnection there waits for the peripheral's next advertisement (re-registered every
    /// second, and the controller answers a connection only while advertising), which under a
    /// loaded host took up to 10 s. A bound, not a delay: waits end at the event.
    static var patience: Double { isGuest ? 30 : 10 }

    /// The drivers' logger: `TETHER_TEST_LOG=debug` (or `trace`, `notice`…) shows what they
    /// do, to read a failing run; info by default.
    static var driverLogger: Logger {
        var logger = Logger(label: "tether.bluez")
        if let level = ProcessInfo.processInfo.environment["TETHER_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) {
            logger.logLevel = level
        }
        return logger
    }

    /// What the tests run against, for messages.
    static var name: String { isGuest ? "bluetoothd in the QEMU guest" : "bluezoo" }

    /// The rig shared by the tests running in parallel: each test takes adapters of its own.
    static func shared() async throws -> any BlueZTestRig {
        if isGuest { return try await GuestRig.shared.value }
        return try await BluezooRig.shared.value
    }

    /// A rig where the calling test's adapters are alone (no other test's peripheral is heard):
    /// bluezoo starts a bus and bluezoo of its own; the guest is taken for this test only (the
    /// others wait). End it with ``BlueZTestRig/stop()``.
    static func makePrivate() async throws -> any BlueZTestRig {
        if isGuest { return try await GuestRig.shared.value.exclusive() }
        return try await BluezooRig.start(adapters: [])
    }
}

extension BluezooRig: BlueZTestRig {
    func addFreshAdapters(_ count: Int) async throws -> [(id: UInt8, address: String)] {
        var adapters: [(id: UInt8, address: String)] = []
        do {
            for _ in 0..<count { adapters.append(try await addFreshAdapter()) }
        } catch {
            for adapter in adapters { try? await removeAdapter(id: adapter.id) }
            throw error
        }
        return adapters
    }

    func releaseAdapter(id: UInt8) async throws {
        try await removeAdapter(id: id)
    }
}

// MARK: - The real bluetoothd in the QEMU guest

/// The guest of `scripts/bluez-vm` as a test rig: bluetoothd 5.66 on the guest's system bus,
/// forwarded to the host over TCP (`BLUEZ_VM_BUS`), with btvirt's controllers hci0…hciN-1
/// (`BLUEZ_VM_CONTROLLERS`) and a root shell for `bt-stack` (`BLUEZ_VM_SHELL`).
///
/// The controllers are a fixed pool: ``addFreshAdapters(_:)`` lends some (waiting until that
/// many are free) and ``releaseAdapter(id:)`` cleans it (every device removed) before the
/// next test gets it. ``exclusive()`` lends the whole guest to one test.
final class GuestRig: BlueZTestRig {
    let busAddress: String
    private let shellAddress: String?
    private let addresses: [UInt8: String]
    private let pool: ControllerPool
    private let bus: DBusConnection
    /// Set on the view ``exclusive()`` returns: its leases bypass the gate it holds.
    private let holdsGuest: Bool
    /// The view's controllers not given back yet (``stop()`` gives them back).
    private let outstanding = Locked<Set<UInt8>>([])

    private init(busAddress: String, shellAddress: String?, addresses: [UInt8: String], pool: ControllerPool,
                 bus: DBusConnection, holdsGuest: Bool) {
        self.busAddress = busAddress
        self.shellAddress = shellAddress
        self.addresses = addresses
        self.pool = pool
        self.bus = bus
        self.holdsGuest = holdsGuest
    }

    /// The guest named by the environment, started by the first test that awaits it.
    static let shared: Task<GuestRig, any Error> = Task {
        let environment = ProcessInfo.processInfo.environment
        guard let busAddress = environment["BLUEZ_VM_BUS"] else {
            throw BlueZTestError("TETHER_BLUEZ_RIG=guest needs BLUEZ_VM_BUS: run the tests inside scripts/bluez-vm/run --net PORT --host '…' (./scripts/test does)")
        }
        let bus = try await DBusConnection.connect(to: DBusAddress(parsing: busAddress))
        let addresses = try await adapterAddresses(on: bus)
        let expected = Int(environment["BLUEZ_VM_CONTROLLERS"] ?? "") ?? addresses.count
        guard addresses.count == expected, expected >= 2 else {
            throw BlueZTestError("the guest's bluetoothd has adapters \(addresses.keys.sorted()), expected \(expected) (at least 2)")
        }
        return GuestRig(busAddress: busAddress, shellAddress: environment["BLUEZ_VM_SHELL"], addresses: addresses,
                        pool: ControllerPool(ids: addresses.keys.sorted()), bus: bus, holdsGuest: false)
    }

    /// Every adapter bluetoothd has, by index (`hci<index>`), with its address.
    static func adapterAddresses(on bus: DBusConnection) async throws -> [UInt8: String] {
        let mirror = try await BlueZObjectMirror.read(from: bus)
        var addresses: [UInt8: String] = [:]
        for path in mirror.paths(with: BlueZ.adapterInterface) {
            guard let id = BlueZMapping.adapterIndex(path.lastElement),
                  let address = mirror.properties(path, BlueZ.adapterInterface)?["Address"]?.string else { continue }
            addresses[id] = address
        }
        return addresses
    }

    /// How many controllers the guest has.
    var controllerCount: Int { addresses.count }

    /// This guest for the calling test alone: waits until every lent controller is back, and
    /// lends none to other tests until ``stop()``.
    func exclusive() async throws -> GuestRig {
        try await pool.takeGuest()
        return GuestRig(busAddress: busAddress, shellAddress: shellAddress, addresses: addresses, pool: pool,
                        bus: bus, holdsGuest: true)
    }

    func addFreshAdapter() async throws -> (id: UInt8, address: String) {
        try await addFreshAdapters(1)[0]
    }

    func addFreshAdapters(_ count: Int) async throws -> [(id: UInt8, address: String)] {
        guard count <= addresses.count else {
            throw BlueZTestError("\(count) adapters asked for; the guest has \(addresses.count)")
        }
        let ids = try await pool.lend(count, holdingGuest: holdsGuest)
        outstanding.withLock { $0.formUnion(ids) }
        return ids.map { ($0, addresses[$0]!) }
    }

    func releaseAdapter(id: UInt8) async throws {
        _ = outstanding.withLock { $0.remove(id) }
        do {
            try await clean(adapter: id)
        } catch {
            await pool.giveBack(id)
            throw error
        }
        await pool.giveBack(id)
    }

    /// Forgets every device of the adapter (bonds, GATT caches; a connected one is
    /// disconnected first). No power cycle: bluetoothd 5.66 on btvirt's controllers was seen
    /// to leave later `RegisterAdvertisement` calls unanswered after many of them.
    private func clean(adapter id: UInt8) async throws {
        let adapter = DBusObjectPath("/org/bluez/hci\(id)")!
        let mirror = try await BlueZObjectMirror.read(from: bus)
        for device in mirror.paths(with: BlueZ.deviceInterface) where device.parent == adapter {
            _ = try? await bus.call(.methodCall(destination: BlueZ.service, path: adapter, interface: BlueZ.adapterInterface,
                                                member: "RemoveDevice", body: [.objectPath(device)]))
        }
        // A test that failed while its adapter was off must not hand the next one a dead adapter.
        try await setPowered(true, adapter: id)
    }

    func setPowered(_ on: Bool, adapter id: UInt8) async throws {
        let adapter = DBusObjectPath("/org/bluez/hci\(id)")!
        let message = DBusMessage.methodCall(
            destination: BlueZ.service, path: adapter, interface: "org.freedesktop.DBus.Properties", member: "Set",
            body: [.string(BlueZ.adapterInterface), .string("Powered"), .variant(.boolean(on))])
        // bluetoothd answers "Busy" while an earlier mode change of the adapter is still under
        // way (seen once in a full pass): it is asked again, for up to 5 s.
        var attempts = 0
        while true {
            attempts += 1
            let failure: DBusError
            do {
                _ = try await bus.call(message, timeout: .seconds(15))
                return
            } catch {
                failure = error
            }
            let busy = failure.name == "org.bluez.Error.Busy" || (failure.name == "org.bluez.Error.Failed" && failure.message == "Busy")
            guard busy, attempts < 50 else { throw failure }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    func stopBluez() async throws {
        guard holdsGuest else { throw BlueZTestError("stopping bluetoothd needs the guest to itself (BlueZRigs.makePrivate())") }
        _ = try await shell("bt-stack stop-daemon")
    }

    func startBluez() async throws {
        guard holdsGuest else { throw BlueZTestError("starting bluetoothd needs the guest to itself (BlueZRigs.makePrivate())") }
        _ = try await shell("bt-stack start-daemon")
    }

    /// Restarts the whole stack with `controllers` controllers (forgetting every bond and cache);
    /// returns `bt-stack`'s report. Needs the guest to itself; the adapter set must stay the same
    /// size for the shared rig's pool, so other sizes are for a test's own use and it restores
    /// the original count before it ends.
    @discardableResult
    func resetStack(controllers: Int? = nil) async throws -> String {
        guard holdsGuest else { throw BlueZTestError("resetting the stack needs the guest to itself (BlueZRigs.makePrivate())") }
        return try await shell("bt-stack reset \(controllers.map(String.init) ?? "")")
    }

    /// Gives the guest back to the other tests (after this rig's own leases are back), with
    /// bluetoothd running (a failed test may have left it stopped).
    func stop() {
        guard holdsGuest else { return }
        Task { [self] in
            _ = try? await shell("bt-stack start-daemon")
            let left = outstanding.withLock { ids in defer { ids.removeAll() }; return ids.sorted() }
            for id in left { try? await releaseAdapter(id: id) }
            await pool.returnGuest()
        }
    }

    /// Runs `command` in the guest's root shell; returns its output, throws if it exits non-zero.
    func shell(_ command: String, within seconds: Double = 60) async throws -> String {
        guard let shellAddress, let colon = shellAddress.lastIndex(of: ":") else {
            throw BlueZTestError("no guest shell: run the guest with --shell-port (BLUEZ_VM_SHELL is unset)")
        }
        let host = shellAddress[..<colon], port = shellAddress[shellAddress.index(after: colon)...]
        let marker = "__bt_rc="
        // bash's /dev/tcp: one connection per command; the guest's shell exits after it
        let script = "exec 3<>/dev/tcp/\(host)/\(port) || exit 97; printf '%s\\n' \"$1\" >&3; exec cat <&3"
        let output = try await runProcess("/bin/bash", ["-c", script, "guest-shell", "\(command); echo \(marker)$?; exit"],
                                          within: seconds, what: "guest shell: \(command)")
        guard let range = output.range(of: marker, options: .backwards) else {
            throw BlueZTestError("guest shell: no status from `\(command)`; output: \(output.suffix(2000))")
        }
        let status = output[range.upperBound...].trimmingCharacters(in: .whitespacesAndNewlines)
        let text = String(output[..<range.lowerBound])
        guard status == "0" else {
            throw BlueZTestError("guest shell: `\(command)` exited \(status): \(text.suffix(2000))")
        }
        return text
    }
}

/// Runs `executable` with `arguments`; returns its output (stdout and stderr, interleaved).
/// Fails if it has not ended within `seconds` (it is killed then).
func runProcess(_ executable: String, _ arguments: [String], within seconds: Double, what: String) async throws -> String {
    let seconds = Patience.seconds(seconds)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    process.standardInput = FileHandle.nullDevice
    let output = Locked(Data())
    pipe.fileHandleForReading.readabilityHandler = { handle in
        let chunk = handle.availableData
        if chunk.isEmpty { handle.readabilityHandler = nil } else { output.withLock { $0.append(chunk) } }
    }
    let text: @Sendable () -> String = { String(decoding: output.withLock { $0 }, as: UTF8.self) }
    let ended = LockedFlag()
    return try await withCheckedThrowingContinuation { continuation in
        process.terminationHandler = { _ in
            // what is still in the pipe arrives before the status is reported
            pipe.fileHandleForReading.readabilityHandler = nil
            let rest = pipe.fileHandleForReading.readDataToEndOfFile()
            output.withLock { $0.append(rest) }
            guard ended.claim() else { return }
            continuation.resume(returning: text())
        }
        do {
            try process.run()
        } catch {
            guard ended.claim() else { return }
            continuation.resume(throwing: BlueZTestError("\(what): could not start \(executable): \(error)"))
            return
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            guard ended.claim() else { return }
            process.terminate()
            continuation.resume(throwing: BlueZTestError("\(what): not done within \(seconds) s; output: \(text().suffix(2000))"))
        }
    }
}

/// A value shared between threads, changed only under its lock.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) -> T) -> T { lock.withLock { body(&value) } }
}

/// Lends the guest's controllers: one test per controller at a time, or the whole guest to one
/// test. Waiters are served strictly in order (what they wait for is handed to them, so no
/// later caller overtakes them), and every wait is bounded and ends when its task is cancelled:
/// a test that leaked controllers makes the others fail with a message, not hang.
actor ControllerPool {
    private var free: [UInt8]
    private var lent = 0
    private var guestTaken = false
    private enum Want { case controllers(Int), wholeGuest }
    private struct Waiter {
        let id: Int
        let want: Want
        let continuation: CheckedContinuation<[UInt8]?, Never>
    }
    private var queue: [Waiter] = []
    private var nextWaiterID = 0
    /// How long a test may wait for controllers (the longest test holds them for minutes).
    private static let patience: Duration = .seconds(600)

    init(ids: [UInt8]) { free = ids }

    /// `count` free controllers, all at once. The holder of the whole guest gets them at once
    /// or fails (nobody else can give any back); other tests wait their turn.
    func lend(_ count: Int, holdingGuest: Bool) async throws -> [UInt8] {
        if holdingGuest {
            guard free.count >= count else {
                throw BlueZTestError("\(count) controllers asked for; \(free.count) are free and the test holding the guest has the rest")
            }
            return take(count)
        }
        if queue.isEmpty, !guestTaken, free.count >= count { return take(count) }
        return try await wait(for: .controllers(count), what: "\(count) controllers")
    }

    func giveBack(_ id: UInt8) {
        lent -= 1
        // Last in line: the next test gets the controller that rested longest.
        free.append(id)
        serveQueue()
    }

    /// Waits until nothing is lent and nobody has the guest, then takes it.
    func takeGuest() async throws {
        if queue.isEmpty, !guestTaken, lent == 0 {
            guestTaken = true
            return
        }
        _ = try await wait(for: .wholeGuest, what: "the whole guest")
    }

    func returnGuest() {
        guestTaken = false
        serveQueue()
    }

    private func take(_ count: Int) -> [UInt8] {
        lent += count
        let ids = Array(free.prefix(count))
        free.removeFirst(count)
        return ids
    }

    /// Queues for `want`; the continuation is resumed with what was handed over, or nil when
    /// the wait timed out or its task was cancelled (then it has left the queue).
    private func wait(for want: Want, what: String) async throws -> [UInt8] {
        nextWaiterID += 1
        let id = nextWaiterID
        let handed: [UInt8]? = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                queue.append(Waiter(id: id, want: want, continuation: continuation))
                Task { [weak self] in
                    try? await Task.sleep(for: Self.patience)
                    await self?.giveUp(id)
                }
            }
        } onCancel: {
            Task { [weak self] in await self?.giveUp(id) }
        }
        guard let handed else {
            throw BlueZTestError("waited \(Self.patience) for \(what) (\(lent) controllers lent, guest \(guestTaken ? "taken" : "free")): did a test not give them back?")
        }
        return handed
    }

    private func giveUp(_ id: Int) {
        guard let index = queue.firstIndex(where: { $0.id == id }) else { return }
        queue.remove(at: index).continuation.resume(returning: nil)
        serveQueue()
    }

    /// Hands the first waiters what they wait for, in order, while it is there.
    private func serveQueue() {
        while let first = queue.first {
            switch first.want {
            case .wholeGuest:
                guard !guestTaken, lent == 0 else { return }
                guestTaken = true
                queue.removeFirst().continuation.resume(returning: [])
            case .controllers(let count):
                guard !guestTaken, free.count >= count else { return }
                let ids = take(count)
                queue.removeFirst().continuation.resume(returning: ids)
            }
        }
    }
}
#endif
