import Foundation
import Testing

@testable import TetherCore

@Suite("ReconnectPolicy")
struct ReconnectPolicyTests {
    @Test(
        ".threeAttempts waits 1, 2 and 4 seconds, then gives up",
        arguments: [
            (1, Duration?.some(.seconds(1))),
            (2, .seconds(2)),
            (3, .seconds(4)),
            (4, nil),
            (5, nil),
            (100, nil),
        ])
    func threeAttempts(attempt: Int, expected: Duration?) {
        #expect(ReconnectPolicy.threeAttempts.delay(beforeAttempt: attempt) == expected)
    }

    @Test(
        ".persistent doubles from 1 s and caps at 30 s",
        arguments: [
            (1, Duration.seconds(1)),
            (2, .seconds(2)),
            (3, .seconds(4)),
            (4, .seconds(8)),
            (5, .seconds(16)),
            (6, .seconds(30)),
            (7, .seconds(30)),
            (8, .seconds(30)),
            (50, .seconds(30)),
            (1000, .seconds(30)),
        ])
    func persistent(attempt: Int, expected: Duration) {
        #expect(ReconnectPolicy.persistent.delay(beforeAttempt: attempt) == expected)
    }

    @Test(".persistent never gives up")
    func persistentNeverNil() {
        let delays = (1...1000).map { ReconnectPolicy.persistent.delay(beforeAttempt: $0) }
        #expect(delays.allSatisfy { $0 != nil })
        #expect(delays.allSatisfy { $0! <= .seconds(30) })
        #expect(ReconnectPolicy.persistent.delay(beforeAttempt: 1_000_000) == .seconds(30))
        // Non-decreasing.
        #expect(zip(delays, delays.dropFirst()).allSatisfy { $0! <= $1! })
    }

    @Test(".never never reconnects", arguments: [0, 1, 2, 10, 1000])
    func never(attempt: Int) {
        #expect(ReconnectPolicy.never.delay(beforeAttempt: attempt) == nil)
    }

    @Test(
        "Attempts below 1 give nil for every policy",
        arguments: [ReconnectPolicy.never, .threeAttempts, .persistent],
        [0, -1, Int.min])
    func attemptBelowOne(policy: ReconnectPolicy, attempt: Int) {
        #expect(policy.delay(beforeAttempt: attempt) == nil)
    }

    @Test("maxAttempts is respected")
    func maxAttempts() {
        let policy = ReconnectPolicy(
            schedule: .exponential(initial: .milliseconds(500), multiplier: 3, maximum: .seconds(10), maxAttempts: 4))
        #expect(policy.delay(beforeAttempt: 1) == .milliseconds(500))
        #expect(policy.delay(beforeAttempt: 2) == .milliseconds(1500))
        #expect(policy.delay(beforeAttempt: 3) == .milliseconds(4500))
        #expect(policy.delay(beforeAttempt: 4) == .seconds(10))
        #expect(policy.delay(beforeAttempt: 5) == nil)
        #expect(policy.delay(beforeAttempt: 1000) == nil)
    }

    @Test("maxAttempts of zero never reconnects")
    func maxAttemptsZero() {
        let policy = ReconnectPolicy(
            schedule: .exponential(initial: .seconds(1), multiplier: 2, maximum: .seconds(30), maxAttempts: 0))
        #expect(policy.delay(beforeAttempt: 1) == nil)
    }

    @Test("An initial delay above the maximum is capped")
    func initialAboveMaximum() {
        let policy = ReconnectPolicy(
            schedule: .exponential(initial: .seconds(60), multiplier: 2, maximum: .seconds(30), maxAttempts: nil))
        #expect(policy.delay(beforeAttempt: 1) == .seconds(30))
        #expect(policy.delay(beforeAttempt: 2) == .seconds(30))
    }

    @Test("A custom delay list is used in order")
    func customDelays() {
        let policy = ReconnectPolicy(schedule: .delays([.milliseconds(250), .seconds(5)]))
        #expect(policy.delay(beforeAttempt: 1) == .milliseconds(250))
        #expect(policy.delay(beforeAttempt: 2) == .seconds(5))
        #expect(policy.delay(beforeAttempt: 3) == nil)
        #expect(ReconnectPolicy(schedule: .delays([])).delay(beforeAttempt: 1) == nil)
    }

    @Test("useOSAutoReconnect defaults to false and does not change the schedule")
    func osAutoReconnect() {
        #expect(!ReconnectPolicy.persistent.useOSAutoReconnect)
        var policy = ReconnectPolicy.threeAttempts
        policy.useOSAutoReconnect = true
        #expect(policy != .threeAttempts)
        #expect(policy.delay(beforeAttempt: 2) == .seconds(2))
    }
}
