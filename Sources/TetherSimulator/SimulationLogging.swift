import Foundation
import Logging

/// One process-wide logging setup for simulations and test runs.
///
/// swift-log may be bootstrapped only once per process; test targets that each want quiet logs
/// call this instead of `LoggingSystem.bootstrap`.
public enum SimulationLogging {
    private static let once: Void = {
        let level = ProcessInfo.processInfo.environment["TETHER_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .critical
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }()

    /// Sends logs to standard error at `TETHER_TEST_LOG`'s level (default: critical only).
    /// Safe to call any number of times.
    public static func bootstrapForTests() {
        once
    }
}
