/// Elapsed time on an injected clock, as plain `Duration`s since the timeline began.
///
/// Opening the clock once here lets simulation code keep timestamps and deadlines without
/// being generic over the clock's instant type.
public struct Timeline: Sendable {
    private let elapsed: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration) async throws -> Void

    /// Starts a timeline at the clock's current instant.
    public init<C: Clock>(clock: C) where C.Duration == Duration {
        let start = clock.now
        elapsed = { start.duration(to: clock.now) }
        sleeper = { offset in try await clock.sleep(until: start.advanced(by: offset), tolerance: nil) }
    }

    /// Starts a timeline on an existential clock.
    public init(_ clock: any Clock<Duration>) {
        self.init(clock: clock)
    }

    /// Time since the timeline began.
    public var now: Duration { elapsed() }

    /// Suspends until `offset` since the timeline began (returns at once if it has passed).
    public func sleep(until offset: Duration) async throws {
        try await sleeper(offset)
    }

    /// Suspends for `duration`.
    public func sleep(for duration: Duration) async throws {
        try await sleeper(now + duration)
    }
}
