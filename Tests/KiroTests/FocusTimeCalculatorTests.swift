import Foundation
import Kiro
import PropertyBased
import Testing

// Fixed instants on 2023-11-14 (UTC); whole seconds, so date arithmetic is exact.
private let midnight = Date(timeIntervalSince1970: 1_699_920_000)

/// 2023-11-14 at `hour`:`minute` UTC.
private func at(_ hour: Int, _ minute: Int) -> Date {
    midnight.addingTimeInterval(TimeInterval(hour * 3_600 + minute * 60))
}

private func unlock(_ from: Date, _ to: Date) -> ScreenActivity {
    ScreenActivity(unlockedAt: from, lockedAt: to)
}

private func minutes(_ m: Double) -> TimeInterval { m * 60 }

/// The §9.4 example's usage, 09:05–09:10, 09:45–09:47 and 10:20–10:21.
private let specActivity = [
    unlock(at(9, 5), at(9, 10)),
    unlock(at(9, 45), at(9, 47)),
    unlock(at(10, 20), at(10, 21)),
]

/// A source that fails if asked, to show a result was reached without it.
private struct UnreachableSource: ScreenActivitySource {
    func activity(from start: Date, to end: Date) async throws -> [ScreenActivity] {
        Issue.record("the source should not be asked")
        return []
    }
}

private struct SourceFailure: Error {}

private struct FailingSource: ScreenActivitySource {
    func activity(from start: Date, to end: Date) async throws -> [ScreenActivity] {
        throw SourceFailure()
    }
}

@Suite struct FocusTimeCalculatorTests {
    let calculator = FocusTimeCalculator()

    @Test func defaultMinimumIsThirtyMinutes() {
        #expect(FocusTimeCalculator().minimumPeriod == 1_800)
        #expect(FocusTimeCalculator(minimumPeriod: 600).minimumPeriod == 600)
    }

