#if os(Linux)
import Foundation
import TetherTesting
import TetherCore
import TetherSimulator

// Helpers for the device flows over BlueZ (GripFit, Kiro, FlockFinder): everything runs in real
// time, so every wait is on an event and bounded; nothing sleeps to synchronise.
//
// Every pair lives on the shared bluezoo rig, where a scan sees the emulators of every test
// running in parallel (the same device type included). A flow therefore picks *its* peripheral
// (`pair.remoteID`) from the scan results, as a user picks their device from a list; a flow
// that must take the first match (an auto-connect) uses a rig of its own.

/// Runs `body` on the simulation actor (where the emulators live) and returns its result.
func onSimulationActor<T: Sendable>(_ body: @SimulationActor @Sendable () -> T) async -> T {
    await body()
}

/// Runs `body` with a value made by `make`, then `close`s it whether `body` succeeded or not.
func withFlow<Flow>(
    _ make: () async throws -> Flow,
    close: (Flow) async -> Void,
    _ body: (Flow) async throws -> Void
) async throws {
    let flow = try await make()
    do {
        try await body(flow)
    } catch {
        await close(flow)
        throw error
    }
    await close(flow)
}

/// Runs a setup step of a flow; a failure names the step and carries the central driver's
/// status (state, reason, adapter), which says whether BlueZ or the flow went wrong.
func flowStep<T>(_ what: String, on pair: BlueZPair, _ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch {
        let status = await pair.driver.status()
        throw BlueZTestError("\(what) failed: \(error) (central: \(status))")
    }
}

/// Scans with `filter` (the device client's own) until the pair's peripheral is reported;
/// returns its discovery. Other tests' peripherals that match are passed over.
func discoverOwnPeripheral(of pair: BlueZPair, on central: Central, filter: ScanFilter, within seconds: Double = 10) async throws -> DiscoveredPeripheral {
    let id = pair.remoteID
    let stream = try await central.scan(filter: filter, timeout: .milliseconds(Int(Patience.seconds(seconds) * 1000)))
    for await peripheral in stream where peripheral.id == id { return peripheral }
    throw BlueZTestError("the scan with \(filter) did not report \(id) within \(seconds) s")
}

/// Everything an `AsyncStream` yields from the moment the log is made, kept so that a test can
/// wait (bounded, in real time) until what arrived satisfies a condition.
final class FlowStreamLog<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var elements: [Element] = []
    private var finished = false
    private var waiters: [Int: (condition: @Sendable ([Element]) -> Bool, continuation: CheckedContinuation<[Element]?, Never>)] = [:]
    private var nextID = 0
    private var task: Task<Void, Never>?

    /// Starts consuming `stream` (subscribe before the action whose results you want).
    init(_ stream: AsyncStream<Element>) {
        task = Task { [weak self] in
            for await element in stream { self?.append(element) }
            self?.finish()
        }
    }

    deinit { task?.cancel() }

    /// Stops consuming the stream.
    func cancel() { task?.cancel() }

    /// What arrived so far, in order.
    var all: [Element] { lock.withLock { elements } }

    /// How many elements arrived so far.
    var count: Int { lock.withLock { elements.count } }

    private func append(_ element: Element) {
        let (ready, snapshot): ([CheckedContinuation<[Element]?, Never>], [Element]) = lock.withLock {
            elements.append(element)
            return (takeSatisfiedWaiters(), elements)
        }
        for continuation in ready { continuation.resume(returning: snapshot) }
    }

    private func finish() {
        let all: [CheckedContinuation<[Element]?, Never>] = lock.withLock {
            finished = true
            defer { waiters.removeAll() }
            return waiters.values.map(\.continuation)
        }
        for continuation in all { continuation.resume(returning: nil) }
    }

    /// With `lock` held: removes and returns the waiters whose condition now holds.
    private func takeSatisfiedWaiters() -> [CheckedContinuation<[Element]?, Never>] {
        let satisfied = waiters.filter { $0.value.condition(elements) }
        for id in satisfied.keys { waiters[id] = nil }
        return satisfied.values.map(\.continuation)
    }

    /// Waits until everything that arrived satisfies `condition`; returns it. Fails after
    /// `seconds` (or when the stream ends first), listing the last elements seen.
    @discardableResult
    func wait(_ what: String, within seconds: Double = BlueZRigs.patience, until condition: @escaping @Sendable ([Element]) -> Bool) async throws -> [Element] {
        let seconds = Patience.seconds(seconds)
        var id = 0
        let result: [Element]? = await withCheckedContinuation { continuation in
            let immediate: [Element]?? = lock.withLock {
                if condition(elements) { return .some(elements) }
                if finished { return .some(nil) }
                nextID += 1
                id = nextID
                waiters[id] = (condition, continuation)
                return nil
            }
            if let immediate { return continuation.resume(returning: immediate) }
            let waiterID = id
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [weak self] in
                guard let self else { return }
                let expired = self.lock.withLock { self.waiters.removeValue(forKey: waiterID)?.continuation }
                expired?.resume(returning: nil)
            }
        }
        guard let result else {
            let seen = all
            let ended = lock.withLock { finished }
            throw BlueZTestError("\(what): not within \(seconds) s\(ended ? " (the stream ended)" : ""); \(seen.count) element(s) arrived, the last: \(seen.suffix(8))")
        }
        return result
    }

    /// Waits for the first element from index `start` on that matches `predicate`; returns it.
    @discardableResult
    func next(_ what: String, after start: Int = 0, within seconds: Double = BlueZRigs.patience,
              where predicate: @escaping @Sendable (Element) -> Bool) async throws -> Element {
        let seen = try await wait(what, within: seconds) { $0.dropFirst(start).contains(where: predicate) }
        return seen.dropFirst(start).first(where: predicate)!
    }
}
#endif
