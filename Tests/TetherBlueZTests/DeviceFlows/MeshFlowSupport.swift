#if os(Linux)
import Foundation
import MeshCore
import TetherBlueZ
import TetherBlueZPeripheral
import TetherCore
import TetherSimulator
import TetherTesting
import Testing
import MeshCoreEmulator
import MeshCoreStorage

// Support for the device flows over the BlueZ pair (MeshCore here; the Tybe flows use the
// recorder and the name helper too). Everything runs in real time: waits are bounded by
// `within` and end on an event, never on a sleep.

/// Every element of a stream, kept, with bounded waits for the first element (from a position
/// on) that matches a predicate.
final class MeshFlowRecorder<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Element] = []
    private var waiters: [Int: Waiter] = [:]
    private var nextID = 0
    private var task: Task<Void, Never>?

    private struct Waiter {
        let from: Int
        /// Matches still to come before the waiter is resumed.
        var remaining: Int
        let predicate: @Sendable (Element) -> Bool
        let continuation: CheckedContinuation<(Int, Element)?, Never>
    }

    init(_ stream: AsyncStream<Element>) {
        task = Task { [weak self] in
            for await item in stream { self?.record(item) }
        }
    }

    deinit { task?.cancel() }

    /// Everything recorded so far, oldest first.
    var all: [Element] { lock.withLock { items } }

    /// How many elements were recorded so far (a position for ``next(_:from:within:where:)``).
    var count: Int { lock.withLock { items.count } }

    private func record(_ item: Element) {
        let resumed: [(CheckedContinuation<(Int, Element)?, Never>, Int)] = lock.withLock {
            items.append(item)
            let index = items.count - 1
            var done: [(CheckedContinuation<(Int, Element)?, Never>, Int)] = []
            for (id, var waiter) in waiters where index >= waiter.from && waiter.predicate(item) {
                waiter.remaining -= 1
                if waiter.remaining == 0 {
                    waiters.removeValue(forKey: id)
                    done.append((waiter.continuation, index))
                } else {
                    waiters[id] = waiter
                }
            }
            return done
        }
        for (continuation, index) in resumed { continuation.resume(returning: (index, item)) }
    }

    /// The first (or `nth`, counting from 1) element at position `from` or later that matches
    /// `predicate`, waiting at most `seconds` for it. The predicate runs under the recorder's
    /// lock: it must not use the recorder.
    @discardableResult
    func next(_ what: String, from: Int = 0, nth: Int = 1, within seconds: Double = 15,
              where predicate: @escaping @Sendable (Element) -> Bool) async throws -> Element {
        try await nextIndexed(what, from: from, nth: nth, within: seconds, where: predicate).element
    }

    /// Like ``next(_:from:nth:within:where:)``, with the element's position.
    func nextIndexed(_ what: String, from: Int = 0, nth: Int = 1, within seconds: Double = 15,
                     where predicate: @escaping @Sendable (Element) -> Bool) async throws -> (index: Int, element: Element) {
        let found: (Int, Element)?
        do {
            found = try await within(seconds, "no \(what) within \(seconds) s") { [self] in
                await wait(from: from, nth: max(1, nth), predicate)
            }
        } catch let error as BlueZTestError {
            throw BlueZTestError("\(error.description); recorded (last 16): \(describeTail())")
        }
        guard let found else { throw BlueZTestError("no \(what): the wait was cancelled") }
        return found
    }

    private func wait(from: Int, nth: Int, _ predicate: @escaping @Sendable (Element) -> Bool) async -> (Int, Element)? {
        let id = lock.withLock { () -> Int in
            nextID += 1
            return nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<(Int, Element)?, Never>) in
                // (found, whether to resume now): a cancellation before the waiter is registered
                // finds nothing to resume in `onCancel`, so it is checked under the lock.
                let (existing, resumeNow): ((Int, Element)?, Bool) = lock.withLock {
                    let matches = items.indices.dropFirst(from).filter { predicate(items[$0]) }
                    if matches.count >= nth {
                        let index = matches[nth - 1]
                        return ((index, items[index]), true)
                    }
                    if Task.isCancelled { return (nil, true) }
                    waiters[id] = Waiter(from: from, remaining: nth - matches.count, predicate: predicate, continuation: continuation)
                    return (nil, false)
                }
                if resumeNow { continuation.resume(returning: existing) }
            }
        } onCancel: {
            let waiter = lock.withLock { waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(returning: nil)
        }
    }

    private func describeTail() -> String {
        let tail = lock.withLock { items.suffix(16) }
        return tail.isEmpty ? "nothing" : tail.map { "\($0)" }.joined(separator: "; ")
    }
}

