import Foundation
import Testing

@testable import Kiro

/// Integers clamp and lists cap as firmware-facts settles; strings truncate to their §4 limits.
struct ProtocolClampingTests {
    static let progressCases: [(Int, UInt8)] = [
        (Int.min, 0), (-5, 0), (-1, 0), (0, 0), (1, 1), (99, 99), (100, 100), (101, 100), (255, 100), (Int.max, 100),
    ]

    @Test(arguments: progressCases)
    func progressClampsTo0Through100(_ progress: Int, _ expected: UInt8) throws {
        let payload = try KiroCommand.petStatus(PetStatus(name: "P", mood: .happy, stage: .baby, progress: progress)).payload()
        #expect(payload == Data([0x01, 0x50, 0x48, 0x42, expected]))
    }

    static let priorityCases: [(Int, UInt8)] = [
        (Int.min, 1), (-3, 1), (0, 1), (1, 1), (2, 2), (3, 3), (4, 3), (Int.max, 3),
    ]

    @Test(arguments: priorityCases)
    func priorityClampsTo1Through3(_ priority: Int, _ expected: UInt8) throws {
        var pack = ProtocolEncoderTests.threeTaskDayPack
        pack.topTasks = [TopTask(taskId: "i", title: "t", isCompleted: true, priority: priority)]
        let payload = Array(try KiroCommand.dayPack(pack).payload())
        // After the five page strings: count, then id, title, completion, priority.
        let taskStart = 5 + 14 + 24 + 15 + 12 + 12
        #expect(Array(payload[taskStart..<taskStart + 7]) == [0x01, 0x01, 0x69, 0x01, 0x74, 0x01, expected])
    }

    static let temperatureCases: [(Int, UInt8)] = [
        (Int.min, 0x80), (-200, 0x80), (-129, 0x80), (-128, 0x80), (-1, 0xFF), (0, 0x00), (127, 0x7F),
        (128, 0x7F), (200, 0x7F), (Int.max, 0x7F),
    ]

    @Test(arguments: temperatureCases)
    func temperatureClampsToASignedByte(_ temperature: Int, _ expected: UInt8) throws {
        let payload = try KiroCommand.weather(Weather(temperature: temperature, condition: "")).payload()
        #expect(payload == Data([expected, 0x00]))
    }

    @Test func settlementFieldsClamp() throws {
        var pack = ProtocolEncoderTests.threeTaskDayPack
        pack.topTasks = []
        pack.settlement = Settlement(
            tasksCompleted: 300, tasksTotal: -1, pointsEarned: 70_000, streakDays: 1_000,
            summaryMessage: "", encouragementMessage: "")
        var payload = Array(try KiroCommand.dayPack(pack).payload())
        #expect(Array(payload.suffix(8)) == [0x00, 0xFF, 0x00, 0xFF, 0xFF, 0xFF, 0x00, 0x00])

        pack.settlement = Settlement(
            tasksCompleted: -7, tasksTotal: 256, pointsEarned: -10, streakDays: -1,
            summaryMessage: "", encouragementMessage: "")
        payload = Array(try KiroCommand.dayPack(pack).payload())
        #expect(Array(payload.suffix(7)) == [0x00, 0xFF, 0x00, 0x00, 0x00, 0x00, 0x00])

        pack.settlement = Settlement(
            tasksCompleted: 255, tasksTotal: 255, pointsEarned: 65_535, streakDays: 255,
            summaryMessage: "", encouragementMessage: "")
        payload = Array(try KiroCommand.dayPack(pack).payload())
        #expect(Array(payload.suffix(7)) == [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00])

        pack.settlement.pointsEarned = 258
        payload = Array(try KiroCommand.dayPack(pack).payload())
        #expect(Array(payload.suffix(5).prefix(2)) == [0x01, 0x02])
    }

    @Test func taskListKeepsTheFirstTen() throws {
        let tasks = (0..<12).map { TaskItem(title: "\($0)", isCompleted: $0 % 2 == 0) }
        let payload = Array(try KiroCommand.taskList(TaskList(tasks: tasks)).payload())
        var expected: [UInt8] = [10]
        for index in 0..<10 { expected += protocolLengthPrefixed("\(index)") + [index % 2 == 0 ? 1 : 0] }
        #expect(payload == expected)
    }

