import Kiro

extension KiroCommands.CommandName {
    /// A complete model of the command, as `tether kiro encode --example` prints it (tests
    /// encode every one, so none goes stale).
    var example: String {
        switch self {
        case .petStatus:
            #"{"name": "Mochi", "mood": "happy", "stage": "child", "progress": 42}"#
        case .taskList:
            #"{"tasks": [{"title": "Review PRs", "isCompleted": false}, {"title": "Plan sprint", "isCompleted": true}]}"#
        case .schedule:
            #"{"events": [{"title": "Team call", "startTime": "09:00"}, {"title": "Design review", "startTime": "10:00"}]}"#
        case .weather:
            #"{"temperature": 4, "condition": "Sunny"}"#
        case .time:
            #"{"dateTime": "2026-01-30T08:45:00"}"#
        case .dayPack:
            KiroSampleDay.json
        case .taskInPage:
            """
            {"taskId": "abcdefgh-1234-5678-90ab-cdefghijklmn", "taskTitle": "Review PRs", \
            "taskDescription": "Two open pull requests", "estimatedDuration": "25 min", \
            "encouragement": "You've got this!", "focusChallengeActive": true}
            """
        case .deviceMode:
            #"{"mode": "Focus"}"#
        }
    }
}
