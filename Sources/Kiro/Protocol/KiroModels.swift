import Foundation

/// The pet's mood (protocol §4.2); sent as the ASCII initial of its name.
public enum PetMood: String, Codable, Sendable, CaseIterable {
    /// `H`.
    case happy
    /// `E`.
    case excited
    /// `F`.
    case focused
    /// `S`.
    case sleepy
    /// `M`.
    case missingYou

    /// The mood byte on the wire.
    public var byte: UInt8 {
        switch self {
        case .happy: UInt8(ascii: "H")
        case .excited: UInt8(ascii: "E")
        case .focused: UInt8(ascii: "F")
        case .sleepy: UInt8(ascii: "S")
        case .missingYou: UInt8(ascii: "M")
        }
    }

    /// The mood with this byte, or nil for an unknown letter.
    public init?(byte: UInt8) {
        guard let match = Self.allCases.first(where: { $0.byte == byte }) else { return nil }
        self = match
    }
}

/// The pet's growth stage (protocol §4.2); sent as the ASCII initial of its name.
public enum PetStage: String, Codable, Sendable, CaseIterable {
    /// `B`.
    case baby
    /// `C`.
    case child
    /// `T`.
    case teen
    /// `A`.
    case adult
    /// `E`.
    case elder

    /// The stage byte on the wire.
    public var byte: UInt8 {
        switch self {
        case .baby: UInt8(ascii: "B")
        case .child: UInt8(ascii: "C")
        case .teen: UInt8(ascii: "T")
        case .adult: UInt8(ascii: "A")
        case .elder: UInt8(ascii: "E")
        }
    }

    /// The stage with this byte, or nil for an unknown letter.
    public init?(byte: UInt8) {
        guard let match = Self.allCases.first(where: { $0.byte == byte }) else { return nil }
        self = match
    }
}

/// Pet state for display (command `0x01`).
public struct PetStatus: Codable, Sendable, Hashable {
    /// The pet's name; truncated to 20 characters on the wire.
    public var name: String
    /// The pet's mood.
    public var mood: PetMood
    /// The pet's growth stage.
    public var stage: PetStage
    /// Progress towards the next stage in percent; clamped to 0…100 on the wire.
    public var progress: Int

    /// Creates a pet status.
    public init(name: String, mood: PetMood, stage: PetStage, progress: Int) {
        self.name = name
        self.mood = mood
        self.stage = stage
        self.progress = progress
    }
}

/// One entry of the task list.
public struct TaskItem: Codable, Sendable, Hashable {
    /// The title; truncated to 30 characters on the wire.
    public var title: String
    /// Whether the task is done.
    public var isCompleted: Bool

    /// Creates a task entry.
    public init(title: String, isCompleted: Bool) {
        self.title = title
        self.isCompleted = isCompleted
    }
}

/// Today's task list (command `0x02`).
public struct TaskList: Codable, Sendable, Hashable {
    /// The tasks; only the first 10 are sent.
    public var tasks: [TaskItem]

    /// Creates a task list.
    public init(tasks: [TaskItem]) {
        self.tasks = tasks
    }
}

/// One calendar event of the schedule.
public struct ScheduleEvent: Codable, Sendable, Hashable {
    /// The title; truncated to 25 characters on the wire.
    public var title: String
    /// The start time as `"HH:mm"` (24-hour, zero-padded); anything else fails to encode.
    public var startTime: String

    /// Creates a calendar event entry.
    public init(title: String, startTime: String) {
        self.title = title
        self.startTime = startTime
    }
}

/// Today's calendar events (command `0x03`).
public struct Schedule: Codable, Sendable, Hashable {
    /// The events; only the first 8 are sent.
    public var events: [ScheduleEvent]

    /// Creates a schedule.
    public init(events: [ScheduleEvent]) {
        self.events = events
    }
}

/// Current weather (command `0x04`).
public struct Weather: Codable, Sendable, Hashable {
    /// Temperature in °C; clamped to −128…127 on the wire.
    public var temperature: Int
    /// The condition, conventionally `sunny`, `cloudy`, `rainy`, `snowy` or `stormy`; truncated
    /// to 15 characters.
    public var condition: String

    /// Creates a weather report.
    public init(temperature: Int, condition: String) {
        self.temperature = temperature
        self.condition = condition
    }
}

/// A clock synchronisation (command `0x05`) in the device's local time.
public struct TimeSync: Codable, Sendable, Hashable {
    /// Local wall-clock time as `"YYYY-MM-DDTHH:mm:ss"`, years 2000…2255; anything else fails
    /// to encode.
    public var dateTime: String

    /// Creates a time sync from its text.
    public init(dateTime: String) {
        self.dateTime = dateTime
    }