/// Checks `condition` every 10 ms until it holds, for state that has no event of its own (what
/// an emulated host has typed); fails after `seconds`. A bounded wait on a condition, not a
/// timing assumption.
func meshFlowEventually(_ what: String, within seconds: Double = 10,
                        _ condition: @escaping @Sendable () async -> Bool) async throws {
    try await within(seconds, "\(what) did not happen within \(seconds) s") {
        while !(await condition()) {
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

/// A rig of the calling test's own (``BlueZRigs/makePrivate()``: bluezoo on a bus of its own, or the guest to itself).
///
/// Not ``BluezooRig/shared``: there, every central adapter of every test discovers every
/// advertising adapter, and when a test removes its central adapter, `BlueZDriver` takes the
/// removal of *that* adapter's device object for the peripheral as the loss of its own link to
/// the same address (it maps a device path to a peripheral by address and its own adapter index,
/// whatever adapter the path is under), so tests sharing the rig drop each other's links. See
/// the report of the device-flow suites.
func meshFlowPrivateRig() async throws -> any BlueZTestRig {
    try await BlueZRigs.makePrivate()
}

/// A name no other test advertises (the Tybe client discovers its bridge by name; on a shared
/// rig every central adapter sees every advertising adapter).
func meshFlowUniqueName(_ prefix: String) -> String {
    "\(prefix)\(MeshFlowNames.next())"
}

private enum MeshFlowNames {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var serial = 0
    private static let run = String(UInt16.random(in: 0...UInt16.max), radix: 16, uppercase: true)

    static func next() -> String {
        lock.withLock {
            serial += 1
            return "\(run)-\(serial)"
        }
    }
}

/// The whole MeshCore client stack — BLE transport on a `Central` over ``BlueZDriver``, the
/// session, the connection manager and an in-memory store — against a ``MeshCoreEmulator``
/// hosted by ``BlueZPeripheralHost``: one companion radio ("Tether Base") of the demo mesh
/// (Alice, Bob, Echo and a repeater as scripted nodes, no chatter), all in real time.
struct MeshFlowWorld: Sendable {
    /// The mesh's start (2026-01-01), which the app's wall clock stays at.
    static let epoch: UInt32 = 1_767_225_600

    let pair: BlueZPair
    let network: MeshNetwork
    let emulator: MeshCoreEmulator
    let radio: CompanionRadio
    /// The name the radio advertises (unique on the rig).
    let advertisedName: String
    let central: Central
    let transport: BLETransport
    let session: MeshCoreSession
    let manager: ConnectionManager
    let store: MeshStore
    /// The manager's events (the first is its state when subscribed).
    let events: MeshFlowRecorder<ConnectionManager.Event>
    /// What happens in the mesh (messages, acks, queueing, the app attaching and leaving).
    let traffic: MeshFlowRecorder<MeshTrafficEvent>
    /// What the central did, as the peripheral host saw it on the D-Bus side.
    let activity: MeshFlowRecorder<BlueZPeripheralActivity>

    /// Builds the mesh, hosts its radio on a fresh pair of bluezoo adapters, discovers it from
    /// the central and wires the client stack (nothing is connected yet). `prepare` runs on the
    /// mesh before the radio is published.
    static func make(prepare: @escaping @SimulationActor @Sendable (MeshNetwork) -> Void = { _ in }) async throws -> MeshFlowWorld {
        let name = meshFlowUniqueName("MeshCore-Flow-")
        let (trafficStream, trafficContinuation) = AsyncStream.makeStream(of: MeshTrafficEvent.self)
        let traffic = MeshFlowRecorder(trafficStream)
        let (network, emulator, radio) = await { @SimulationActor in
            let network = MeshNetwork.demo(clock: ContinuousClock(), startEpoch: MeshFlowWorld.epoch, chatter: false)
            // Real time: short hops keep each flow to seconds (Echo's round trip is 4 hops).
            network.hopLatency = .milliseconds(20)
            network.observer = { _, event in trafficContinuation.yield(event) }
            prepare(network)
            let emulator = MeshCoreEmulator(radio: network.radios[0], name: name)
            return (network, emulator, emulator.radio)
        }()
        let id = PeripheralID(UUID())
        let rig = try await meshFlowPrivateRig()
        let pair: BlueZPair
        do {
            pair = try await BlueZPair.make(rig: rig, recordingEvents: false) { air in
                air.add(emulator.makePeripheral(id: id, distance: 1.0))
                return id
            }
        } catch {
            rig.stop()
            await { @SimulationActor in network.shutdown() }()
            throw error
        }
        let activity = MeshFlowRecorder(pair.host.activity)
        do {
            let central = await pair.makeCentral()
            // BlueZ connects only to devices it has seen: scan for this radio first.
            let found = try await central.discover(filter: ScanFilter(name: .exact(name)), timeout: Patience.duration(.seconds(15)))
            guard found.id == pair.remoteID else {
                throw BlueZTestError("discovered \(found.id) named \(name), expected the hosted radio \(pair.remoteID)")
            }
            let transport = await BLETransport(central: central, peripheral: pair.remoteID)
            let now = Date(timeIntervalSince1970: TimeInterval(epoch))
            let session = MeshCoreSession(transport: transport,
                                          configuration: .init(commandTimeout: Patience.duration(.seconds(5))),
                                          clock: ContinuousClock(), wallClock: { now })
            let store = try MeshStore.inMemory()
            let manager = ConnectionManager(session: session, store: store, clock: ContinuousClock(), wallClock: { now })
            let events = MeshFlowRecorder(await manager.events())
            return MeshFlowWorld(
                pair: pair, network: network, emulator: emulator, radio: radio, advertisedName: name,
                central: central, transport: transport, session: session, manager: manager, store: store,
                events: events, traffic: traffic, activity: activity)
        } catch {
            await pair.close()
            rig.stop()
            await { @SimulationActor in network.shutdown() }()
            throw error
        }
    }

    /// Builds a world, runs `body` and tears everything down, whatever `body` does.
    static func run(prepare: @escaping @SimulationActor @Sendable (MeshNetwork) -> Void = { _ in },
                    _ body: (MeshFlowWorld) async throws -> Void) async throws {
        let world = try await make(prepare: prepare)
        do {
            try await body(world)
        } catch {
            await world.close()
            throw error
        }
        await world.close()
    }

    /// Disconnects the app, stops the host, the central and the rig, ends the mesh's scripts.
    func close() async {
        await manager.disconnect()
        await pair.close()
        pair.rig.stop()
        let network = self.network
        await { @SimulationActor in
            network.observer = nil
            network.shutdown()
        }()
    }

    // MARK: Steps

    /// `manager.connect()`, bounded.
    func connect(within seconds: Double = 30) async throws {
        let manager = self.manager
        try await within(seconds, "the startup did not reach ready") { try await manager.connect() }
    }

    /// Runs `body` on the mesh's actor.
    func mesh<T: Sendable>(_ body: @escaping @SimulationActor (MeshNetwork) -> T) async -> T {
        let network = self.network
        return await { @SimulationActor in body(network) }()
    }

    /// Runs `body` on the companion radio's actor.
    func onRadio<T: Sendable>(_ body: @escaping @SimulationActor (CompanionRadio) -> T) async -> T {
        let radio = self.radio
        return await { @SimulationActor in body(radio) }()
    }

    /// The next stored message with `text` (an `.message` event of the manager), from position
    /// `from` of ``events`` on.
    @discardableResult
    func message(_ text: String, from: Int = 0, within seconds: Double = 15) async throws -> MeshMessage {
        let event = try await events.next("message \"\(text)\"", from: from, within: seconds) {
            if case .message(let message) = $0 { message.text == text } else { false }
        }
        guard case .message(let message) = event else { throw BlueZTestError("unreachable") }
        return message
    }

    /// The position of the first `.state(state)` event at `from` or later, waiting for it.
    @discardableResult
    func state(_ state: ConnectionManager.State, from: Int = 0, within seconds: Double = 20) async throws -> Int {
        try await events.nextIndexed("state \(state)", from: from, within: seconds) { $0 == .state(state) }.index
    }

    /// The manager's state changes, in order.
    var states: [ConnectionManager.State] {
        events.all.compactMap { if case .state(let state) = $0 { state } else { nil } }
    }

    /// Texts of the manager's `.message` events, in order.
    var messageTexts: [String] {
        events.all.compactMap { if case .message(let message) = $0 { message.text } else { nil } }
    }
}
#endif
