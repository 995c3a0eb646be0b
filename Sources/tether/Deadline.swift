import Foundation

/// Runs `operation` and returns its result, or nil once `seconds` have passed — without
/// waiting for the operation to end (a task group would wait for its children, and calls that
/// ignore cancellation, such as connecting to a bus, would hold it up). When the deadline wins
/// the operation is cancelled and left to finish in the background.
func resultWithin<T: Sendable>(_ seconds: Double, _ operation: @escaping @Sendable () async -> T) async -> T? {
    let race = DeadlineRace<T>()
    return await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
        race.arm(continuation)
        let work = Task { race.finish(await operation()) }
        Task {
            try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            if race.finish(nil) { work.cancel() }
        }
    }
}

/// The first of an operation and its deadline to finish resumes the waiter; the other is
/// ignored.
private final class DeadlineRace<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T?, Never>?

    func arm(_ continuation: CheckedContinuation<T?, Never>) {
        lock.withLock { self.continuation = continuation }
    }

    /// Resumes the waiter with `value` if nothing did before; true when this call did.
    @discardableResult
    func finish(_ value: T?) -> Bool {
        let waiter = lock.withLock { () -> CheckedContinuation<T?, Never>? in
            defer { continuation = nil }
            return continuation
        }
        waiter?.resume(returning: value)
        return waiter != nil
    }
}