    /// Creates a time sync for `date` as seen on a wall clock in `timeZone` (seconds truncated).
    public init(date: Date, timeZone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        self.dateTime = KiroDateText.dateTime(
            year: parts.year ?? 0, month: parts.month ?? 0, day: parts.day ?? 0,
            hour: parts.hour ?? 0, minute: parts.minute ?? 0, second: parts.second ?? 0)
    }
}

/// A calendar day, carried in JSON as the string `"YYYY-MM-DD"`.
///
/// The memberwise initialiser accepts any numbers so models can be built freely; encoding a
/// command checks the date and throws ``KiroEncodingError/invalidDate(_:)`` if it is not a real
/// day in 2000…2255.
public struct KiroDate: Codable, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The year, such as 2026.
    public var year: Int
    /// The month, 1…12.
    public var month: Int
    /// The day of the month, 1…31.
    public var day: Int

    /// Creates a date from its parts.
    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses `"YYYY-MM-DD"` (exactly four, two and two digits); nil unless it names a real day.
    public init?(string: String) {
        let bytes = Array(string.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              let year = KiroDateText.number(bytes, 0..<4),
              let month = KiroDateText.number(bytes, 5..<7),
              let day = KiroDateText.number(bytes, 8..<10)
        else { return nil }
        self.init(year: year, month: month, day: day)
        guard isValid else { return nil }
    }

    /// The day that contains `date` on a wall clock in `timeZone`.
    public init(date: Date, timeZone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        self.init(year: parts.year ?? 0, month: parts.month ?? 0, day: parts.day ?? 0)
    }

    /// Whether the parts name a real Gregorian day (leap years included).
    public var isValid: Bool {
        (1...12).contains(month) && day >= 1 && day <= KiroDateText.daysIn(month: month, year: year)
    }

    /// `"YYYY-MM-DD"`.
    public var description: String {
        KiroDateText.pad(year, 4) + "-" + KiroDateText.pad(month, 2) + "-" + KiroDateText.pad(day, 2)
    }

    /// Orders chronologically.
    public static func < (a: KiroDate, b: KiroDate) -> Bool {
        (a.year, a.month, a.day) < (b.year, b.month, b.day)
    }

    /// Decodes `"YYYY-MM-DD"`, rejecting anything that is not a real day.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let date = KiroDate(string: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "Not a YYYY-MM-DD date: \(text)")
        }
        self = date
    }

    /// Encodes `"YYYY-MM-DD"`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// One of the day pack's top tasks (page 2).
public struct TopTask: Codable, Sendable, Hashable {
    /// The task's identifier (a UUID string); truncated to 36 characters on the wire.
    public var taskId: String
    /// The title; truncated to 30 characters.
    public var title: String
    /// Whether the task is done.
    public var isCompleted: Bool
    /// Priority 1 (highest) to 3; clamped to 1…3 on the wire.
    public var priority: Int

    /// Creates a top task.
    public init(taskId: String, title: String, isCompleted: Bool, priority: Int) {
        self.taskId = taskId
        self.title = title
        self.isCompleted = isCompleted
        self.priority = priority
    }
}

/// The end-of-day summary (page 4).
public struct Settlement: Codable, Sendable, Hashable {
    /// Tasks completed today; clamped to 0…255.
    public var tasksCompleted: Int
    /// Tasks planned today; clamped to 0…255.
    public var tasksTotal: Int
    /// Points earned today; clamped to 0…65535.
    public var pointsEarned: Int
    /// Current streak in days; clamped to 0…255.
    public var streakDays: Int
    /// Summary text; truncated to 50 characters.
    public var summaryMessage: String
    /// Encouragement for tomorrow; truncated to 50 characters.
    public var encouragementMessage: String

    /// Creates a settlement.
    public init(
        tasksCompleted: Int, tasksTotal: Int, pointsEarned: Int, streakDays: Int,
        summaryMessage: String, encouragementMessage: String
    ) {
        self.tasksCompleted = tasksCompleted
        self.tasksTotal = tasksTotal
        self.pointsEarned = pointsEarned
        self.streakDays = streakDays
        self.summaryMessage = summaryMessage
        self.encouragementMessage = encouragementMessage
    }
}

/// The complete daily package (command `0x10`): pages 1, 2 and 4.
public struct DayPack: Codable, Sendable, Hashable {
    /// The day it describes.
    public var date: KiroDate
    /// The display mode.
    public var deviceMode: DeviceMode
    /// Whether the focus challenge is on.
    public var focusChallengeEnabled: Bool
    /// Page 1 greeting; truncated to 50 characters.
    public var morningGreeting: String
    /// Page 1 summary; truncated to 60 characters.
    public var dailySummary: String
    /// Page 1 first task or event; truncated to 40 characters.
    public var firstItem: String
    /// Page 2 current or next calendar item; truncated to 30 characters.
    public var currentScheduleSummary: String
    /// Page 2 companion message; truncated to 40 characters.
    public var companionPhrase: String
    /// Page 2 top tasks; only the first 3 are sent.
    public var topTasks: [TopTask]
    /// Page 4 summary.
    public var settlement: Settlement

