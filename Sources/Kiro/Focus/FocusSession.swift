import Foundation

/// One focus session: from EnterTaskIn to CompleteTask/SkipTask (device timestamps, Unix seconds).
///
/// A session starts when the device reports EnterTaskIn (protocol §5.3) and ends when it reports
/// CompleteTask (§5.4) or SkipTask (§5.5) for the same task. Until then it is ``Outcome/open``
/// and has no ``end``. See ``FocusTracker`` for the pairing and ``FocusTimeCalculator`` for how
/// much of a session counts as focus time (§9).
public struct FocusSession: Sendable, Hashable, Codable, Identifiable {
    /// How a session ended.
    public enum Outcome: String, Sendable, Hashable, Codable {
        /// Ended by CompleteTask (0x11): the user finished the task.
        case completed
        /// Ended by SkipTask (0x12): the user skipped the task.
        case skipped
        /// Not ended yet: no CompleteTask or SkipTask has been seen for the task.
        case open
    }

    /// Identifies the session itself (one task can have many sessions).
    public var id: UUID
    /// The task's id as the device sent it (a UUID string, kept verbatim).
    public var taskId: String
    /// The EnterTaskIn timestamp.
    public var start: Date
    /// The CompleteTask or SkipTask timestamp; nil while the session is open.
    public var end: Date?
    /// How the session ended, or ``Outcome/open``.
    public var outcome: Outcome

    /// Creates a session; by default an open one with a fresh id.
    public init(
        id: UUID = UUID(),
        taskId: String,
        start: Date,
        end: Date? = nil,
        outcome: Outcome = .open
    ) {
        self.id = id
        self.taskId = taskId
        self.start = start
        self.end = end
        self.outcome = outcome
    }

    /// Wall time from start to end (§9.3 "Duration"), or nil while the session has no end.
    ///
    /// Never negative: an end before the start (a device clock stepped back) gives 0.
    public var duration: TimeInterval? {
        guard let end else { return nil }
        return max(0, end.timeIntervalSince(start))
    }

    /// Whether the session has ended (has an end and an outcome other than ``Outcome/open``).
    public var isClosed: Bool { end != nil && outcome != .open }
}
