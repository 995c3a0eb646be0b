import Foundation

/// Runs `operation` and returns its result, or nil once `seconds` have passed — without
/// waiting for the operation to end (unlike `within`, whose task group waits for its children:
/// calls that ignore cancellation, such as connecting to a bus, would hold it up).
/// The operation keeps running in the background when the deadline wins.
func resultWithin<T: Sendable>(_ seconds: Double, _ operation: @escaping @Sendable () async -> T) async -> T? {
    let race = DeadlineRace<T>()
    return await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
        race.arm(continuation)
        Task { race.finish(await operation()) }
        Task {
            try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            race.finish(nil)
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

    func finish(_ value: T?) {
        let waiter = lock.withLock { () -> CheckedContinuation<T?, Never>? in
            defer { continuation = nil }
            return continuation
        }
        waiter?.resume(returning: value)
    }
}
