import Foundation

/// Why a command cannot be encoded.
///
/// Out-of-range numbers and long strings are clamped and truncated rather than rejected (§8.2);
/// only text the device could not interpret at all is an error.
public enum KiroEncodingError: Error, Hashable, Sendable, LocalizedError {
    /// A schedule event's start time is not `"HH:mm"` with hour 00–23 and minute 00–59.
    case invalidStartTime(String)
    /// A time sync is not `"YYYY-MM-DDTHH:mm:ss"` naming a real moment in 2000…2255.
    case invalidDateTime(String)
    /// A day pack's date is not a real day in 2000…2255.
    case invalidDate(String)
    /// The payload does not fit the 16-bit length field (its length in bytes).
    case payloadTooLong(Int)

    /// A sentence for the user or the log.
    public var errorDescription: String? {
        switch self {
        case .invalidStartTime(let text): "The start time \(text.debugDescription) is not a valid HH:mm time."
        case .invalidDateTime(let text): "The time \(text.debugDescription) is not a valid YYYY-MM-DDTHH:mm:ss time in 2000–2255."
        case .invalidDate(let text): "The date \(text.debugDescription) is not a valid day in 2000–2255."
        case .payloadTooLong(let count): "The payload is \(count) bytes; at most 65535 fit the length field."
        }
    }
}

/// An app → device command (protocol §4).
///
/// A packet is `[type][payload length, u16 big-endian][payload]`, optionally followed by a
/// CRC-16/CCITT-FALSE of the payload (Appendix B; off by default in v1.1).
public enum KiroCommand: Sendable, Hashable {
    /// `0x01`: pet state.
    case petStatus(PetStatus)
    /// `0x02`: today's tasks.
    case taskList(TaskList)
    /// `0x03`: today's calendar events.
    case schedule(Schedule)
    /// `0x04`: current weather.
    case weather(Weather)
    /// `0x05`: clock synchronisation.
    case time(TimeSync)
    /// `0x10`: the complete daily package.
    case dayPack(DayPack)
    /// `0x11`: the task detail page.
    case taskInPage(TaskInPage)
    /// `0x12`: the operation mode.
    case deviceMode(DeviceMode)

    /// The command's type byte.
    public var type: BLEDataType {
        switch self {
        case .petStatus: .petStatus
        case .taskList: .taskList
        case .schedule: .schedule
        case .weather: .weather
        case .time: .time
        case .dayPack: .dayPack
        case .taskInPage: .taskInPage
        case .deviceMode: .deviceMode
        }
    }

    /// The payload laid out as in §4, with strings truncated and integers clamped.
    ///
    /// - Throws: ``KiroEncodingError`` for an invalid start time, time or date.
    public func payload() throws -> Data {
        Data(try payloadBytes())
    }

    /// The whole packet: `[type][length u16 BE][payload]`, plus the payload's CRC-16/CCITT-FALSE
    /// (big-endian) when `checksum` is true.
    ///
    /// - Throws: ``KiroEncodingError``.
    public func packet(checksum: Bool = false) throws -> Data {
        let body = try payloadBytes()
        guard body.count <= KiroLimits.maxPayloadLength else {
            throw KiroEncodingError.payloadTooLong(body.count)
        }
        var writer = KiroByteWriter()
        writer.u8(type.rawValue)
        writer.u16(UInt16(body.count))
        writer.raw(body)
        if checksum { writer.u16(CRC16.ccittFalse(bytes: body)) }
        return Data(writer.bytes)
    }

