import Foundation

/// Tracks sessions from events: start on EnterTaskIn, close on CompleteTask/SkipTask for the same task.
///
/// Several tasks may be open at once: entering another task closes nothing, because the
/// device only reports completing or skipping, never leaving (protocol §5.3–5.5). Feed it the
/// timestamps the device sent, not the phone's clock.
public struct FocusTracker: Sendable {
    // An array rather than a dictionary keeps `openSessions` in the order tasks were entered.
    private var open: [FocusSession] = []

    /// Creates a tracker with no open sessions.
    public init() {}

    /// Records EnterTaskIn for `taskId` at `at` and returns the task's open session.
    ///
    /// A second EnterTaskIn for another task closes nothing; re-entering the same open task keeps
    /// the first start (and id), so leaving a task page and coming back does not reset focus.
    @discardableResult
    public mutating func taskEntered(_ taskId: String, at: Date) -> FocusSession {
        if let existing = open.first(where: { $0.taskId == taskId }) {
            return existing
        }
        let session = FocusSession(taskId: taskId, start: at)
        open.append(session)
        return session
    }

    /// Records CompleteTask or SkipTask for `taskId` at `at` and returns the closed session.
    ///
    /// Returns nil, changing nothing, if no session is open for that task (an end without a
    /// start, e.g. after the app restarted) or if `outcome` is ``FocusSession/Outcome/open``,
    /// which does not end anything.
    @discardableResult
    public mutating func taskEnded(_ taskId: String, at: Date, outcome: FocusSession.Outcome) -> FocusSession? {
        guard outcome != .open, let index = open.firstIndex(where: { $0.taskId == taskId }) else {
            return nil
        }
        var session = open.remove(at: index)
        session.end = at
        session.outcome = outcome
        return session
    }

    /// The sessions started but not yet ended, in the order their tasks were entered.
    public var openSessions: [FocusSession] { open }
}