    @Test func specExample() {
        let periods = calculator.focusPeriods(sessionStart: at(9, 0), sessionEnd: at(10, 30), activity: specActivity)
        #expect(periods == [
            DateInterval(start: at(9, 10), end: at(9, 45)),
            DateInterval(start: at(9, 47), end: at(10, 20)),
        ])
        #expect(calculator.focusTime(sessionStart: at(9, 0), sessionEnd: at(10, 30), activity: specActivity) == minutes(68))
    }

    @Test func noUnlocksCountsTheWholeSession() {
        #expect(calculator.focusTime(sessionStart: at(9, 0), sessionEnd: at(10, 30), activity: []) == minutes(90))
        #expect(
            calculator.focusPeriods(sessionStart: at(9, 0), sessionEnd: at(10, 30), activity: [])
                == [DateInterval(start: at(9, 0), end: at(10, 30))]
        )
    }

    @Test func shortSessionWithoutUnlocksGivesZero() {
        #expect(calculator.focusTime(sessionStart: at(9, 0), sessionEnd: at(9, 20), activity: []) == 0)
        #expect(calculator.focusPeriods(sessionStart: at(9, 0), sessionEnd: at(9, 20), activity: []).isEmpty)
    }

    @Test func aGapOfExactlyThirtyMinutesCounts() {
        #expect(calculator.focusTime(sessionStart: at(9, 0), sessionEnd: at(9, 30), activity: []) == minutes(30))
        // 09:00–09:30 (exactly 30) counts; 09:31–10:00 (29) does not.
        let activity = [unlock(at(9, 30), at(9, 31))]
        #expect(calculator.focusTime(sessionStart: at(9, 0), sessionEnd: at(10, 0), activity: activity) == minutes(30))
        // One second short of 30 minutes does not count.
        let justShort = at(9, 30).addingTimeInterval(-1)
        #expect(calculator.focusTime(sessionStart: at(9, 0), sessionEnd: justShort, activity: []) == 0)
    }

    @Test func usageStartingBeforeTheSessionIsClipped() {
        let activity = [unlock(at(8, 30), at(9, 10))]
        #expect(
            calculator.focusPeriods(sessionStart: at(9, 0), sessionEnd: at(10, 30), activity: activity)
                == [DateInterval(start: at(9, 10), end: at(10, 30))]
        )
    }

    @Test func usageEndingAfterTheSessionIsClipped() {
        let activity = [unlock(at(10, 0), at(11, 0))]
        #expect(
            calculator.focusPeriods(sessionStart: at(9, 0), sessionEnd: at(10, 30), activity: activity)
                == [DateInterval(start: at(9, 0), end: at(10, 0))]
        )
    }

    @Test func usageTouchingTheSessionEdgesFromOutsideChangesNothing() {
        let activity = [unlock(at(8, 0), at(9, 0)), unlock(at(10, 30), at(11, 0))]
        #expect(calculator.focusTime(sessionStart: at(9, 0), sessionEnd: at(10, 30), activity: activity) == minutes(90))
    }

    @Test func usageStartingExactlyAtTheStartOrEndingExactlyAtTheEnd() {
        let activity = [unlock(at(9, 0), at(9, 5)), unlock(at(10, 25), at(10, 30))]
        #expect(
            calculator.focusPeriods(sessionStart: at(9, 0), sessionEnd: at(10, 30), activity: activity)
                == [DateInterval(start: at(9, 5), end: at(10, 25))]
        )
    }

    @Test func usageCoveringTheWholeSessionGivesZero() {
        let activity = [unlock(at(8, 0), at(11, 0))]
        #expect(calculator.focusTime(sessionStart: at(9, 0), sessionEnd: at(10, 30), activity: activity) == 0)
    }

    @Test func usageEntirelyOutsideTheSessionIsIgnored() {
        let activity = [unlock(at(7, 0), at(8, 0)), unlock(at(11, 0), at(12, 0))]
        #expect(calculator.focusTime(sessionStart: at(9, 0), sessionEnd: at(10, 30), activity: activity) == minutes(90))
    }

    @Test func overlappingAndUnsortedUsageIsMerged() {
        let activity = [
            unlock(at(10, 20), at(10, 21)),
            unlock(at(9, 44), at(9, 46)),  // overlaps the next one
            unlock(at(9, 6), at(9, 8)),  // nested in 09:05–09:10
            unlock(at(9, 45), at(9, 47)),
            unlock(at(9, 5), at(9, 10)),
            unlock(at(9, 5), at(9, 10)),  // a duplicate
        ]
        #expect(
            calculator.focusPeriods(sessionStart: at(9, 0), sessionEnd: at(10, 30), activity: activity)
                == [DateInterval(start: at(9, 10), end: at(9, 44)), DateInterval(start: at(9, 47), end: at(10, 20))]
        )
        #expect(calculator.focusTime(sessionStart: at(9, 0), sessionEnd: at(10, 30), activity: activity) == minutes(67))
    }

    @Test func aMomentaryUnlockStillInterrupts() {
        let activity = [unlock(at(9, 25), at(9, 25))]
        #expect(calculator.focusTime(sessionStart: at(9, 0), sessionEnd: at(9, 50), activity: []) == minutes(50))
        #expect(calculator.focusTime(sessionStart: at(9, 0), sessionEnd: at(9, 50), activity: activity) == 0)
    }

    @Test func malformedUsageIsIgnored() {
        let activity = [unlock(at(10, 0), at(9, 30))]  // locked before it was unlocked
        #expect(calculator.focusTime(sessionStart: at(9, 0), sessionEnd: at(10, 30), activity: activity) == minutes(90))
    }

    @Test func endBeforeOrAtStartGivesZero() {
        #expect(calculator.focusTime(sessionStart: at(10, 30), sessionEnd: at(9, 0), activity: []) == 0)
        #expect(calculator.focusPeriods(sessionStart: at(10, 30), sessionEnd: at(9, 0), activity: specActivity).isEmpty)
        #expect(calculator.focusTime(sessionStart: at(9, 0), sessionEnd: at(9, 0), activity: []) == 0)
    }

    @Test func aShorterMinimumCountsShorterGaps() {
        let tenMinutes = FocusTimeCalculator(minimumPeriod: 600)
        // 09:00–09:05 (5) is still too short; 10:21–10:30 (9) too; the middle two count.
        #expect(tenMinutes.focusTime(sessionStart: at(9, 0), sessionEnd: at(10, 30), activity: specActivity) == minutes(68))
        let fiveMinutes = FocusTimeCalculator(minimumPeriod: 300)
        #expect(fiveMinutes.focusTime(sessionStart: at(9, 0), sessionEnd: at(10, 30), activity: specActivity) == minutes(82))
        // A zero minimum counts every gap but never an empty one.
        let any = FocusTimeCalculator(minimumPeriod: 0)
        let edgeToEdge = [unlock(at(9, 0), at(9, 5)), unlock(at(9, 5), at(10, 30))]
        #expect(any.focusPeriods(sessionStart: at(9, 0), sessionEnd: at(10, 30), activity: edgeToEdge).isEmpty)
    }

    // MARK: Sessions and sources

    @Test func closedSessionAsksTheSource() async throws {
        let source = StaticScreenActivitySource(specActivity)
        for outcome in [FocusSession.Outcome.completed, .skipped] {
            let session = FocusSession(taskId: "t", start: at(9, 0), end: at(10, 30), outcome: outcome)
            #expect(try await calculator.focusTime(for: session, source: source) == minutes(68))
        }
    }

    @Test func openSessionGivesZeroWithoutAskingTheSource() async throws {
        let open = FocusSession(taskId: "t", start: at(9, 0))
        #expect(try await calculator.focusTime(for: open, source: UnreachableSource()) == 0)
        // An end without an outcome is still open.
        let unfinished = FocusSession(taskId: "t", start: at(9, 0), end: at(10, 30), outcome: .open)
        #expect(try await calculator.focusTime(for: unfinished, source: UnreachableSource()) == 0)
    }

    @Test func sessionEndingBeforeItStartsGivesZero() async throws {
        let backwards = FocusSession(taskId: "t", start: at(10, 30), end: at(9, 0), outcome: .completed)
        #expect(try await calculator.focusTime(for: backwards, source: UnreachableSource()) == 0)
    }

    @Test func sourceErrorsPropagate() async {
        let session = FocusSession(taskId: "t", start: at(9, 0), end: at(10, 30), outcome: .completed)
        await #expect(throws: SourceFailure.self) {
            try await calculator.focusTime(for: session, source: FailingSource())
        }
    }

    @Test func staticSourceServesOverlappingIntervals() async throws {
        let before = unlock(at(8, 0), at(8, 30))
        let straddling = unlock(at(8, 50), at(9, 10))
        let touching = unlock(at(10, 30), at(10, 40))
        let after = unlock(at(11, 0), at(11, 5))
        let source = StaticScreenActivitySource([after, straddling, before, touching, specActivity[1]])
        let served = try await source.activity(from: at(9, 0), to: at(10, 30))
        #expect(served == [straddling, touching, specActivity[1]])
    }
}

