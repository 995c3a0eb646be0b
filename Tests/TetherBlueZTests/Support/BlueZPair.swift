#if os(Linux)
import Foundation
import Logging
import TetherBlueZ
import TetherBlueZPeripheral
import TetherCore
import TetherDBus
import TetherSimulator
import TetherTesting
import Testing

/// Fails with `message` if `operation` does not finish within `seconds` (real time: these tests
/// talk to real processes). The operation is cancelled and not awaited past the bound, so a
/// step that ignores cancellation cannot stretch the wait.
func within<T: Sendable>(_ seconds: Double, _ message: @autoclosure () -> String,
                         _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    let seconds = Patience.seconds(seconds)
    let text = message()
    let claimed = LockedFlag()
    return try await withCheckedThrowingContinuation { continuation in
        let task = Task {
            do {
                let value = try await operation()
                if claimed.claim() { continuation.resume(returning: value) }
            } catch {
                if claimed.claim() { continuation.resume(throwing: error) }
            }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            guard claimed.claim() else { return }
            task.cancel()
            continuation.resume(throwing: BlueZTestError("\(text) (nothing after \(seconds) s)"))
        }
    }
}

/// A flag that can be claimed once, from any thread.
final class LockedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var taken = false
    /// True for the first caller only.
    func claim() -> Bool {
        lock.withLock {
            defer { taken = true }
            return !taken
        }
    }
}

struct BlueZTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Every event a driver emits, kept until a test claims it.
final class EventRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [BLEDriverEvent] = []
    private var waiters: [(id: Int, predicate: (BLEDriverEvent) -> Bool, continuation: CheckedContinuation<BLEDriverEvent?, Never>)] = []
    private var nextID = 0
    private var task: Task<Void, Never>?

    init(_ driver: any BLEDriver) {
        task = Task { [weak self] in
            for await event in driver.events { self?.record(event) }
        }
    }

    deinit { task?.cancel() }

    private func record(_ event: BLEDriverEvent) {
        let waiter: CheckedContinuation<BLEDriverEvent?, Never>? = lock.withLock {
            if let index = waiters.firstIndex(where: { $0.predicate(event) }) {
                return waiters.remove(at: index).continuation
            }
            events.append(event)
            return nil
        }
        waiter?.resume(returning: event)
    }

    /// Every event not claimed yet.
    var unclaimed: [BLEDriverEvent] { lock.withLock { events } }

    /// Removes unclaimed events matching `predicate` and returns them.
    func drain(where predicate: (BLEDriverEvent) -> Bool) -> [BLEDriverEvent] {
        lock.withLock {
            let matching = events.filter(predicate)
            events.removeAll(where: predicate)
            return matching
        }
    }

    /// The first unclaimed (or next) event matching `predicate`, claimed; fails after `seconds`.
    func next(_ what: String, within seconds: Double = BlueZRigs.patience, where predicate: @escaping @Sendable (BLEDriverEvent) -> Bool) async throws -> BLEDriverEvent {
        let seconds = Patience.seconds(seconds)
        var id = 0
        let event: BLEDriverEvent? = await withCheckedContinuation { continuation in
            let found: BLEDriverEvent? = lock.withLock {
                if let index = events.firstIndex(where: predicate) { return events.remove(at: index) }
                nextID += 1
                id = nextID
                waiters.append((id, predicate, continuation))
                return nil
            }
            if let found { return continuation.resume(returning: found) }
            let waiterID = id
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [weak self] in
                guard let self else { return }
                let expired = self.lock.withLock { () -> CheckedContinuation<BLEDriverEvent?, Never>? in
                    guard let index = self.waiters.firstIndex(where: { $0.id == waiterID }) else { return nil }
                    return self.waiters.remove(at: index).continuation
                }
                expired?.resume(returning: nil)
            }
        }
        guard let event else {
            throw BlueZTestError("no \(what) within \(seconds) s; unclaimed events: \(unclaimed.suffix(12))")
        }
        return event
    }
}

/// A central (``BlueZDriver``) and a peripheral (``BlueZPeripheralHost`` hosting an emulator)
/// on two fresh adapters of the shared rig (``BlueZRigs``), so tests run in parallel without meeting.
struct BlueZPair: Sendable {
    let rig: any BlueZTestRig
    let central: (id: UInt8, address: String)
    let peripheral: (id: UInt8, address: String)
    let driver: BlueZDriver
    /// The driver's events, claimed by tests; nil when a ``Central`` consumes them instead.
    let events: EventRecorder!
    let host: BlueZPeripheralHost
    let radio: VirtualRadio
    let peripheralID: PeripheralID