    private func payloadBytes() throws -> [UInt8] {
        var w = KiroByteWriter()
        switch self {
        case .petStatus(let pet):
            w.string(pet.name, maxCharacters: KiroLimits.petNameCharacters)
            w.u8(pet.mood.byte)
            w.u8(pet.stage.byte)
            w.u8(Self.byte(pet.progress, KiroLimits.progressRange))

        case .taskList(let list):
            let tasks = list.tasks.prefix(KiroLimits.maxTasks)
            w.u8(UInt8(tasks.count))
            for task in tasks {
                w.string(task.title, maxCharacters: KiroLimits.taskTitleCharacters)
                w.bool(task.isCompleted)
            }

        case .schedule(let schedule):
            let events = schedule.events.prefix(KiroLimits.maxScheduleEvents)
            w.u8(UInt8(events.count))
            for event in events {
                guard KiroDateText.parseHourMinute(event.startTime) != nil else {
                    throw KiroEncodingError.invalidStartTime(event.startTime)
                }
                w.string(event.title, maxCharacters: KiroLimits.eventTitleCharacters)
                // Validated above: exactly five ASCII bytes.
                w.raw(event.startTime.utf8)
            }

        case .weather(let weather):
            let temperature = Int8(Self.clamp(weather.temperature, KiroLimits.temperatureRange))
            w.u8(UInt8(bitPattern: temperature))
            w.string(weather.condition, maxCharacters: KiroLimits.weatherConditionCharacters)

        case .time(let time):
            guard let t = KiroDateText.parseDateTime(time.dateTime),
                  KiroLimits.yearRange.contains(t.year)
            else { throw KiroEncodingError.invalidDateTime(time.dateTime) }
            for part in [t.year - 2000, t.month, t.day, t.hour, t.minute, t.second] {
                w.u8(UInt8(part))
            }

        case .dayPack(let pack):
            let date = pack.date
            guard date.isValid, KiroLimits.yearRange.contains(date.year) else {
                throw KiroEncodingError.invalidDate(date.description)
            }
            w.u8(UInt8(date.year - 2000))
            w.u8(UInt8(date.month))
            w.u8(UInt8(date.day))
            w.u8(pack.deviceMode.byte)
            w.bool(pack.focusChallengeEnabled)
            w.string(pack.morningGreeting, maxCharacters: KiroLimits.morningGreetingCharacters)
            w.string(pack.dailySummary, maxCharacters: KiroLimits.dailySummaryCharacters)
            w.string(pack.firstItem, maxCharacters: KiroLimits.firstItemCharacters)
            w.string(pack.currentScheduleSummary, maxCharacters: KiroLimits.currentScheduleSummaryCharacters)
            w.string(pack.companionPhrase, maxCharacters: KiroLimits.companionPhraseCharacters)
            let tasks = pack.topTasks.prefix(KiroLimits.maxTopTasks)
            w.u8(UInt8(tasks.count))
            for task in tasks {
                w.string(task.taskId, maxCharacters: KiroLimits.taskIDCharacters)
                w.string(task.title, maxCharacters: KiroLimits.taskTitleCharacters)
                w.bool(task.isCompleted)
                w.u8(Self.byte(task.priority, KiroLimits.priorityRange))
            }
            let settlement = pack.settlement
            w.u8(Self.byte(settlement.tasksCompleted, KiroLimits.countRange))
            w.u8(Self.byte(settlement.tasksTotal, KiroLimits.countRange))
            w.u16(UInt16(Self.clamp(settlement.pointsEarned, KiroLimits.pointsRange)))
            w.u8(Self.byte(settlement.streakDays, KiroLimits.countRange))
            w.string(settlement.summaryMessage, maxCharacters: KiroLimits.settlementMessageCharacters)
            w.string(settlement.encouragementMessage, maxCharacters: KiroLimits.settlementMessageCharacters)

        case .taskInPage(let page):
            w.string(page.taskId, maxCharacters: KiroLimits.taskIDCharacters)
            w.string(page.taskTitle, maxCharacters: KiroLimits.taskInPageTitleCharacters)
            w.string(page.taskDescription, maxCharacters: KiroLimits.taskDescriptionCharacters)
            w.string(page.estimatedDuration, maxCharacters: KiroLimits.estimatedDurationCharacters)
            w.string(page.encouragement, maxCharacters: KiroLimits.taskEncouragementCharacters)
            w.bool(page.focusChallengeActive)

        case .deviceMode(let mode):
            w.u8(mode.byte)
        }
        return w.bytes
    }

