import Foundation
import TetherTestingStartup

/// One serial executor for the test process, which knows when every task is idle.
///
/// Once active, every job Swift concurrency sends to its global executor (task starts,
/// resumptions, default actors' turns) is queued here instead and run one at a time, in order,
/// on the main dispatch queue, where main-actor jobs run too. ``TestTime`` awaits ``idle()``
/// before it moves virtual time: it returns only when no job is queued or running, so time never
/// moves while work that is ready to run has not run (the advance-until-idle rule of
/// kotlinx-coroutines' `runTest`).
///
/// It becomes active with the first ``TestTime`` and stays so, or before the first test when
/// the process starts with `TETHER_TEST_SCHEDULER=1` (the TetherTestingStartup constructor;
/// `scripts/test` sets it). The second is the exact one: a job that started before the
/// scheduler would keep running on the global pool, and a thread that holds a shared actor
/// (the `SimulationActor`) runs every job queued on it, another world's too.
///
/// What it cannot see, and how the suites cope:
/// - Work outside Swift concurrency (dispatch queues, GRDB, NIO, real I/O): ``TestTime`` asks
///   the world's own counters (the look-alike's callbacks, `DatabaseActivity`) each time the
///   scheduler is idle.
/// - Jobs the runtime starts itself: a real clock's sleep ends on the global pool, as does the
///   small job of a `Task.yield()` right after an actor hop, and work that follows such a job
///   can run there too. Worlds never poll with `Task.yield()`, suites on real time run in a
///   process of their own, and `scripts/test` runs one test at a time in this one
///   (`--no-parallel`: with another test's wake-ups in the process, 1 run in 4 of MeshCore's
///   manager suite saw a world's work finish off the scheduler).
/// - Main-actor jobs reach the main queue without passing here, so ``idle()`` lets the main
///   queue run a few times before it believes the process is idle.
///
/// Nothing here blocks, so nothing deadlocks unless a job blocks its thread waiting for another
/// job (which would deadlock any serial executor).
public final class TestScheduler: SerialExecutor, @unchecked Sendable {
    /// The process's scheduler.
    public static let shared = TestScheduler()

    private typealias Original = @convention(thin) (UnownedJob) -> Void
    private typealias Hook = @convention(thin) (UnownedJob, Original) -> Void

    // Guarded by `lock`.
    private let lock = NSLock()
    private var jobs: [UnownedJob] = []
    private var head = 0
    private var draining = false
    private var active = false
    private var enqueued = 0
    private var enqueuedAtLastRound = 0
    private var quietRounds = 0
    private var ran = 0
    private var idleWaiters: [(continuation: CheckedContinuation<Bool, Never>, ranBefore: Int)] = []

    /// Main-queue passes with nothing new queued here before the process counts as idle.
    private static let quietRoundsBeforeIdle = 3

    private init() {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "swift_task_enqueueGlobal_hook") else {
            fatalError("TestScheduler: this Swift runtime exports no swift_task_enqueueGlobal_hook")
        }
        symbol.assumingMemoryBound(to: Hook?.self).pointee = { job, original in
            TestScheduler.shared.enqueueGlobal(job, original: original)
        }
    }

    /// Routes the process's global jobs here from now on, for the rest of the process.
    public func activate() {
        lock.withLock { active = true }
    }

    /// Whether the scheduler was active before the first test (`TETHER_TEST_SCHEDULER=1`).
    public internal(set) nonisolated(unsafe) static var startedAtLaunch = false

    /// Returns once no job is queued or running: every task is suspended, waiting on a clock,
    /// a continuation or something outside Swift concurrency. True if any job ran meanwhile
    /// (false: nothing at all happened since the call, so the process was already idle).
    @discardableResult
    public func idle() async -> Bool {
        await withCheckedContinuation { (waiter: CheckedContinuation<Bool, Never>) in
            let schedule = lock.withLock { () -> Bool in
                idleWaiters.append((waiter, ran))
                return claimDrain()
            }
            if schedule { scheduleDrain() }
        }
    }

    /// Jobs sent to this executor as an executor (a task that yields while running here).
    public func enqueue(_ job: consuming ExecutorJob) {
        append(UnownedJob(job))
    }

    private func enqueueGlobal(_ job: UnownedJob, original: Original) {
        let mine = lock.withLock { active || draining }
        if mine { append(job) } else { original(job) }
    }

    private func append(_ job: UnownedJob) {
        let schedule = lock.withLock { () -> Bool in
            jobs.append(job)
            enqueued &+= 1
            return claimDrain()
        }
        if schedule { scheduleDrain() }
    }

    /// Marks a drain as scheduled; true when the caller must schedule it. Call under `lock`.
    private func claimDrain() -> Bool {
        guard !draining else { return false }
        draining = true
        return true
    }

    private func scheduleDrain() {
        DispatchQueue.main.async { self.drain() }
    }

    private enum Step {
        case run(UnownedJob)
        case wake(CheckedContinuation<Bool, Never>, ranMeanwhile: Bool)
        case letMainQueueRun
        case stop
    }

    private func nextStep() -> Step {
        lock.withLock {
            if head < jobs.count {
                let job = jobs[head]
                head += 1
                ran += 1
                if head == jobs.count {
                    jobs.removeAll(keepingCapacity: true)
                    head = 0
                }
                return .run(job)
            }
            guard !idleWaiters.isEmpty else {
                draining = false
                return .stop
            }
            // Main-actor jobs do not pass through here: let the main queue run what it holds
            // (they may queue more work here) before calling the process idle.
            if enqueued != enqueuedAtLastRound {
                enqueuedAtLastRound = enqueued
                quietRounds = 0
            }
            guard quietRounds >= Self.quietRoundsBeforeIdle else {
                quietRounds += 1
                return .letMainQueueRun
            }
            quietRounds = 0
            let waiter = idleWaiters.removeFirst()
            return .wake(waiter.continuation, ranMeanwhile: ran != waiter.ranBefore)
        }
    }

    private func drain() {
        while true {
            switch nextStep() {
            case .run(let job):
                job.runSynchronously(on: asUnownedSerialExecutor())
            case .wake(let waiter, let ranMeanwhile):
                waiter.resume(returning: ranMeanwhile)
            case .letMainQueueRun:
                scheduleDrain()
                return
            case .stop:
                return
            }
        }
    }
}

/// Called before `main` by the TetherTestingStartup constructor when `TETHER_TEST_SCHEDULER=1`:
/// the scheduler is active before any test starts, so no job runs outside it.
@_cdecl("tether_testing_start_scheduler")
public func tetherTestingStartScheduler() {
    TestScheduler.startedAtLaunch = true
    TestScheduler.shared.activate()
}
