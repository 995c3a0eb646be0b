import Foundation

/// The type byte of an app → device command (protocol §4.1, Appendix A.1).
public enum BLEDataType: UInt8, Sendable, CaseIterable {
    /// Pet state (§4.2).
    case petStatus = 0x01
    /// Today's task list (§4.3).
    case taskList = 0x02
    /// Today's calendar events (§4.4).
    case schedule = 0x03
    /// Current weather (§4.5).
    case weather = 0x04
    /// Clock synchronisation (§4.6).
    case time = 0x05
    /// The complete daily package (§4.7).
    case dayPack = 0x10
    /// The task detail page (§4.8).
    case taskInPage = 0x11
    /// The operation mode (§4.9).
    case deviceMode = 0x12
}

/// The kind of a device → app event (protocol §5.2, Appendix A.2).
///
/// The raw value is the snake-case name used in JSON logs; ``code`` is the byte on the wire.
public enum EventLogType: String, Codable, Sendable, CaseIterable {
    /// `0x10`: the user opened a task's detail page (a focus session starts).
    case enterTaskIn = "enter_task_in"
    /// `0x11`: the user completed a task.
    case completeTask = "complete_task"
    /// `0x12`: the user skipped a task.
    case skipTask = "skip_task"
    /// `0x13`: the selected task in the overview changed.
    case selectedTaskChanged = "selected_task_changed"
    /// `0x14`: the wheel button confirmed a selection.
    case wheelSelect = "wheel_select"
    /// `0x15`: the user opened a calendar event's detail.
    case viewEventDetail = "view_event_detail"
    /// `0x20`: the device asks for fresh data.
    case requestRefresh = "request_refresh"
    /// `0x30`: the device woke up.
    case deviceWake = "device_wake"
    /// `0x31`: the device is going to sleep.
    case deviceSleep = "device_sleep"
    /// `0x40`: the battery is low.
    case lowBattery = "low_battery"

    /// The event's type byte.
    public var code: UInt8 {
        switch self {
        case .enterTaskIn: 0x10
        case .completeTask: 0x11
        case .skipTask: 0x12
        case .selectedTaskChanged: 0x13
        case .wheelSelect: 0x14
        case .viewEventDetail: 0x15
        case .requestRefresh: 0x20
        case .deviceWake: 0x30
        case .deviceSleep: 0x31
        case .lowBattery: 0x40
        }
    }

    /// The event type with this type byte, or nil for a byte the protocol does not define.
    public init?(code: UInt8) {
        guard let match = Self.allCases.first(where: { $0.code == code }) else { return nil }
        self = match
    }

    /// Whether the payload carries an identifier (task, item or calendar event id): `0x10`–`0x15`.
    public var carriesID: Bool {
        switch self {
        case .enterTaskIn, .completeTask, .skipTask, .selectedTaskChanged, .wheelSelect, .viewEventDetail: true
        case .requestRefresh, .deviceWake, .deviceSleep, .lowBattery: false
        }
    }

    /// Whether the spec gives the event a Unix timestamp (§5.3–5.5). Legacy firmware may omit it.
    public var carriesTimestamp: Bool {
        switch self {
        case .enterTaskIn, .completeTask, .skipTask: true
        default: false
        }
    }
}

/// The device's operation mode (protocol §4.9, Appendix A.3).
///
/// The raw value keeps the spec's capitalised names. JSON is decoded case-insensitively and
/// encoded in lower case, because the app's day model stores `"interactive"` / `"focus"`.
public enum DeviceMode: String, Codable, Sendable, CaseIterable {
    /// Full interactive display (`0x00`).
    case interactive = "Interactive"
    /// Simplified display with fewer distractions (`0x01`).
    case focus = "Focus"

    /// The mode byte on the wire.
    public var byte: UInt8 {
        switch self {
        case .interactive: 0x00
        case .focus: 0x01
        }
    }

    /// The mode with this byte, or nil for anything but `0x00` and `0x01`.
    public init?(byte: UInt8) {
        switch byte {
        case 0x00: self = .interactive
        case 0x01: self = .focus
        default: return nil
        }
    }

    /// Decodes `"interactive"`, `"Interactive"`, `"FOCUS"` and so on.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        switch text.lowercased() {
        case "interactive": self = .interactive
        case "focus": self = .focus
        default:
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "Not a Kiro device mode: \(text)")
        }
    }

    /// Encodes the lower-case name (`"interactive"` or `"focus"`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue.lowercased())
    }
}

/// The field limits of protocol §4 and the clamping ranges settled in firmware-facts.
///
/// String limits are in characters (Swift `Character`s); every encoded string is also capped at
/// 255 bytes because its length prefix is one byte.
public enum KiroLimits {
    /// Pet name (§4.2).
    public static let petNameCharacters = 20
    /// Task title in the task list and in a top task (§4.3, §4.7).
    public static let taskTitleCharacters = 30
    /// Calendar event title (§4.4).
    public static let eventTitleCharacters = 25
    /// Weather condition (§4.5).
    public static let weatherConditionCharacters = 15
    /// Morning greeting (§4.7).
    public static let morningGreetingCharacters = 50
    /// Daily summary (§4.7).
    public static let dailySummaryCharacters = 60
    /// First item preview (§4.7).
    public static let firstItemCharacters = 40
    /// Current schedule summary (§4.7).
    public static let currentScheduleSummaryCharacters = 30
    /// Companion phrase (§4.7).
    public static let companionPhraseCharacters = 40
    /// Task identifier (a UUID string) in a top task and on the task page (§4.7, §4.8).
    public static let taskIDCharacters = 36
    /// Settlement summary and encouragement messages (§4.7).
    public static let settlementMessageCharacters = 50
    /// Task page title (§4.8).
    public static let taskInPageTitleCharacters = 40
    /// Task page description (§4.8).
    public static let taskDescriptionCharacters = 100
    /// Task page estimated duration, such as `"30min"` (§4.8).
    public static let estimatedDurationCharacters = 10
    /// Task page encouragement (§4.8).
    public static let taskEncouragementCharacters = 50

    /// Most tasks a task list carries; extra tasks are dropped (§4.3).
    public static let maxTasks = 10
    /// Most calendar events a schedule carries; extra events are dropped (§4.4).
    public static let maxScheduleEvents = 8
    /// Most top tasks a day pack carries; extra tasks are dropped (§4.7).
    public static let maxTopTasks = 3

    /// Pet progress in percent.
    public static let progressRange: ClosedRange<Int> = 0...100
    /// Top task priority.
    public static let priorityRange: ClosedRange<Int> = 1...3
    /// Temperature in °C (a signed byte).
    public static let temperatureRange: ClosedRange<Int> = -128...127
    /// Settlement task counts and streak days (one byte each).
    public static let countRange: ClosedRange<Int> = 0...255
    /// Settlement points (two bytes).
    public static let pointsRange: ClosedRange<Int> = 0...65535
    /// Battery level in percent.
    public static let batteryLevelRange: ClosedRange<UInt8> = 0...100
    /// Years a one-byte `year - 2000` field can carry.
    public static let yearRange: ClosedRange<Int> = 2000...2255
    /// Longest payload the 16-bit length field can describe.
    public static let maxPayloadLength = 65535
}
