import Foundation
import TetherSimulator
import TetherStorage

/// Virtual time for a test world: a ``ManualClock`` that moves only when every task is idle.
///
/// Each step waits for the ``TestScheduler`` to run everything that is ready (and for the
/// world's own outside work, such as look-alike callbacks, to land), then moves the clock to the
/// next sleeper's deadline and wakes it. A 40-second timeout therefore takes as many steps as
/// there are timers before it, not 4,000 polls, and no timer fires while a reply that would have
/// beaten it is still waiting to run. (With a ``maximumStep``, as on the CoreBluetooth
/// look-alike, time moves at most that far per step.)
public struct TestTime: Sendable {
    /// Thrown when an operation or a condition is still pending at its limit of virtual time.
    public struct LimitExceeded: Error, CustomStringConvertible {
        /// What was pending.
        public let what: String
        /// The virtual time allowed.
        public let limit: Duration
        /// Whether any timer was still set when the limit came (if not, the operation waits for
        /// something virtual time cannot bring).
        public let timersPending: Bool

        public var description: String {
            "\(what) still pending after \(limit) of virtual time"
                + (timersPending ? "" : " (no timer left: it waits for something that never comes)")
        }
    }

    /// The world's clock: give it to the radio, the central and every client.
    public let clock: ManualClock
    private let outsideWork: @Sendable () async -> Bool
    /// The longest single move of the clock, if time may not jump straight to the next timer.
    public let maximumStep: Duration?

    /// Time on `clock`. `outsideWork` waits for the world's work that runs outside Swift
    /// concurrency and returns whether it had any (it is asked each time the scheduler is idle,
    /// as are the stores' database operations, which GRDB runs on its own queues).
    ///
    /// `maximumStep` bounds each move of the clock: the CoreBluetooth look-alike delivers its
    /// callbacks through dispatch queues, and work they start does not always pass the
    /// scheduler, so on it time moves in 10 ms steps, as it did before the scheduler, rather
    /// than straight to a timer that the pending work would have beaten.
    public init(clock: ManualClock = ManualClock(), maximumStep: Duration? = nil, outsideWork: @escaping @Sendable () async -> Bool = { false }) {
        precondition(maximumStep.map { $0 > .zero } ?? true, "TestTime: a maximum step must be positive")
        self.clock = clock
        self.maximumStep = maximumStep
        self.outsideWork = {
            let database = await DatabaseActivity.waitWhileBusy()
            let other = await outsideWork()
            return database || other
        }
        TestScheduler.shared.activate()
        _ = Self.warnIfStartedLate
    }

    /// Said once: a scheduler started by the first world leaves jobs begun before it on the
    /// global pool, where they can take a shared actor's work with them.
    private static let warnIfStartedLate: Void = {
        guard !TestScheduler.startedAtLaunch else { return }
        FileHandle.standardError.write(Data(
            "TestTime: the test scheduler started with the first world, not at launch; virtual time is exact only with TETHER_TEST_SCHEDULER=1 and the real-time suites in their own process (./scripts/test)\n".utf8))
    }()

    /// Time on `radio`'s clock, waiting for the CoreBluetooth look-alike's callbacks when the
    /// radio's driver is the look-alike.
    public init(clock: ManualClock, radio: VirtualRadio) {
        let lookalike = SimulatorBackedDriver.environmentChoice == .corebluetooth
        self.init(clock: clock, maximumStep: lookalike ? .milliseconds(10) : nil) { await SimulatorBackedDriver.waitWhileBusy(radio) }
    }

    /// Time since the clock was made.
    public var now: Duration { clock.now.offset }

    /// Returns once every task is idle and no outside work is in flight: a whole round (the
    /// scheduler idle, no outside work, then the scheduler idle again with no job run at all)
    /// passes with nothing happening, so work that outside work started has run too.
    ///
    /// The confirming round is tried a few times at most: in a process running other tests at
    /// once (a plain `swift test`), some job nearly always ran meanwhile.
    public func settle() async {
        await TestScheduler.shared.idle()
        var confirmations = 0
        while !Task.isCancelled {
            if await outsideWork() {
                await TestScheduler.shared.idle()
                continue
            }
            guard await TestScheduler.shared.idle(), confirmations < 8 else { return }
            confirmations += 1
        }
    }

