import Foundation
import Testing

@testable import Kiro

/// The device-side decoder (`KiroCommand.decode`) inverts the encoder and rejects what §4
/// does not allow.
struct ProtocolRoundTripTests {
    static let sampleCommands: [KiroCommand] = [
        .petStatus(PetStatus(name: "모찌 🐱", mood: .sleepy, stage: .adult, progress: 100)),
        .taskList(TaskList(tasks: [TaskItem(title: "Write", isCompleted: false), TaskItem(title: "", isCompleted: true)])),
        .taskList(TaskList(tasks: [])),
        .schedule(Schedule(events: [ScheduleEvent(title: "Standup", startTime: "09:30"),
                                    ScheduleEvent(title: "Late", startTime: "23:59")])),
        .weather(Weather(temperature: -128, condition: "stormy")),
        .weather(Weather(temperature: 127, condition: "sunny")),
        .time(TimeSync(dateTime: "2026-01-30T09:30:00")),
        .dayPack(ProtocolEncoderTests.threeTaskDayPack),
        .taskInPage(TaskInPage(taskId: "abcdefgh-1234-5678-90ab-cdefghijklmn", taskTitle: "Read",
                               taskDescription: "Chapter 3 😀", estimatedDuration: "30min",
                               encouragement: "You got this", focusChallengeActive: true)),
        .deviceMode(.interactive),
        .deviceMode(.focus),
    ]

    @Test func everySampleRoundTrips() throws {
        for command in Self.sampleCommands {
            let packet = try command.packet()
            #expect(try KiroCommand.decode(type: packet[0], payload: command.payload()) == command)
            #expect(try KiroCommand.decode(packet: packet) == command)
            #expect(try KiroCommand.decode(packet: command.packet(checksum: true), checksum: true) == command)
        }
    }

    @Test func decodingAPacketChecksItsFraming() throws {
        #expect(throws: KiroPacketError.checksumMismatch) {
            try KiroCommand.decode(packet: protocolHex("05 00 06 1A 01 1E 09 1E 00 3F D8"), checksum: true)
        }
        for bad in ["05 00 06 1A 01 1E 09 1E", "05 00 06 1A 01 1E 09 1E 00 00", "05 00", ""] {
            #expect(throws: KiroPacketError.self) { try KiroCommand.decode(packet: protocolHex(bad)) }
        }
    }

    @Test(arguments: [UInt8(0x00), 0x06, 0x0F, 0x13, 0x20, 0xFF])
    func unknownCommandType(_ type: UInt8) {
        #expect(throws: KiroPacketError.unknownType(type)) { try KiroCommand.decode(type: type, payload: Data()) }
    }

    static let malformedCases: [(UInt8, String)] = [
        (0x01, "01 50 58 42 10"),          // unknown mood letter
        (0x01, "01 50 48 58 10"),                  // unknown stage letter
        (0x01, "01 50 48 42 65"),                  // progress 101
        (0x01, "05 50 48"),                        // name longer than the payload
        (0x01, "01 50 48 42 10 00"),               // a trailing byte
        (0x01, "02 C3 28 48 42 10"),               // invalid UTF-8 name
        (0x02, "0B"),                              // 11 tasks
        (0x02, "01 01 61 02"),                     // completion flag 2
        (0x02, "02 01 61 00"),                     // a task missing
        (0x03, "09"),                              // 9 events
        (0x03, "01 01 61 32 34 3A 30 30"),         // 24:00
        (0x03, "01 01 61 30 39 3A 33"),            // a short time
        (0x04, "05"),                              // no condition
        (0x05, "1A 02 1E 09 1E 00"),               // February 30th
        (0x05, "1A 01 1E 18 00 00"),               // hour 24
        (0x05, "1A 01 1E 09 1E"),                  // no seconds
        (0x10, "1A 01 1E 02 00"),                  // mode 2, and truncated
        (0x10, "1A 01 1E 00 00 00 00 00 00 00 04"),  // 4 top tasks
        (0x10, "1A 01 1E 00 00 00 00 00 00 00 01 01 61 01 62 00 04 00 00 00 00 00 00 00"),  // priority 4
        (0x10, "1A 01 1E 00 00 00 00 00 00 00 01 01 61 01 62 00 00 00 00 00 00 00 00 00"),  // priority 0
        (0x10, "1A 01 1E 00 00 00 00 00 00 00 00 00 00 00 00 00 00"),  // no encouragement
        (0x11, "00 00 00 00 00 02"),               // focus flag 2
        (0x12, "02"),                              // mode 2
        (0x12, ""),                                // no mode
        (0x12, "00 00"),                           // a trailing byte
    ]

    @Test(arguments: malformedCases)
    func malformedPayloads(_ type: UInt8, _ text: String) {
        let error = #expect(throws: KiroPacketError.self) {
            try KiroCommand.decode(type: type, payload: protocolHex(text))
        }
        guard case .malformed = error else {
            Issue.record("expected malformed, got \(String(describing: error))")
            return
        }
    }

    @Test func minimalDayPackDecodes() throws {
        let payload = protocolHex("1A 01 1E 01 01 00 00 00 00 00 00 02 03 00 0A 04 00 00")
        let expected = DayPack(
            date: KiroDate(year: 2026, month: 1, day: 30), deviceMode: .focus, focusChallengeEnabled: true,
            morningGreeting: "", dailySummary: "", firstItem: "", currentScheduleSummary: "", companionPhrase: "",
            topTasks: [],
            settlement: Settlement(tasksCompleted: 2, tasksTotal: 3, pointsEarned: 10, streakDays: 4,
                                   summaryMessage: "", encouragementMessage: ""))
        #expect(try KiroCommand.decode(type: 0x10, payload: payload) == .dayPack(expected))
        #expect(try KiroCommand.dayPack(expected).payload() == payload)
    }
}