    private static func clamp(_ value: Int, _ range: ClosedRange<Int>) -> Int {
        min(max(value, range.lowerBound), range.upperBound)
    }

    /// Clamps into a range that lies within 0…255 and converts.
    private static func byte(_ value: Int, _ range: ClosedRange<Int>) -> UInt8 {
        UInt8(clamp(value, range))
    }
}

// MARK: - Decoding (the device's side, for the emulator)

extension KiroCommand {
    /// Parses a payload the way the device does: the inverse of ``payload()``.
    ///
    /// Strict, because the emulator uses it to catch client bugs: anything §4 does not allow
    /// (a count above its maximum, progress above 100, a priority outside 1…3, an unknown mood
    /// letter, a boolean other than 0/1, invalid UTF-8, a bad date or `"HH:mm"`, missing or
    /// extra bytes) is ``KiroPacketError/malformed(_:)``. String lengths are not checked against
    /// their character limits, because older clients may not have truncated.
    ///
    /// - Throws: ``KiroPacketError/unknownType(_:)`` or ``KiroPacketError/malformed(_:)``.
    public static func decode(type: UInt8, payload: Data) throws -> KiroCommand {
        guard let kind = BLEDataType(rawValue: type) else { throw KiroPacketError.unknownType(type) }
        var r = KiroByteReader(Array(payload))
        let command: KiroCommand
        switch kind {
        case .petStatus:
            let name = try r.string("pet name")
            let moodByte = try r.u8("mood")
            guard let mood = PetMood(byte: moodByte) else { throw KiroPacketError.malformed("unknown mood byte \(moodByte)") }
            let stageByte = try r.u8("stage")
            guard let stage = PetStage(byte: stageByte) else { throw KiroPacketError.malformed("unknown stage byte \(stageByte)") }
            let progress = try ranged(r.u8("progress"), KiroLimits.progressRange, "progress")
            command = .petStatus(PetStatus(name: name, mood: mood, stage: stage, progress: progress))

        case .taskList:
            let count = try ranged(r.u8("task count"), 0...KiroLimits.maxTasks, "task count")
            var tasks: [TaskItem] = []
            for index in 0..<count {
                let title = try r.string("task \(index) title")
                tasks.append(TaskItem(title: title, isCompleted: try r.bool("task \(index) completion")))
            }
            command = .taskList(TaskList(tasks: tasks))

        case .schedule:
            let count = try ranged(r.u8("event count"), 0...KiroLimits.maxScheduleEvents, "event count")
            var events: [ScheduleEvent] = []
            for index in 0..<count {
                let title = try r.string("event \(index) title")
                let raw = try r.raw(5, "event \(index) start time")
                let time = String(decoding: raw, as: UTF8.self)
                guard KiroDateText.parseHourMinute(time) != nil else {
                    throw KiroPacketError.malformed("event \(index) start time \(time.debugDescription) is not HH:mm")
                }
                events.append(ScheduleEvent(title: title, startTime: time))
            }
            command = .schedule(Schedule(events: events))

        case .weather:
            let temperature = Int(Int8(bitPattern: try r.u8("temperature")))
            command = .weather(Weather(temperature: temperature, condition: try r.string("condition")))

        case .time:
            var parts: [Int] = []
            for field in ["year", "month", "day", "hour", "minute", "second"] {
                parts.append(Int(try r.u8(field)))
            }
            let text = KiroDateText.dateTime(
                year: 2000 + parts[0], month: parts[1], day: parts[2],
                hour: parts[3], minute: parts[4], second: parts[5])
            guard KiroDateText.parseDateTime(text) != nil else {
                throw KiroPacketError.malformed("\(text) is not a valid time")
            }
            command = .time(TimeSync(dateTime: text))

        case .dayPack:
            let date = KiroDate(
                year: 2000 + Int(try r.u8("year")), month: Int(try r.u8("month")), day: Int(try r.u8("day")))
            guard date.isValid else { throw KiroPacketError.malformed("\(date) is not a valid date") }
            let mode = try deviceMode(r.u8("device mode"))
            let focus = try r.bool("focus challenge flag")
            let greeting = try r.string("morning greeting")
            let summary = try r.string("daily summary")
            let firstItem = try r.string("first item")
            let scheduleSummary = try r.string("current schedule summary")
            let companion = try r.string("companion phrase")
            let count = try ranged(r.u8("top task count"), 0...KiroLimits.maxTopTasks, "top task count")
            var tasks: [TopTask] = []
            for index in 0..<count {
                let id = try r.string("top task \(index) id")
                let title = try r.string("top task \(index) title")
                let done = try r.bool("top task \(index) completion")
                let priority = try ranged(r.u8("top task \(index) priority"), KiroLimits.priorityRange, "priority")
                tasks.append(TopTask(taskId: id, title: title, isCompleted: done, priority: priority))
            }
            let completed = Int(try r.u8("tasks completed"))
            let total = Int(try r.u8("tasks total"))
            let points = Int(try r.u16("points earned"))
            let streak = Int(try r.u8("streak days"))
            let settlement = Settlement(
                tasksCompleted: completed, tasksTotal: total, pointsEarned: points, streakDays: streak,
                summaryMessage: try r.string("summary message"),
                encouragementMessage: try r.string("encouragement message"))
            command = .dayPack(DayPack(
                date: date, deviceMode: mode, focusChallengeEnabled: focus,
                morningGreeting: greeting, dailySummary: summary, firstItem: firstItem,
                currentScheduleSummary: scheduleSummary, companionPhrase: companion,
                topTasks: tasks, settlement: settlement))

        case .taskInPage:
            let id = try r.string("task id")
            let title = try r.string("task title")
            let description = try r.string("task description")
            let duration = try r.string("estimated duration")
            let encouragement = try r.string("encouragement")
            let active = try r.bool("focus challenge flag")
            command = .taskInPage(TaskInPage(
                taskId: id, taskTitle: title, taskDescription: description,
                estimatedDuration: duration, encouragement: encouragement, focusChallengeActive: active))

        case .deviceMode:
            command = .deviceMode(try deviceMode(r.u8("device mode")))
        }
        try r.finish()
        return command
    }