    @Test func scheduleKeepsTheFirstEightAndIgnoresTheRest() throws {
        var events = (0..<8).map { ScheduleEvent(title: "e\($0)", startTime: "1\($0):00") }
        // Dropped events are not sent, so their content cannot make the command fail.
        events.append(ScheduleEvent(title: "late", startTime: "not a time"))
        let payload = Array(try KiroCommand.schedule(Schedule(events: events)).payload())
        var expected: [UInt8] = [8]
        for index in 0..<8 { expected += protocolLengthPrefixed("e\(index)") + Array("1\(index):00".utf8) }
        #expect(payload == expected)
    }

    @Test func dayPackKeepsTheFirstThreeTopTasks() throws {
        var pack = ProtocolEncoderTests.threeTaskDayPack
        pack.topTasks += [
            TopTask(taskId: "x4", title: "Fourth", isCompleted: false, priority: 1),
            TopTask(taskId: "x5", title: "Fifth", isCompleted: false, priority: 1),
        ]
        #expect(try KiroCommand.dayPack(pack).payload() == ProtocolEncoderTests.threeTaskDayPackPayload)
    }

    /// Every string field, its §4 limit, and a command that carries `text` in that field only.
    static let stringFields: [(name: String, limit: Int, build: @Sendable (String) -> KiroCommand)] = {
        let pack = ProtocolEncoderTests.threeTaskDayPack
        let page = TaskInPage(taskId: "", taskTitle: "", taskDescription: "", estimatedDuration: "",
                              encouragement: "", focusChallengeActive: false)
        func packWith(_ change: @escaping @Sendable (inout DayPack, String) -> Void) -> @Sendable (String) -> KiroCommand {
            { text in var copy = pack; change(&copy, text); return .dayPack(copy) }
        }
        func pageWith(_ change: @escaping @Sendable (inout TaskInPage, String) -> Void) -> @Sendable (String) -> KiroCommand {
            { text in var copy = page; change(&copy, text); return .taskInPage(copy) }
        }
        return [
            ("pet name", 20, { .petStatus(PetStatus(name: $0, mood: .happy, stage: .baby, progress: 0)) }),
            ("task title", 30, { .taskList(TaskList(tasks: [TaskItem(title: $0, isCompleted: false)])) }),
            ("event title", 25, { .schedule(Schedule(events: [ScheduleEvent(title: $0, startTime: "10:00")])) }),
            ("condition", 15, { .weather(Weather(temperature: 0, condition: $0)) }),
            ("greeting", 50, packWith { $0.morningGreeting = $1 }),
            ("summary", 60, packWith { $0.dailySummary = $1 }),
            ("first item", 40, packWith { $0.firstItem = $1 }),
            ("schedule summary", 30, packWith { $0.currentScheduleSummary = $1 }),
            ("companion", 40, packWith { $0.companionPhrase = $1 }),
            ("top task id", 36, packWith { $0.topTasks[0].taskId = $1 }),
            ("top task title", 30, packWith { $0.topTasks[1].title = $1 }),
            ("settlement summary", 50, packWith { $0.settlement.summaryMessage = $1 }),
            ("settlement encouragement", 50, packWith { $0.settlement.encouragementMessage = $1 }),
            ("page task id", 36, pageWith { $0.taskId = $1 }),
            ("page title", 40, pageWith { $0.taskTitle = $1 }),
            ("page description", 100, pageWith { $0.taskDescription = $1 }),
            ("page duration", 10, pageWith { $0.estimatedDuration = $1 }),
            ("page encouragement", 50, pageWith { $0.encouragement = $1 }),
        ]
    }()

    @Test func everyStringFieldTruncatesToItsLimit() throws {
        for field in Self.stringFields {
            let atLimit = String(repeating: "x", count: field.limit)
            let full = try field.build(atLimit).payload()
            let over = try field.build(atLimit + "yyyy").payload()
            // Extra characters past the limit change nothing on the wire.
            #expect(over == full, "\(field.name)")
            let shorter = try field.build(String(atLimit.dropLast())).payload()
            #expect(shorter.count == full.count - 1, "\(field.name)")
            // The field reads back at exactly its limit.
            let decoded = try KiroCommand.decode(type: field.build("").type.rawValue, payload: over)
            #expect(decoded == field.build(atLimit), "\(field.name)")
        }
    }

    @Test func limitsAreTheSpecsLimits() {
        #expect(Self.stringFields.map(\.limit) == [20, 30, 25, 15, 50, 60, 40, 30, 40, 36, 30, 50, 50, 36, 40, 100, 10, 50])
        #expect(KiroLimits.maxTasks == 10)
        #expect(KiroLimits.maxScheduleEvents == 8)
        #expect(KiroLimits.maxTopTasks == 3)
    }
}
