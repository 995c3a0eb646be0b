/// Runs an operation while stepping a manually advanced clock (a test clock) until it finishes.
///
/// The operation's timers fire as the clock passes their deadlines, so a 40-second timeout
/// takes milliseconds of real time. Time moves in `step`s, which bounds how precisely an
/// outcome's virtual time can be observed.
public enum VirtualTime {
    /// Thrown when the operation has not finished after `limit` of virtual time.
    public struct LimitExceeded: Error, CustomStringConvertible {
        /// The virtual time allowed.
        public let limit: Duration
        public var description: String { "operation still running after \(limit) of virtual time" }
    }

    private actor Outcome<T: Sendable> {
        var result: Result<T, any Error>?
        func set(_ value: Result<T, any Error>) { result = value }
    }

    /// Starts `operation`, then calls `advance(step)` until it completes; returns its result.
    public static func run<T: Sendable>(
        step: Duration = .milliseconds(10),
        limit: Duration = .seconds(600),
        advance: @Sendable (Duration) async -> Void,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let outcome = Outcome<T>()
        let task = Task {
            let result: Result<T, any Error>
            do { result = .success(try await operation()) } catch { result = .failure(error) }
            await outcome.set(result)
        }
        var elapsed = Duration.zero
        while true {
            // Let freshly started work reach its first suspension before time moves.
            for _ in 0..<5 { await Task.yield() }
            if let result = await outcome.result { return try result.get() }
            guard elapsed < limit else {
                task.cancel()
                throw LimitExceeded(limit: limit)
            }
            await advance(step)
            elapsed += step
        }
    }
}