    /// Parses one whole packet, `[type][length u16 BE][payload]` plus the CRC when `checksum`.
    ///
    /// - Throws: ``KiroPacketError``: `malformed` when the length field disagrees with the
    ///   packet's size, `checksumMismatch` for a bad CRC, or whatever the payload's decoding throws.
    public static func decode(packet: Data, checksum: Bool = false) throws -> KiroCommand {
        let bytes = Array(packet)
        let trailer = checksum ? 2 : 0
        guard bytes.count >= 3 + trailer else {
            throw KiroPacketError.malformed("a \(bytes.count)-byte packet is shorter than its header")
        }
        let length = Int(bytes[1]) << 8 | Int(bytes[2])
        guard bytes.count == 3 + length + trailer else {
            throw KiroPacketError.malformed("the header says \(length) payload bytes but the packet has \(bytes.count - 3 - trailer)")
        }
        let payload = bytes[3..<3 + length]
        if checksum {
            let sent = UInt16(bytes[3 + length]) << 8 | UInt16(bytes[4 + length])
            guard CRC16.ccittFalse(bytes: payload) == sent else { throw KiroPacketError.checksumMismatch }
        }
        return try decode(type: bytes[0], payload: Data(payload))
    }

    private static func ranged(_ byte: UInt8, _ range: ClosedRange<Int>, _ field: String) throws -> Int {
        let value = Int(byte)
        guard range.contains(value) else {
            throw KiroPacketError.malformed("\(field) \(value) is outside \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    private static func deviceMode(_ byte: UInt8) throws -> DeviceMode {
        guard let mode = DeviceMode(byte: byte) else { throw KiroPacketError.malformed("unknown device mode \(byte)") }
        return mode
    }
}
