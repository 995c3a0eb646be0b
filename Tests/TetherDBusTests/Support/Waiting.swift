import Foundation
import Testing
import TetherTesting

@testable import TetherDBus

/// A failure with a message, thrown by test support code so the test fails with it.
struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A value set once (the first `fulfill` wins) and awaited by any number of tasks.
final class OneShot<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Value?
    private var waiters: [CheckedContinuation<Value, Never>] = []

    /// Sets the value; false if it was already set.
    @discardableResult
    func fulfill(_ value: Value) -> Bool {
        let toResume: [CheckedContinuation<Value, Never>]? = lock.withLock {
            guard result == nil else { return nil }
            result = value
            defer { waiters.removeAll() }
            return waiters
        }
        guard let toResume else { return false }
        for waiter in toResume { waiter.resume(returning: value) }
        return true
    }

    /// The value, without waiting.
    var current: Value? { lock.withLock { result } }

    /// Waits for the value (unbounded: wrap in ``withTimeout(_:seconds:_:)``).
    var value: Value {
        get async {
            await withCheckedContinuation { continuation in
                let ready: Value? = lock.withLock {
                    if let result { return result }
                    waiters.append(continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}

/// Values appended from any thread, awaited by count.
final class Collector<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Element] = []
    private var waiters: [(count: Int, continuation: CheckedContinuation<[Element], Never>)] = []

    func append(_ item: Element) {
        let ready: [(CheckedContinuation<[Element], Never>, [Element])] = lock.withLock {
            storage.append(item)
            let due = waiters.filter { $0.count <= storage.count }
            waiters.removeAll { $0.count <= storage.count }
            return due.map { ($0.continuation, storage) }
        }
        for (continuation, snapshot) in ready { continuation.resume(returning: snapshot) }
    }

    /// Everything collected so far.
    var items: [Element] { lock.withLock { storage } }

    /// Waits until at least `count` items arrived and returns them all (unbounded: wrap in
    /// ``withTimeout(_:seconds:_:)``).
    func first(_ count: Int) async -> [Element] {
        await withCheckedContinuation { continuation in
            let ready: [Element]? = lock.withLock {
                if storage.count >= count { return storage }
                waiters.append((count, continuation))
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

/// A lock-protected value.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    @discardableResult
    func withLock<T>(_ body: (inout Value) -> T) -> T { lock.withLock { body(&stored) } }
}

/// `operation` did not finish within its bound.
struct TimedOut: Error, CustomStringConvertible {
    let what: String
    let seconds: Double
    var description: String { "timed out after \(seconds) s waiting for \(what)" }
}

/// Runs `operation`, failing with ``TimedOut`` when it has not finished after `seconds`.
///
/// The operation is not awaited past the bound (it is cancelled and left behind), so even an
/// operation that ignores cancellation cannot hang the test.
func withTimeout<T: Sendable>(
    _ what: String, seconds: Double = 20, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let seconds = Patience.seconds(seconds)
    let outcome = OneShot<Result<T, any Error>>()
    let work = Task {
        do { outcome.fulfill(.success(try await operation())) } catch { outcome.fulfill(.failure(error)) }
    }
    let timer = Task {
        try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        outcome.fulfill(.failure(TimedOut(what: what, seconds: seconds)))
    }
    defer {
        work.cancel()
        timer.cancel()
    }
    return try await outcome.value.get()
}

extension Result {
    /// The error of a failure, nil for a success.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension DBusConnection {
    /// Calls and waits (bounded) for the outcome, an error reply included.
    func outcome(
        of message: DBusMessage, timeout: Duration = .seconds(20), within seconds: Double = 30
    ) async throws -> Result<DBusMessage, DBusError> {
        let box = OneShot<Result<DBusMessage, DBusError>>()
        call(message, timeout: timeout) { box.fulfill($0) }
        return try await withTimeout("the reply to \(message.member ?? "?")", seconds: seconds) { await box.value }
    }

    /// Calls and returns the reply; an error reply fails the test.
    func reply(to message: DBusMessage, timeout: Duration = .seconds(20)) async throws -> DBusMessage {
        try await outcome(of: message, timeout: timeout).get()
    }

    /// Calls a method and returns the error it fails with; a success fails the test.
    func error(from message: DBusMessage, timeout: Duration = .seconds(20)) async throws -> DBusError {
        switch try await outcome(of: message, timeout: timeout) {
        case .success(let reply): throw TestFailure("expected an error from \(message.member ?? "?"), got \(reply)")
        case .failure(let error): return error
        }
    }

    /// A call to the bus driver (`org.freedesktop.DBus`).
    func callBus(_ member: String, _ body: [DBusValue] = []) async throws -> DBusMessage {
        try await reply(to: .methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                        interface: "org.freedesktop.DBus", member: member, body: body))
    }

    /// Waits (bounded) until everything already queued on ``queue`` has run.
    func drainQueue() async throws {
        let done = OneShot<Void>()
        queue.async { done.fulfill(()) }
        try await withTimeout("the connection's queue to drain", seconds: 20) { await done.value }
    }

    /// `addMatch`, bounded.
    func addMatchBounded(_ rule: DBusMatchRule) async throws {
        try await withTimeout("AddMatch \(rule)") { try await self.addMatch(rule) }
    }

    /// Waits (bounded) for the connection to close and returns why.
    func closeReasonBounded(seconds: Double = 20) async throws -> DBusError {
        let reason = OneShot<DBusError>()
        onDisconnect { reason.fulfill($0) }
        return try await withTimeout("the connection to close", seconds: seconds) { await reason.value }
    }
}
