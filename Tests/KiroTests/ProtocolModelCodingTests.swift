import Foundation
import Testing

@testable import Kiro

/// JSON shapes of the models: camelCase keys, `"YYYY-MM-DD"` dates, lower-case device modes.
struct ProtocolModelCodingTests {
    private func roundTrip<T: Codable & Equatable>(_ value: T) throws -> T {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try JSONDecoder().decode(T.self, from: encoder.encode(value))
    }

    private func json<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    private func keys<T: Encodable>(_ value: T) throws -> Set<String> {
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(value))
        return Set((object as? [String: Any])?.keys.map { $0 } ?? [])
    }

    @Test func everyModelRoundTrips() throws {
        let pet = PetStatus(name: "Mochi 🐱", mood: .missingYou, stage: .elder, progress: 77)
        #expect(try roundTrip(pet) == pet)
        let list = TaskList(tasks: [TaskItem(title: "a", isCompleted: true), TaskItem(title: "한", isCompleted: false)])
        #expect(try roundTrip(list) == list)
        let schedule = Schedule(events: [ScheduleEvent(title: "Standup", startTime: "09:30")])
        #expect(try roundTrip(schedule) == schedule)
        let weather = Weather(temperature: -12, condition: "snowy")
        #expect(try roundTrip(weather) == weather)
        let time = TimeSync(dateTime: "2026-01-30T09:30:00")
        #expect(try roundTrip(time) == time)
        let pack = ProtocolEncoderTests.threeTaskDayPack
        #expect(try roundTrip(pack) == pack)
        var focused = pack
        focused.deviceMode = .focus
        #expect(try roundTrip(focused) == focused)
        let page = TaskInPage(taskId: "t", taskTitle: "T", taskDescription: "D", estimatedDuration: "30min",
                              encouragement: "E", focusChallengeActive: true)
        #expect(try roundTrip(page) == page)
        #expect(try roundTrip(DeviceModeCommand(mode: .focus)) == DeviceModeCommand(mode: .focus))
        #expect(try roundTrip(KiroDate(year: 2026, month: 1, day: 30)) == KiroDate(year: 2026, month: 1, day: 30))
        let event = KiroEvent(type: .completeTask, id: "x", timestamp: 42)
        #expect(try roundTrip(event) == event)
        let battery = KiroEvent(type: .lowBattery, batteryLevel: 9)
        #expect(try roundTrip(battery) == battery)
    }

    @Test func keysAreCamelCase() throws {
        let pack = ProtocolEncoderTests.threeTaskDayPack
        #expect(try keys(pack) == [
            "date", "deviceMode", "focusChallengeEnabled", "morningGreeting", "dailySummary", "firstItem",
            "currentScheduleSummary", "companionPhrase", "topTasks", "settlement",
        ])
        #expect(try keys(pack.settlement) == [
            "tasksCompleted", "tasksTotal", "pointsEarned", "streakDays", "summaryMessage", "encouragementMessage",
        ])
        #expect(try keys(pack.topTasks[0]) == ["taskId", "title", "isCompleted", "priority"])
        #expect(try keys(TaskInPage(taskId: "", taskTitle: "", taskDescription: "", estimatedDuration: "",
                                    encouragement: "", focusChallengeActive: false))
            == ["taskId", "taskTitle", "taskDescription", "estimatedDuration", "encouragement", "focusChallengeActive"])
        #expect(try keys(PetStatus(name: "", mood: .happy, stage: .baby, progress: 0)) == ["name", "mood", "stage", "progress"])
        #expect(try keys(TaskList(tasks: [])) == ["tasks"])
        #expect(try keys(TaskItem(title: "", isCompleted: false)) == ["title", "isCompleted"])
        #expect(try keys(Schedule(events: [])) == ["events"])
        #expect(try keys(ScheduleEvent(title: "", startTime: "")) == ["title", "startTime"])
        #expect(try keys(Weather(temperature: 0, condition: "")) == ["temperature", "condition"])
        #expect(try keys(TimeSync(dateTime: "")) == ["dateTime"])
        #expect(try keys(DeviceModeCommand(mode: .focus)) == ["mode"])
    }

    @Test func dateAndModeAreStrings() throws {
        var pack = ProtocolEncoderTests.threeTaskDayPack
        let text = try json(pack)
        #expect(text.contains(#""date":"2026-01-30""#))
        #expect(text.contains(#""deviceMode":"interactive""#))
        pack.deviceMode = .focus
        #expect(try json(pack).contains(#""deviceMode":"focus""#))
        #expect(try json(DeviceModeCommand(mode: .interactive)) == #"{"mode":"interactive"}"#)
        #expect(try json(PetStatus(name: "a", mood: .missingYou, stage: .teen, progress: 1))
            == #"{"mood":"missingYou","name":"a","progress":1,"stage":"teen"}"#)
        #expect(try json(KiroEvent(type: .wheelSelect, id: "i", timestamp: 3))
            == #"{"id":"i","timestamp":3,"type":"wheel_select"}"#)
    }

    @Test func dayPackDecodesFromAppJSON() throws {
        let text = """
            {"date":"2026-01-30","deviceMode":"interactive","focusChallengeEnabled":false,
             "morningGreeting":"Good morning!","dailySummary":"You have 5 tasks today.",
             "firstItem":"9:00 Team call","currentScheduleSummary":"Next: 10:00","companionPhrase":"Keep going!",
             "topTasks":[
               {"taskId":"abcdefgh-1234-5678-90ab-cdefghijklmn","title":"Review PRs","isCompleted":false,"priority":1},
               {"taskId":"11111111-2222-3333-4444-555555555555","title":"Write report","isCompleted":true,"priority":2},
               {"taskId":"aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee","title":"Gym","isCompleted":false,"priority":3}],
             "settlement":{"tasksCompleted":3,"tasksTotal":5,"pointsEarned":50,"streakDays":7,
               "summaryMessage":"Great progress!","encouragementMessage":"See you tomorrow!"}}
            """
        let pack = try JSONDecoder().decode(DayPack.self, from: Data(text.utf8))
        #expect(pack == ProtocolEncoderTests.threeTaskDayPack)
        #expect(pack.date == KiroDate(year: 2026, month: 1, day: 30))
    }

    static let modeCases: [(String, DeviceMode)] = [
        ("\"interactive\"", .interactive), ("\"Interactive\"", .interactive), ("\"INTERACTIVE\"", .interactive),
        ("\"focus\"", .focus), ("\"Focus\"", .focus), ("\"fOcUs\"", .focus),
    ]

    @Test(arguments: modeCases)
    func deviceModeDecodesCaseInsensitively(_ text: String, _ mode: DeviceMode) throws {
        #expect(try JSONDecoder().decode(DeviceMode.self, from: Data(text.utf8)) == mode)
    }

    @Test(arguments: ["\"sleep\"", "\"\"", "0", "\"focus \""])
    func unknownDeviceModesAreRejected(_ text: String) {
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(DeviceMode.self, from: Data(text.utf8)) }
    }

    @Test(arguments: ["\"2026-02-30\"", "\"2026-1-30\"", "\"30/01/2026\"", "20260130", "\"\""])
    func invalidDatesAreRejected(_ text: String) {
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(KiroDate.self, from: Data(text.utf8)) }
    }

    @Test func kiroDateEncodesAsItsString() throws {
        #expect(try json(KiroDate(year: 2026, month: 1, day: 30)) == #""2026-01-30""#)
        #expect(try JSONDecoder().decode(KiroDate.self, from: Data(#""2026-01-30""#.utf8)) == KiroDate(year: 2026, month: 1, day: 30))
    }
}