    /// Creates a day pack.
    public init(
        date: KiroDate, deviceMode: DeviceMode, focusChallengeEnabled: Bool,
        morningGreeting: String, dailySummary: String, firstItem: String,
        currentScheduleSummary: String, companionPhrase: String,
        topTasks: [TopTask], settlement: Settlement
    ) {
        self.date = date
        self.deviceMode = deviceMode
        self.focusChallengeEnabled = focusChallengeEnabled
        self.morningGreeting = morningGreeting
        self.dailySummary = dailySummary
        self.firstItem = firstItem
        self.currentScheduleSummary = currentScheduleSummary
        self.companionPhrase = companionPhrase
        self.topTasks = topTasks
        self.settlement = settlement
    }
}

/// The task detail page (command `0x11`, page 3), usually sent in answer to EnterTaskIn.
public struct TaskInPage: Codable, Sendable, Hashable {
    /// The task's identifier; truncated to 36 characters.
    public var taskId: String
    /// The title; truncated to 40 characters.
    public var taskTitle: String
    /// The description; truncated to 100 characters.
    public var taskDescription: String
    /// The estimate, such as `"30min"`; truncated to 10 characters.
    public var estimatedDuration: String
    /// The encouragement; truncated to 50 characters.
    public var encouragement: String
    /// Whether the focus challenge indicator is shown.
    public var focusChallengeActive: Bool

    /// Creates a task page.
    public init(
        taskId: String, taskTitle: String, taskDescription: String, estimatedDuration: String,
        encouragement: String, focusChallengeActive: Bool
    ) {
        self.taskId = taskId
        self.taskTitle = taskTitle
        self.taskDescription = taskDescription
        self.estimatedDuration = estimatedDuration
        self.encouragement = encouragement
        self.focusChallengeActive = focusChallengeActive
    }
}

/// A device mode change (command `0x12`) as a JSON model.
public struct DeviceModeCommand: Codable, Sendable, Hashable {
    /// The requested mode.
    public var mode: DeviceMode

    /// Creates a mode change.
    public init(mode: DeviceMode) {
        self.mode = mode
    }
}

/// Fixed-width number text shared by ``KiroDate``, ``TimeSync`` and the `"HH:mm"` check.
enum KiroDateText {
    /// The value of the ASCII digits at `range`, or nil if any byte is not a digit.
    static func number(_ bytes: [UInt8], _ range: Range<Int>) -> Int? {
        guard range.lowerBound >= 0, range.upperBound <= bytes.count else { return nil }
        var value = 0
        for byte in bytes[range] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// `value` in decimal, zero-padded to `width` digits (a minus sign goes first).
    static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value.magnitude)
        let padded = String(repeating: "0", count: max(0, width - digits.count)) + digits
        return value < 0 ? "-" + padded : padded
    }

    /// Days in `month` of `year` in the proleptic Gregorian calendar; 0 for an invalid month.
    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 1, 3, 5, 7, 8, 10, 12: return 31
        case 4, 6, 9, 11: return 30
        case 2:
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
            return leap ? 29 : 28
        default: return 0
        }
    }

    /// `"YYYY-MM-DDTHH:mm:ss"`.
    static func dateTime(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> String {
        pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T"
            + pad(hour, 2) + ":" + pad(minute, 2) + ":" + pad(second, 2)
    }

    /// `"HH:mm"`.
    static func hourMinute(_ hour: Int, _ minute: Int) -> String {
        pad(hour, 2) + ":" + pad(minute, 2)
    }

    /// Hour and minute of a valid `"HH:mm"` (00–23, 00–59), else nil.
    static func parseHourMinute(_ text: String) -> (hour: Int, minute: Int)? {
        let bytes = Array(text.utf8)
        guard bytes.count == 5, bytes[2] == UInt8(ascii: ":"),
              let hour = number(bytes, 0..<2), let minute = number(bytes, 3..<5),
              (0...23).contains(hour), (0...59).contains(minute)
        else { return nil }
        return (hour, minute)
    }

    /// The parts of a valid `"YYYY-MM-DDTHH:mm:ss"` naming a real moment, else nil.
    static func parseDateTime(_ text: String)
        -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int)?
    {
        let bytes = Array(text.utf8)
        guard bytes.count == 19, bytes[10] == UInt8(ascii: "T"),
              let date = KiroDate(string: String(decoding: bytes[0..<10], as: UTF8.self)),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let hour = number(bytes, 11..<13), let minute = number(bytes, 14..<16),
              let second = number(bytes, 17..<19),
              (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second)
        else { return nil }
        return (date.year, date.month, date.day, hour, minute, second)
    }
}
