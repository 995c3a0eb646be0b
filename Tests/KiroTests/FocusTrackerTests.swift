import Foundation
import Kiro
import Testing

// Fixed device timestamps (Unix seconds).
private let t0 = Date(timeIntervalSince1970: 1_700_000_000)

private func later(_ seconds: TimeInterval) -> Date { t0.addingTimeInterval(seconds) }

private let taskA = "6F9619FF-8B86-D011-B42D-00C04FC964FF"
private let taskB = "0E984725-C51C-4BF4-9960-E1C80E27ABA0"

@Suite struct FocusSessionTests {
    @Test func durationNeedsAnEnd() {
        #expect(FocusSession(taskId: taskA, start: t0).duration == nil)
        #expect(FocusSession(taskId: taskA, start: t0, end: later(90), outcome: .completed).duration == 90)
    }

    @Test func durationIsNeverNegative() {
        #expect(FocusSession(taskId: taskA, start: later(60), end: t0, outcome: .skipped).duration == 0)
    }

    @Test func newSessionsAreOpenWithDistinctIds() {
        let a = FocusSession(taskId: taskA, start: t0)
        let b = FocusSession(taskId: taskA, start: t0)
        #expect(a.outcome == .open && a.end == nil && !a.isClosed)
        #expect(a.id != b.id)
    }

    @Test(arguments: [
        FocusSession(taskId: taskA, start: t0),
        FocusSession(taskId: taskB, start: t0, end: later(1_800), outcome: .completed),
        FocusSession(taskId: "", start: t0, end: later(5), outcome: .skipped),
    ])
    func survivesJSON(session: FocusSession) throws {
        let decoded = try JSONDecoder().decode(FocusSession.self, from: JSONEncoder().encode(session))
        #expect(decoded == session)
    }

    @Test func outcomesEncodeAsTheirNames() throws {
        let names = try [FocusSession.Outcome.completed, .skipped, .open].map {
            String(decoding: try JSONEncoder().encode($0), as: UTF8.self)
        }
        #expect(names == ["\"completed\"", "\"skipped\"", "\"open\""])
    }
}

@Suite struct FocusTrackerTests {
    @Test func enterThenCompleteClosesTheSession() throws {
        var tracker = FocusTracker()
        let started = tracker.taskEntered(taskA, at: t0)
        #expect(started.taskId == taskA && started.start == t0 && started.outcome == .open && started.end == nil)
        #expect(tracker.openSessions == [started])

        let closed = tracker.taskEnded(taskA, at: later(2_700), outcome: .completed)
        let ended = try #require(closed)
        #expect(ended.id == started.id)
        #expect(ended.start == t0 && ended.end == later(2_700))
        #expect(ended.outcome == .completed)
        #expect(ended.duration == 2_700)
        #expect(tracker.openSessions.isEmpty)
    }

    @Test func skipClosesTheSessionAsSkipped() throws {
        var tracker = FocusTracker()
        tracker.taskEntered(taskA, at: t0)
        let closed = tracker.taskEnded(taskA, at: later(60), outcome: .skipped)
        let ended = try #require(closed)
        #expect(ended.outcome == .skipped)
        #expect(ended.isClosed)
    }

    @Test func endingWithoutEnteringGivesNil() {
        var tracker = FocusTracker()
        #expect(tracker.taskEnded(taskA, at: t0, outcome: .completed) == nil)
        #expect(tracker.openSessions.isEmpty)
    }

    @Test func endingAnotherTaskLeavesTheSessionOpen() {
        var tracker = FocusTracker()
        let started = tracker.taskEntered(taskA, at: t0)
        #expect(tracker.taskEnded(taskB, at: later(60), outcome: .completed) == nil)
        #expect(tracker.openSessions == [started])
    }

    @Test func enteringAnotherTaskClosesNothing() throws {
        var tracker = FocusTracker()
        let a = tracker.taskEntered(taskA, at: t0)
        let b = tracker.taskEntered(taskB, at: later(600))
        #expect(tracker.openSessions == [a, b])
        #expect(a.id != b.id)

        // Each closes independently, in any order.
        let closedB = tracker.taskEnded(taskB, at: later(900), outcome: .skipped)
        let endedB = try #require(closedB)
        #expect(endedB.id == b.id && endedB.start == later(600))
        #expect(tracker.openSessions == [a])
        let closedA = tracker.taskEnded(taskA, at: later(3_600), outcome: .completed)
        let endedA = try #require(closedA)
        #expect(endedA.id == a.id && endedA.duration == 3_600)
        #expect(tracker.openSessions.isEmpty)
    }

    @Test func reenteringAnOpenTaskKeepsTheFirstStart() throws {
        var tracker = FocusTracker()
        let first = tracker.taskEntered(taskA, at: t0)
        let again = tracker.taskEntered(taskA, at: later(1_200))
        #expect(again == first)
        #expect(tracker.openSessions == [first])
        let closed = tracker.taskEnded(taskA, at: later(2_400), outcome: .completed)
        let ended = try #require(closed)
        #expect(ended.start == t0 && ended.id == first.id)
    }

    @Test func aSessionClosesOnlyOnce() {
        var tracker = FocusTracker()
        tracker.taskEntered(taskA, at: t0)
        #expect(tracker.taskEnded(taskA, at: later(60), outcome: .completed) != nil)
        #expect(tracker.taskEnded(taskA, at: later(120), outcome: .skipped) == nil)
    }

    @Test func enteringAgainAfterClosingStartsANewSession() throws {
        var tracker = FocusTracker()
        let first = tracker.taskEntered(taskA, at: t0)
        tracker.taskEnded(taskA, at: later(60), outcome: .skipped)
        let second = tracker.taskEntered(taskA, at: later(120))
        #expect(second.id != first.id)
        #expect(second.start == later(120))
        let closed = tracker.taskEnded(taskA, at: later(180), outcome: .completed)
        let ended = try #require(closed)
        #expect(ended.id == second.id && ended.duration == 60)
    }

    @Test func anOpenOutcomeEndsNothing() {
        var tracker = FocusTracker()
        let started = tracker.taskEntered(taskA, at: t0)
        #expect(tracker.taskEnded(taskA, at: later(60), outcome: .open) == nil)
        #expect(tracker.openSessions == [started])
    }

    @Test func anEndBeforeTheStartIsKeptButHasNoDuration() throws {
        // The device clock stepped back between the two events.
        var tracker = FocusTracker()
        tracker.taskEntered(taskA, at: later(600))
        let closed = tracker.taskEnded(taskA, at: t0, outcome: .completed)
        let ended = try #require(closed)
        #expect(ended.end == t0)
        #expect(ended.duration == 0)
    }
}