    /// Runs `operation` while time moves, and returns its result; throws ``LimitExceeded`` if it
    /// has not finished after `limit` of virtual time (and cancels it).
    public func run<T: Sendable>(limit: Duration = .seconds(600), _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let outcome = Outcome<T>()
        let task = Task {
            let result: Result<T, any Error>
            do { result = .success(try await operation()) } catch { result = .failure(error) }
            outcome.set(result)
        }
        let end = clock.now.advanced(by: limit)
        while true {
            await settle()
            if let result = outcome.result { return try result.get() }
            if Task.isCancelled {
                task.cancel()
                throw CancellationError()
            }
            guard step(notAfter: end) else {
                let pending = clock.nextDeadline != nil
                task.cancel()
                throw LimitExceeded(what: "operation", limit: limit, timersPending: pending)
            }
        }
    }

    /// Lets `duration` of virtual time pass, waking every timer due within it.
    public func advance(_ duration: Duration) async {
        let end = clock.now.advanced(by: duration)
        while true {
            await settle()
            if Task.isCancelled { return }
            guard step(notAfter: end) else { break }
        }
        clock.move(to: end)
        await settle()
    }

    /// Lets virtual time pass until `condition` holds (checked whenever every task is idle);
    /// throws ``LimitExceeded`` naming `what` after `limit`.
    public func until(limit: Duration = .seconds(120), what: String = "condition", _ condition: @escaping @Sendable () async -> Bool) async throws {
        _ = try await first(limit: limit, what: what) { await condition() ? true : nil }
    }

    /// Lets virtual time pass until `probe` returns a value (asked whenever every task is idle),
    /// and returns it; throws ``LimitExceeded`` after `limit`.
    public func first<T: Sendable>(limit: Duration = .seconds(120), what: String = "value", _ probe: @escaping @Sendable () async -> T?) async throws -> T {
        let end = clock.now.advanced(by: limit)
        while true {
            await settle()
            try Task.checkCancellation()
            if let value = try await ask(probe) { return value }
            guard step(notAfter: end) else {
                throw LimitExceeded(what: what, limit: limit, timersPending: clock.nextDeadline != nil)
            }
        }
    }

    /// Moves time once: to the next timer due by `end` (no further than ``maximumStep``); false
    /// when nothing is due by `end` (or, with a maximum step, when the clock is at `end`).
    private func step(notAfter end: ManualClock.Instant) -> Bool {
        guard let maximumStep else { return clock.wakeNext(notAfter: end) }
        let now = clock.now
        guard now < end else { return clock.wakeNext(notAfter: end) }
        return clock.wakeNext(notAfter: min(end, now.advanced(by: maximumStep)), orMoveThere: true)
    }

    /// Thrown when a condition or probe does not answer without virtual time moving (it waits on
    /// a timer itself): such work belongs in ``run(limit:_:)``.
    public struct ProbeWaitsOnTime: Error, CustomStringConvertible {
        public var description: String { "a condition waited on virtual time; run the work with run(limit:_:) and test only state in until" }
    }

    /// Asks `probe` while time stands still; it must answer once every task is idle.
    private func ask<T: Sendable>(_ probe: @escaping @Sendable () async -> T?) async throws -> T? {
        let answer = Outcome<T?>()
        let task = Task { answer.set(.success(await probe())) }
        await settle()
        guard let result = answer.result else {
            task.cancel()
            throw ProbeWaitsOnTime()
        }
        return try result.get()
    }

    /// An operation's result, set once from its task.
    private final class Outcome<T: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Result<T, any Error>?
        var result: Result<T, any Error>? { lock.withLock { value } }
        func set(_ result: Result<T, any Error>) { lock.withLock { value = result } }
    }
}
