/// When and how often a dropped connection is re-established.
public struct ReconnectPolicy: Sendable, Hashable {
    /// The delays between attempts.
    public enum Schedule: Sendable, Hashable {
        /// No automatic reconnection.
        case never
        /// One attempt after each listed delay, then give up.
        case delays([Duration])
        /// Start at `initial`, multiply by `multiplier` each attempt up to `maximum`;
        /// `maxAttempts` nil means never give up.
        case exponential(initial: Duration, multiplier: Double, maximum: Duration, maxAttempts: Int?)
    }

    /// The backoff schedule.
    public var schedule: Schedule
    /// Let the OS reconnect by itself when the driver can (CoreBluetooth's auto-reconnect);
    /// the schedule then applies only when the OS gives up.
    public var useOSAutoReconnect: Bool

    /// Creates a policy.
    public init(schedule: Schedule, useOSAutoReconnect: Bool = false) {
        self.schedule = schedule
        self.useOSAutoReconnect = useOSAutoReconnect
    }

    /// Never reconnect automatically.
    public static let never = ReconnectPolicy(schedule: .never)
    /// Three attempts after 1, 2 and 4 seconds.
    public static let threeAttempts = ReconnectPolicy(schedule: .delays([.seconds(1), .seconds(2), .seconds(4)]))
    /// 1 s doubling to 30 s, forever (the GripFit app's policy).
    public static let persistent = ReconnectPolicy(
        schedule: .exponential(initial: .seconds(1), multiplier: 2, maximum: .seconds(30), maxAttempts: nil))

    /// The delay before attempt `attempt` (1-based), or nil when the policy gives up.
    public func delay(beforeAttempt attempt: Int) -> Duration? {
        guard attempt >= 1 else { return nil }
        switch schedule {
        case .never:
            return nil
        case .delays(let delays):
            return attempt <= delays.count ? delays[attempt - 1] : nil
        case .exponential(let initial, let multiplier, let maximum, let maxAttempts):
            if let maxAttempts, attempt > maxAttempts { return nil }
            var delay = initial
            for _ in 1..<attempt {
                delay = delay * multiplier
                if delay >= maximum { return maximum }
            }
            return min(delay, maximum)
        }
    }
}