    /// The central's ID for the hosted peripheral (derived from the peripheral adapter's address).
    var remoteID: PeripheralID { BlueZMapping.peripheralID(adapterIndex: central.id, address: peripheral.address)! }

    /// Builds the pair. `makePeripheral` adds the emulator to the host's radio (a real clock).
    static func make(
        rig: (any BlueZTestRig)? = nil,
        agent: BlueZPairingAgent? = BlueZPairingAgent(),
        recordingEvents: Bool = true,
        _ makePeripheral: @SimulationActor @Sendable (VirtualRadio) -> PeripheralID
    ) async throws -> BlueZPair {
        let rig: any BlueZTestRig = if let rig { rig } else { try await BlueZRigs.shared() }
        let adapters = try await rig.addFreshAdapters(2)
        let centralAdapter = adapters[0], peripheralAdapter = adapters[1]
        let radio = VirtualRadio(clock: ContinuousClock())
        let id = await makePeripheral(radio)
        let host = BlueZPeripheralHost(radio: radio, peripheral: id, configuration: BlueZPeripheralHostConfiguration(
            adapter: "hci\(peripheralAdapter.id)", busAddress: rig.busAddress, readvertiseInterval: BlueZRigs.readvertiseInterval))
        do {
            try await host.start()
        } catch {
            try? await rig.releaseAdapter(id: centralAdapter.id)
            try? await rig.releaseAdapter(id: peripheralAdapter.id)
            throw error
        }
        let driver = BlueZDriver(configuration: BlueZDriverConfiguration(
            adapter: "hci\(centralAdapter.id)", busAddress: rig.busAddress, agent: agent,
            connectRetryDelay: .milliseconds(100), maximumValueLength: BlueZRigs.maximumValueLength), logger: BlueZRigs.driverLogger)
        let events = recordingEvents ? EventRecorder(driver) : nil
        return BlueZPair(rig: rig, central: centralAdapter, peripheral: peripheralAdapter, driver: driver, events: events,
                         host: host, radio: radio, peripheralID: id)
    }

    /// Makes a pair, runs `body` with it and closes it, whether `body` succeeds or throws (the
    /// shared rig must not collect adapters of finished tests).
    static func with(
        rig: (any BlueZTestRig)? = nil,
        agent: BlueZPairingAgent? = BlueZPairingAgent(),
        recordingEvents: Bool = true,
        peripheral makePeripheral: @SimulationActor @Sendable (VirtualRadio) -> PeripheralID,
        _ body: (BlueZPair) async throws -> Void
    ) async throws {
        let pair = try await make(rig: rig, agent: agent, recordingEvents: recordingEvents, makePeripheral)
        do {
            try await body(pair)
        } catch {
            await pair.close()
            throw error
        }
        await pair.close()
    }

    /// A central on the pair's driver, for device clients (make the pair with
    /// `recordingEvents: false`: the driver's events have one consumer). Real time.
    func makeCentral() async -> Central {
        precondition(events == nil, "make the pair with recordingEvents: false to use a Central")
        let central = Central(driver: driver)
        await central.start()
        // The central's own wait for power (5 s) is sized for a plain build; wait here with the
        // test's patience so a slow (sanitized) run does not fail on it.
        _ = await central.settledState(timeout: Patience.duration(.seconds(5)))
        return central
    }

    /// Stops both sides and gives the adapters back to the rig.
    func close() async {
        await driver.shutdown()
        await host.stop()
        try? await rig.releaseAdapter(id: central.id)
        try? await rig.releaseAdapter(id: peripheral.id)
    }

    /// Waits for the powered-on state.
    func poweredOn() async throws {
        _ = try await events.next("poweredOn") { if case .stateChanged(.poweredOn) = $0 { true } else { false } }
    }

    /// Scans until the hosted peripheral is discovered; returns it.
    func discover(services: [BluetoothUUID]? = nil) async throws -> DiscoveredPeripheral {
        try await poweredOn()
        await driver.scan(services: services, allowDuplicates: false)
        let id = remoteID
        let event = try await events.next("discovery of \(id)") {
            if case .discovered(let found) = $0 { found.id == id } else { false }
        }
        guard case .discovered(let found) = event else { throw BlueZTestError("unreachable") }
        await driver.stopScan()
        return found
    }

    /// Discovers and connects; returns once `connected` arrived.
    func connect() async throws {
        _ = try await discover()
        await driver.connect(remoteID, options: ConnectOptions())
        let id = remoteID
        _ = try await events.next("connected") { if case .connected(id) = $0 { true } else { false } }
    }
}
#endif
