import Foundation

/// Notices a link that is up but silent: a device that should speak every so often (GripFit's
/// readings, Tybe's heartbeat) and has stopped, although the operating system has not noticed.
///
/// The client calls ``heard()`` for every sign of life it counts. When ``silence`` passes
/// without one, the watchdog asks the device (the optional `probe`, GripFit's `CMD:PING`),
/// waits ``probeWindow`` for a sign, and if none came calls `dead` once and stops: where a
/// client calls ``ConnectionStateMachine/linkLost(reason:)`` (GripFit) or drops the link itself
/// (Tybe). An answered probe starts a new period of silence when its window ends. Time comes
/// from the injected clock.
public final class LivenessWatchdog: @unchecked Sendable {
    /// How long the link may stay silent.
    public let silence: Duration
    /// How long a probe's answer may take.
    public let probeWindow: Duration

    private let timeline: Timeline
    // Guarded by `lock`.
    private let lock = NSLock()
    private var lastHeard: Duration
    private var task: Task<Void, Never>?

    /// Creates a stopped watchdog on `clock`.
    public init(clock: any Clock<Duration>, silence: Duration, probeWindow: Duration = .zero) {
        self.timeline = Timeline(clock)
        self.silence = silence
        self.probeWindow = probeWindow
        self.lastHeard = timeline.now
    }

    deinit { task?.cancel() }

    /// Records a sign of life (what counts is the client's choice: GripFit counts readings and
    /// PONGs, Tybe every status).
    public func heard() {
        let now = timeline.now
        lock.withLock { lastHeard = max(lastHeard, now) }
    }

    /// Starts watching (after ``stop()`` or a `dead` call as well); the silence is counted from now.
    ///
    /// - Parameters:
    ///   - probe: asks the device for a sign (nil: silence alone means dead).
    ///   - dead: called once when the link is found dead; the watchdog then stops.
    public func start(probe: (@Sendable () async -> Void)? = nil, dead: @escaping @Sendable () async -> Void) {
        heard()
        let timeline = self.timeline, silence = self.silence, window = probeWindow
        let replaced = lock.withLock { () -> Task<Void, Never>? in
            let old = task
            task = Task { [weak self] in
                while !Task.isCancelled {
                    guard let deadline = self.map({ $0.lastSign() + silence }) else { return }
                    if timeline.now < deadline {
                        do { try await timeline.sleep(until: deadline) } catch { return }
                        continue
                    }
                    if let probe {
                        let probedAt = timeline.now
                        await probe()
                        do { try await timeline.sleep(until: probedAt + window) } catch { return }
                        guard let self else { return }
                        if self.lastSign() >= probedAt {
                            // Alive but quiet: the next period starts now.
                            self.heard()
                            continue
                        }
                    }
                    guard !Task.isCancelled else { return }
                    await dead()
                    return
                }
            }
            return old
        }
        replaced?.cancel()
    }

    /// Stops watching.
    public func stop() {
        let old = lock.withLock { () -> Task<Void, Never>? in
            defer { task = nil }
            return task
        }
        old?.cancel()
    }

    private func lastSign() -> Duration { lock.withLock { lastHeard } }
}
