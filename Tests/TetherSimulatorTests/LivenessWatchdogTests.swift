import Foundation
import Testing
@testable import TetherCore
import TetherTesting

/// The silence detector GripFit's PING and Tybe's heartbeat share, on a test clock.
@Suite("Liveness watchdog", .timeLimit(.minutes(1)))
struct LivenessWatchdogTests {
    /// Records when `dead` and `probe` ran, in virtual time.
    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var events: [(String, Duration)] = []
        var answers = true
        func record(_ what: String, _ at: Duration) { lock.withLock { events.append((what, at)) } }
        var all: [(String, Duration)] { lock.withLock { events } }
        func setAnswers(_ value: Bool) { lock.withLock { answers = value } }
        var answering: Bool { lock.withLock { answers } }
    }

    @Test func silenceWithoutAProbeIsDeathAtTheDeadlineOnce() async {
        let time = TestTime(), clock = time.clock
        let timeline = Timeline(clock: clock)
        let log = Log()
        let watchdog = LivenessWatchdog(clock: clock, silence: .seconds(3))
        watchdog.start(dead: { log.record("dead", timeline.now) })
        await time.advance(.seconds(2))
        watchdog.heard()                       // at 2 s: the deadline moves to 5 s
        await time.advance(.milliseconds(2_900))
        #expect(log.all.isEmpty)
        await time.advance(.seconds(5))
        #expect(log.all.count == 1)
        let at = log.all.first?.1 ?? .zero
        #expect(at >= .seconds(5) && at <= .milliseconds(5_020), "\(at)")
    }

    @Test func anAnsweredProbeKeepsTheLinkAndAnUnansweredOneEndsIt() async {
        let time = TestTime(), clock = time.clock
        let timeline = Timeline(clock: clock)
        let log = Log()
        let watchdog = LivenessWatchdog(clock: clock, silence: .seconds(2), probeWindow: .seconds(2))
        watchdog.start(probe: {
            log.record("probe", timeline.now)
            if log.answering { watchdog.heard() }
        }, dead: { log.record("dead", timeline.now) })
        await time.advance(.seconds(7))
        // Probed at 2 s and answered; the next period starts when the window ends (4 s): probed
        // again at 6 s.
        #expect(log.all.map(\.0) == ["probe", "probe"])
        let probes = log.all.map(\.1)
        #expect(probes.count == 2 && probes[1] - probes[0] >= .seconds(4) && probes[1] - probes[0] <= .milliseconds(4_030), "\(probes)")
        log.setAnswers(false)
        await time.advance(.seconds(6))
        let names = log.all.map(\.0)
        #expect(names.last == "dead")
        #expect(names.filter { $0 == "dead" }.count == 1)
        let probe = log.all.last { $0.0 == "probe" }?.1 ?? .zero
        let dead = log.all.last?.1 ?? .zero
        #expect(dead - probe >= .seconds(2) && dead - probe <= .milliseconds(2_020), "dead \(dead) after a probe at \(probe)")
    }

    @Test func aWatchdogStartsAgainAfterADeath() async {
        let time = TestTime(), clock = time.clock
        let timeline = Timeline(clock: clock)
        let log = Log()
        let watchdog = LivenessWatchdog(clock: clock, silence: .seconds(1))
        watchdog.start(dead: { log.record("dead", timeline.now) })
        await time.advance(.seconds(2))
        #expect(log.all.count == 1)
        watchdog.start(dead: { log.record("dead again", timeline.now) })
        await time.advance(.seconds(2))
        #expect(log.all.map(\.0) == ["dead", "dead again"])
    }

    @Test func aStoppedWatchdogSaysNothing() async {
        let time = TestTime(), clock = time.clock
        let log = Log()
        let watchdog = LivenessWatchdog(clock: clock, silence: .seconds(1))
        watchdog.start(dead: { log.record("dead", .zero) })
        await time.advance(.milliseconds(500))
        watchdog.stop()
        await time.advance(.seconds(3))
        #expect(log.all.isEmpty)
    }
}
