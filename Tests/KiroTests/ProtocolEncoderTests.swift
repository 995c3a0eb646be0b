import Foundation
import Testing
import TetherCore

@testable import Kiro

/// Byte-exact vectors for every command (protocol §4), written out by hand.
struct ProtocolEncoderTests {
    @Test func constantsMatchTheSpec() {
        #expect(KiroBLEConstants.serviceUUID.uuidString == "FFE0")
        #expect(KiroBLEConstants.serviceUUID.longString == "0000FFE0-0000-1000-8000-00805F9B34FB")
        #expect(KiroBLEConstants.writeCharacteristic
            == CharacteristicPath(service: BluetoothUUID(UInt16(0xFFE0)), characteristic: BluetoothUUID(UInt16(0xFFE1))))
        #expect(KiroBLEConstants.notifyCharacteristic
            == CharacteristicPath(service: BluetoothUUID(UInt16(0xFFE0)), characteristic: BluetoothUUID(UInt16(0xFFE2))))
        #expect(KiroBLEConstants.deviceName == "Kiro")
        #expect(KiroBLEConstants.scanTimeout == .seconds(10))
        #expect(KiroBLEConstants.connectionTimeout == .seconds(15))
        #expect(KiroBLEConstants.scanRetryDelays == [.seconds(2), .seconds(4), .seconds(8)])
        #expect(KiroBLEConstants.connectRetryDelays == [.seconds(1), .seconds(2), .seconds(4)])
        #expect(KiroBLEConstants.writeRetryDelays == [.milliseconds(500), .seconds(1)])
    }

    @Test func typeBytesMatchAppendixA() {
        let commands: [(BLEDataType, UInt8)] = [
            (.petStatus, 0x01), (.taskList, 0x02), (.schedule, 0x03), (.weather, 0x04),
            (.time, 0x05), (.dayPack, 0x10), (.taskInPage, 0x11), (.deviceMode, 0x12),
        ]
        for (type, byte) in commands { #expect(type.rawValue == byte) }
        let events: [(EventLogType, UInt8, String)] = [
            (.enterTaskIn, 0x10, "enter_task_in"), (.completeTask, 0x11, "complete_task"),
            (.skipTask, 0x12, "skip_task"), (.selectedTaskChanged, 0x13, "selected_task_changed"),
            (.wheelSelect, 0x14, "wheel_select"), (.viewEventDetail, 0x15, "view_event_detail"),
            (.requestRefresh, 0x20, "request_refresh"), (.deviceWake, 0x30, "device_wake"),
            (.deviceSleep, 0x31, "device_sleep"), (.lowBattery, 0x40, "low_battery"),
        ]
        #expect(events.count == EventLogType.allCases.count)
        for (type, code, name) in events {
            #expect(type.code == code)
            #expect(type.rawValue == name)
            #expect(EventLogType(code: code) == type)
        }
        let known = Set(events.map(\.1))
        for byte in UInt8.min...UInt8.max where !known.contains(byte) {
            #expect(EventLogType(code: byte) == nil)
        }
        #expect(DeviceMode.interactive.rawValue == "Interactive")
        #expect(DeviceMode.focus.rawValue == "Focus")
        #expect(DeviceMode.interactive.byte == 0x00)
        #expect(DeviceMode.focus.byte == 0x01)
        #expect(DeviceMode(byte: 0x02) == nil)
    }

    @Test func moodAndStageLetters() {
        #expect(PetMood.allCases.map(\.byte) == Array("HEFSM".utf8))
        #expect(PetStage.allCases.map(\.byte) == Array("BCTAE".utf8))
        for mood in PetMood.allCases { #expect(PetMood(byte: mood.byte) == mood) }
        for stage in PetStage.allCases { #expect(PetStage(byte: stage.byte) == stage) }
        #expect(PetMood(byte: UInt8(ascii: "h")) == nil)
        #expect(PetStage(byte: UInt8(ascii: "X")) == nil)
    }

    @Test func petStatus() throws {
        let command = KiroCommand.petStatus(PetStatus(name: "Mochi", mood: .missingYou, stage: .teen, progress: 42))
        #expect(command.type == .petStatus)
        #expect(try command.payload() == protocolHex("05 4D 6F 63 68 69  4D  54  2A"))
        #expect(try command.packet() == protocolHex("01 00 09  05 4D 6F 63 68 69 4D 54 2A"))
    }

    @Test func taskList() throws {
        let command = KiroCommand.taskList(TaskList(tasks: [
            TaskItem(title: "Write", isCompleted: false),
            TaskItem(title: "Gym", isCompleted: true),
        ]))
        #expect(try command.packet() == protocolHex("""
            02 00 0D
            02
            05 57 72 69 74 65  00
            03 47 79 6D  01
            """))
        #expect(try KiroCommand.taskList(TaskList(tasks: [])).packet() == protocolHex("02 00 01 00"))
    }

    @Test func schedule() throws {
        let command = KiroCommand.schedule(Schedule(events: [
            ScheduleEvent(title: "Standup", startTime: "09:30"),
            ScheduleEvent(title: "Lunch", startTime: "12:00"),
        ]))
        #expect(try command.packet() == protocolHex("""
            03 00 19
            02
            07 53 74 61 6E 64 75 70  30 39 3A 33 30
            05 4C 75 6E 63 68        31 32 3A 30 30
            """))
    }

    @Test func weather() throws {
        #expect(try KiroCommand.weather(Weather(temperature: -5, condition: "sunny")).packet()
            == protocolHex("04 00 07  FB  05 73 75 6E 6E 79"))
        #expect(try KiroCommand.weather(Weather(temperature: 23, condition: "")).packet()
            == protocolHex("04 00 02  17  00"))
    }

    /// §7.3, byte for byte.
    @Test func timeMatchesTheSpecExample() throws {
        let command = KiroCommand.time(TimeSync(dateTime: "2026-01-30T09:30:00"))
        #expect(try command.packet() == protocolHex("05 00 06 1A 01 1E 09 1E 00"))
        #expect(try command.payload() == protocolHex("1A 01 1E 09 1E 00"))
    }

    @Test func timeAtTheEdgesOfTheYearByte() throws {
        #expect(try KiroCommand.time(TimeSync(dateTime: "2000-01-01T00:00:00")).payload()
            == protocolHex("00 01 01 00 00 00"))
        #expect(try KiroCommand.time(TimeSync(dateTime: "2255-12-31T23:59:59")).payload()
            == protocolHex("FF 0C 1F 17 3B 3B"))
        #expect(try KiroCommand.time(TimeSync(dateTime: "2028-02-29T12:00:00")).payload()
            == protocolHex("1C 02 1D 0C 00 00"))
    }

    @Test func timeSyncFromADate() {
        // 2026-01-30T09:30:00Z is 1769765400 (0x697C7A18).
        let instant = Date(timeIntervalSince1970: 1_769_765_400)
        #expect(TimeSync(date: instant, timeZone: TimeZone(secondsFromGMT: 0)!).dateTime == "2026-01-30T09:30:00")
        #expect(TimeSync(date: instant, timeZone: TimeZone(secondsFromGMT: 9 * 3600)!).dateTime == "2026-01-30T18:30:00")
        #expect(TimeSync(date: instant, timeZone: TimeZone(secondsFromGMT: -10 * 3600)!).dateTime == "2026-01-29T23:30:00")
        #expect(TimeSync(date: instant.addingTimeInterval(0.9), timeZone: TimeZone(secondsFromGMT: 0)!).dateTime
            == "2026-01-30T09:30:00")
        #expect(KiroDate(date: instant, timeZone: TimeZone(secondsFromGMT: -10 * 3600)!) == KiroDate(year: 2026, month: 1, day: 29))
    }

    @Test(arguments: [
        "", "2026-01-30 09:30:00", "2026-01-30T09:30", "2026-1-30T09:30:00", "2026-01-30T9:30:00",
        "2026-01-30T24:00:00", "2026-01-30T09:60:00", "2026-01-30T09:30:60", "2026-02-29T09:30:00",
        "2026-13-01T00:00:00", "2026-00-01T00:00:00", "2026-01-00T00:00:00", "2026-04-31T00:00:00",
        "1999-12-31T23:59:59", "2256-01-01T00:00:00", "2026-01-30T09:30:00Z", "2026-01-30t09:30:00",
        "2026-01-30T09:30:0a", "２０２６-01-30T09:30:00",
    ])
    func invalidDateTimeIsRejected(_ text: String) {
        #expect(throws: KiroEncodingError.invalidDateTime(text)) {
            try KiroCommand.time(TimeSync(dateTime: text)).packet()
        }
    }

    @Test func deviceMode() throws {
        #expect(try KiroCommand.deviceMode(.interactive).packet() == protocolHex("12 00 01 00"))
        #expect(try KiroCommand.deviceMode(.focus).packet() == protocolHex("12 00 01 01"))
    }

    @Test func taskInPage() throws {
        let command = KiroCommand.taskInPage(TaskInPage(
            taskId: "t1", taskTitle: "Read", taskDescription: "Chapter 3", estimatedDuration: "30min",
            encouragement: "Go!", focusChallengeActive: true))
        #expect(try command.packet() == protocolHex("""
            11 00 1D
            02 74 31
            04 52 65 61 64
            09 43 68 61 70 74 65 72 20 33
            05 33 30 6D 69 6E
            03 47 6F 21
            01
            """))
    }

    static let threeTaskDayPack = DayPack(
        date: KiroDate(year: 2026, month: 1, day: 30), deviceMode: .interactive, focusChallengeEnabled: false,
        morningGreeting: "Good morning!", dailySummary: "You have 5 tasks today.", firstItem: "9:00 Team call",
        currentScheduleSummary: "Next: 10:00", companionPhrase: "Keep going!",
        topTasks: [
            TopTask(taskId: "abcdefgh-1234-5678-90ab-cdefghijklmn", title: "Review PRs", isCompleted: false, priority: 1),
            TopTask(taskId: "11111111-2222-3333-4444-555555555555", title: "Write report", isCompleted: true, priority: 2),
            TopTask(taskId: "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", title: "Gym", isCompleted: false, priority: 3),
        ],
        settlement: Settlement(
            tasksCompleted: 3, tasksTotal: 5, pointsEarned: 50, streakDays: 7,
            summaryMessage: "Great progress!", encouragementMessage: "See you tomorrow!"))

    /// The §7.1 layout with three complete top tasks (the spec elides tasks 2 and 3 and
    /// miscounts some lengths, so every byte here is recomputed by hand).
    static let threeTaskDayPackPayload = protocolHex("""
        1A 01 1E
        00
        00
        0D 47 6F 6F 64 20 6D 6F 72 6E 69 6E 67 21
        17 59 6F 75 20 68 61 76 65 20 35 20 74 61 73 6B 73 20 74 6F 64 61 79 2E
        0E 39 3A 30 30 20 54 65 61 6D 20 63 61 6C 6C
        0B 4E 65 78 74 3A 20 31 30 3A 30 30
        0B 4B 65 65 70 20 67 6F 69 6E 67 21
        03
        24 61 62 63 64 65 66 67 68 2D 31 32 33 34 2D 35 36 37 38 2D 39 30 61 62 2D 63 64 65 66 67 68 69 6A 6B 6C 6D 6E
        0A 52 65 76 69 65 77 20 50 52 73
        00 01
        24 31 31 31 31 31 31 31 31 2D 32 32 32 32 2D 33 33 33 33 2D 34 34 34 34 2D 35 35 35 35 35 35 35 35 35 35 35 35
        0C 57 72 69 74 65 20 72 65 70 6F 72 74
        01 02
        24 61 61 61 61 61 61 61 61 2D 62 62 62 62 2D 63 63 63 63 2D 64 64 64 64 2D 65 65 65 65 65 65 65 65 65 65 65 65
        03 47 79 6D
        00 03
        03 05 00 32 07
        0F 47 72 65 61 74 20 70 72 6F 67 72 65 73 73 21
        11 53 65 65 20 79 6F 75 20 74 6F 6D 6F 72 72 6F 77 21
        """)

    @Test func dayPackWithThreeFullTasks() throws {
        let command = KiroCommand.dayPack(Self.threeTaskDayPack)
        #expect(command.type == .dayPack)
        let payload = try command.payload()
        #expect(payload.count == 267)
        #expect(payload == Self.threeTaskDayPackPayload)
        #expect(try command.packet() == protocolHex("10 01 0B") + Self.threeTaskDayPackPayload)
        // CRC-16/CCITT-FALSE of those 267 bytes, computed independently.
        #expect(try command.packet(checksum: true) == protocolHex("10 01 0B") + Self.threeTaskDayPackPayload + protocolHex("77 55"))
    }

    @Test func dayPackModeAndFocusBytes() throws {
        var pack = Self.threeTaskDayPack
        pack.deviceMode = .focus
        pack.focusChallengeEnabled = true
        let payload = Array(try KiroCommand.dayPack(pack).payload())
        #expect(Array(payload.prefix(5)) == [0x1A, 0x01, 0x1E, 0x01, 0x01])
    }

    @Test func checksumIsAppendedBigEndian() throws {
        // CRC-16/CCITT-FALSE of 1A 01 1E 09 1E 00 is 0x3FD7.
        #expect(try KiroCommand.time(TimeSync(dateTime: "2026-01-30T09:30:00")).packet(checksum: true)
            == protocolHex("05 00 06 1A 01 1E 09 1E 00 3F D7"))
    }

    @Test func crcCheckValue() {
        #expect(CRC16.ccittFalse(Data("123456789".utf8)) == 0x29B1)
        #expect(CRC16.ccittFalse(Data()) == 0xFFFF)
        #expect(CRC16.ccittFalse(protocolHex("1A 01 1E 09 1E 00")) == 0x3FD7)
    }

    @Test(arguments: ["00:00", "23:59", "09:05", "12:00", "19:30"])
    func validStartTimes(_ time: String) throws {
        let payload = try KiroCommand.schedule(Schedule(events: [ScheduleEvent(title: "", startTime: time)])).payload()
        #expect(payload == Data([0x01, 0x00]) + Data(time.utf8))
    }

    @Test(arguments: [
        "", "24:00", "12:60", "9:30", "09:3", "0930", "ab:cd", "09:30:00", " 9:30", "-1:00", "09-30",
        "０９:３０", "99:99", "23:5９", "09:30 ",
    ])
    func invalidStartTimesAreRejected(_ time: String) {
        let command = KiroCommand.schedule(Schedule(events: [
            ScheduleEvent(title: "ok", startTime: "08:00"), ScheduleEvent(title: "bad", startTime: time),
        ]))
        #expect(throws: KiroEncodingError.invalidStartTime(time)) { try command.payload() }
        #expect(throws: KiroEncodingError.invalidStartTime(time)) { try command.packet() }
    }

    @Test(arguments: [
        KiroDate(year: 2026, month: 2, day: 29), KiroDate(year: 2026, month: 13, day: 1),
        KiroDate(year: 2026, month: 0, day: 1), KiroDate(year: 2026, month: 1, day: 0),
        KiroDate(year: 2026, month: 6, day: 31), KiroDate(year: 1999, month: 12, day: 31),
        KiroDate(year: 2256, month: 1, day: 1), KiroDate(year: -1, month: 1, day: 1),
    ])
    func invalidDayPackDatesAreRejected(_ date: KiroDate) {
        var pack = Self.threeTaskDayPack
        pack.date = date
        #expect(throws: KiroEncodingError.invalidDate(date.description)) { try KiroCommand.dayPack(pack).packet() }
    }

    @Test func dayPackDateEdges() throws {
        var pack = Self.threeTaskDayPack
        pack.date = KiroDate(year: 2024, month: 2, day: 29)
        #expect(Array(try KiroCommand.dayPack(pack).payload().prefix(3)) == [0x18, 0x02, 0x1D])
        pack.date = KiroDate(year: 2000, month: 2, day: 29)  // divisible by 400: a leap year
        #expect(Array(try KiroCommand.dayPack(pack).payload().prefix(3)) == [0x00, 0x02, 0x1D])
        pack.date = KiroDate(year: 2100, month: 2, day: 29)  // divisible by 100 only: not leap
        #expect(throws: KiroEncodingError.invalidDate("2100-02-29")) { try KiroCommand.dayPack(pack).payload() }
    }

    @Test func dateParsing() {
        #expect(KiroDate(string: "2026-01-30") == KiroDate(year: 2026, month: 1, day: 30))
        #expect(KiroDate(string: "2024-02-29") == KiroDate(year: 2024, month: 2, day: 29))
        for bad in ["2026-02-29", "2026-1-30", "26-01-30", "2026/01/30", "2026-13-01", "2026-00-10",
                    "2026-01-00", "2026-01-32", "", "2026-01-30T00:00:00", " 2026-01-30", "2026-01-3x"] {
            #expect(KiroDate(string: bad) == nil, "\(bad)")
        }
        #expect(KiroDate(year: 7, month: 3, day: 4).description == "0007-03-04")
        #expect(KiroDate(year: 2026, month: 1, day: 30) < KiroDate(year: 2026, month: 2, day: 1))
    }

    @Test func errorsDescribeThemselves() {
        let errors: [KiroEncodingError] = [
            .invalidStartTime("9:3"), .invalidDateTime("x"), .invalidDate("2026-02-30"), .payloadTooLong(70000),
        ]
        for error in errors {
            #expect(error.errorDescription?.isEmpty == false)
        }
        #expect(KiroEncodingError.payloadTooLong(70000).errorDescription?.contains("70000") == true)
    }
}