// MARK: - Properties

/// A session within a few hours of 09:00, sometimes ending before it starts (whole seconds).
private let sessionBounds = zip(Gen.int(in: 0...7_200), Gen.int(in: -600...14_400))
    .map { offset, length in
        (start: at(9, 0).addingTimeInterval(TimeInterval(offset)),
         end: at(9, 0).addingTimeInterval(TimeInterval(offset + length)))
    }

/// Usage around that time, including some starting before or ending after the session.
private let usage = zip(Gen.int(in: -3_600...25_000), Gen.int(in: 0...3_600))
    .map { offset, length in
        unlock(at(9, 0).addingTimeInterval(TimeInterval(offset)),
               at(9, 0).addingTimeInterval(TimeInterval(offset + length)))
    }

@Suite struct FocusTimePropertyTests {
    @Test func focusTimeIsBoundedAndUnlocksNeverAddToIt() async {
        await propertyCheck(count: 500, input: sessionBounds, usage.array(of: 0...8), usage) { bounds, activity, extra in
            let calculator = FocusTimeCalculator()
            let length = max(0, bounds.end.timeIntervalSince(bounds.start))
            let time = calculator.focusTime(sessionStart: bounds.start, sessionEnd: bounds.end, activity: activity)
            #expect(time >= 0)
            #expect(time <= length)

            for position in [0, activity.count] {
                var more = activity
                more.insert(extra, at: position)
                let withExtra = calculator.focusTime(sessionStart: bounds.start, sessionEnd: bounds.end, activity: more)
                #expect(withExtra <= time)
            }
        }
    }

    @Test func periodsAreLongEnoughOrderedAndFreeOfUsage() async {
        await propertyCheck(count: 500, input: sessionBounds, usage.array(of: 0...8)) { bounds, activity in
            let calculator = FocusTimeCalculator()
            let periods = calculator.focusPeriods(sessionStart: bounds.start, sessionEnd: bounds.end, activity: activity)
            for period in periods {
                #expect(period.duration >= calculator.minimumPeriod)
                #expect(period.start >= bounds.start && period.end <= bounds.end)
                for use in activity where use.lockedAt >= use.unlockedAt {
                    // Usage may touch a period's edges but never reach inside it.
                    #expect(use.lockedAt <= period.start || use.unlockedAt >= period.end)
                }
            }
            for (earlier, later) in Swift.zip(periods, periods.dropFirst()) {
                #expect(earlier.end <= later.start)
            }
        }
    }
}
