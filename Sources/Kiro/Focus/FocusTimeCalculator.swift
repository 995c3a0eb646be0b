import Foundation

/// Works out how much of a session was focus time (protocol §9.3).
///
/// Screen usage intervals, clipped to the session, interrupt focus. The gaps between them and
/// the session's edges are the candidate periods; a gap counts only if it lasts at least
/// ``minimumPeriod``, and then it counts in full. A gap that is too short counts for nothing.
///
/// With the §9.4 example (session 09:00–10:30, unlocks 09:05–09:10, 09:45–09:47, 10:20–10:21)
/// the periods are 09:10–09:45 and 09:47–10:20, 68 minutes in all; 09:00–09:05 and 10:21–10:30
/// are too short.
public struct FocusTimeCalculator: Sendable {
    /// The shortest uninterrupted gap that counts as focus (30 minutes per §9.3).
    public var minimumPeriod: TimeInterval = 30 * 60

    /// Creates a calculator counting gaps of at least `minimumPeriod` seconds.
    public init(minimumPeriod: TimeInterval = 1800) {
        self.minimumPeriod = minimumPeriod
    }

    /// Sum of the uninterrupted periods of at least `minimumPeriod` inside [start, end], where usage intervals interrupt.
    ///
    /// Between 0 and the session's length; 0 when `sessionEnd` is not after `sessionStart`.
    public func focusTime(sessionStart: Date, sessionEnd: Date, activity: [ScreenActivity]) -> TimeInterval {
        focusPeriods(sessionStart: sessionStart, sessionEnd: sessionEnd, activity: activity)
            .reduce(0) { $0 + $1.duration }
    }

    /// The uninterrupted periods of at least `minimumPeriod` inside [start, end], in time order.
    ///
    /// `activity` may be unsorted and overlapping, and may extend past either edge of the
    /// session. Empty when `sessionEnd` is not after `sessionStart`.
    public func focusPeriods(sessionStart: Date, sessionEnd: Date, activity: [ScreenActivity]) -> [DateInterval] {
        guard sessionEnd > sessionStart else { return [] }

        let interruptions = activity
            .filter { $0.overlaps(from: sessionStart, to: sessionEnd) }
            .map { (from: max($0.unlockedAt, sessionStart), to: min($0.lockedAt, sessionEnd)) }
            .sorted { $0.from < $1.from }

        var periods: [DateInterval] = []
        // The end of the usage seen so far: focus can only resume after it. Sweeping sorted
        // intervals this way merges overlapping and nested ones.
        var focusResumes = sessionStart
        for interruption in interruptions {
            if interruption.from > focusResumes {
                appendIfLongEnough(from: focusResumes, to: interruption.from, to: &periods)
            }
            focusResumes = max(focusResumes, interruption.to)
        }
        appendIfLongEnough(from: focusResumes, to: sessionEnd, to: &periods)
        return periods
    }

    /// The focus time of a closed session, asking `source` for the screen usage during it.
    ///
    /// 0 for an open session (no end, or outcome ``FocusSession/Outcome/open``) without asking
    /// the source, and for a session ending before it starts.
    public func focusTime(for session: FocusSession, source: any ScreenActivitySource) async throws -> TimeInterval {
        guard session.isClosed, let end = session.end, end > session.start else { return 0 }
        let activity = try await source.activity(from: session.start, to: end)
        return focusTime(sessionStart: session.start, sessionEnd: end, activity: activity)
    }

    private func appendIfLongEnough(from start: Date, to end: Date, to periods: inout [DateInterval]) {
        let length = end.timeIntervalSince(start)
        // `length > 0` keeps empty gaps out even when minimumPeriod is 0 or negative.
        guard length > 0, length >= minimumPeriod else { return }
        periods.append(DateInterval(start: start, end: end))
    }
}
