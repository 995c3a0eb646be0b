import Foundation

/// How long a test waits on **real** time (a D-Bus daemon, bluezoo, a TCP peer, a Python
/// peer): every such bound is multiplied by ``factor``. Under ThreadSanitizer everything runs
/// several times slower, and bounds sized for a plain build fire before the awaited event —
/// the bound stays a bound (waits still end at the event), only its length changes.
public enum Patience {
    /// `TETHER_TEST_PATIENCE` (a positive number) if set, else 8 in a ThreadSanitizer build,
    /// else 1.
    public static let factor: Double = {
        if let text = ProcessInfo.processInfo.environment["TETHER_TEST_PATIENCE"],
           let value = Double(text), value.isFinite, value > 0 {
            return value
        }
        return isThreadSanitized ? 8 : 1
    }()

    /// Whether this process was built with `--sanitize=thread` (its runtime is linked in).
    public static let isThreadSanitized: Bool = dlsym(dlopen(nil, RTLD_NOW), "__tsan_init") != nil

    /// `seconds` stretched by ``factor``.
    public static func seconds(_ seconds: Double) -> Double { seconds * factor }

    /// `duration` stretched by ``factor``.
    public static func duration(_ duration: Duration) -> Duration { duration * factor }
}
