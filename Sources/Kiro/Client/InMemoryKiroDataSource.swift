import Foundation

/// A ``KiroDataSource`` holding one day in memory: the CLI's and the demo's app state.
///
/// Finishing a task on the device marks it completed (or skipped) here and updates the
/// settlement; task pages come from `details` or are derived from the top task.
public actor InMemoryKiroDataSource: KiroDataSource {
    /// Points a completed task earns.
    public static let pointsPerTask = 10

    /// The day as it stands.
    public private(set) var day: DayPack
    /// Detail pages by task id.
    public private(set) var details: [String: TaskInPage]
    /// The device's current selection.
    public private(set) var selectedTaskId: String?
    /// Tasks skipped on the device.
    public private(set) var skipped: Set<String> = []

    /// Creates a data source for `day`.
    public init(day: DayPack, details: [TaskInPage] = []) {
        self.day = day
        self.details = Dictionary(details.map { ($0.taskId, $0) }, uniquingKeysWith: { first, _ in first })
    }

    public func dayPack() -> DayPack { day }

    public func taskInPage(for taskId: String) -> TaskInPage? {
        if let detail = details[taskId] { return detail }
        guard let task = day.topTasks.first(where: { $0.taskId == taskId }) else { return nil }
        return TaskInPage(
            taskId: task.taskId, taskTitle: task.title, taskDescription: "Priority \(task.priority) task from today's list.",
            estimatedDuration: "25min", encouragement: day.companionPhrase, focusChallengeActive: day.focusChallengeEnabled)
    }

    public func taskEnded(_ taskId: String, outcome: FocusSession.Outcome) {
        guard let index = day.topTasks.firstIndex(where: { $0.taskId == taskId }) else { return }
        switch outcome {
        case .completed:
            guard !day.topTasks[index].isCompleted else { return }
            day.topTasks[index].isCompleted = true
            day.settlement.tasksCompleted += 1
            day.settlement.pointsEarned += Self.pointsPerTask
        case .skipped:
            skipped.insert(taskId)
        case .open:
            break
        }
    }

    public func selectionChanged(to taskId: String) { selectedTaskId = taskId }

    /// The app's data changed (the user edited the day): the day sent from now on. Call
    /// ``KiroSession/sync()`` to push it. Tasks skipped in the day before are forgotten.
    public func replaceDay(_ day: DayPack) {
        self.day = day
        skipped.removeAll()
    }
}

/// A day to try things with (the CLI's demo and `tether kiro push` without a file use it).
public enum KiroSampleDay {
    /// The sample day as JSON, in the format `tether kiro push` reads.
    public static let json = """
    {
      "date": "2026-01-30",
      "deviceMode": "interactive",
      "focusChallengeEnabled": true,
      "morningGreeting": "Good morning! ☀️",
      "dailySummary": "You have 3 tasks today. Sunny, 4°C.",
      "firstItem": "9:00 Team call",
      "currentScheduleSummary": "Next: 10:00 Design review",
      "companionPhrase": "Keep going! 🌱",
      "topTasks": [
        {"taskId": "abcdefgh-1234-5678-90ab-cdefghijklmn", "title": "Review PRs", "isCompleted": false, "priority": 1},
        {"taskId": "b2c3d4e5-2222-4333-8444-555566667777", "title": "Write release notes", "isCompleted": false, "priority": 2},
        {"taskId": "c3d4e5f6-3333-4444-8555-666677778888", "title": "Plan sprint", "isCompleted": true, "priority": 3}
      ],
      "settlement": {
        "tasksCompleted": 1, "tasksTotal": 3, "pointsEarned": 10, "streakDays": 7,
        "summaryMessage": "Great progress!", "encouragementMessage": "See you tomorrow!"
      }
    }
    """

    /// The sample day.
    public static func dayPack() throws -> DayPack {
        try JSONDecoder().decode(DayPack.self, from: Data(json.utf8))
    }
}
