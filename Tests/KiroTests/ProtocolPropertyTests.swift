import Foundation
import PropertyBased
import Testing

@testable import Kiro

/// Random inputs for the protocol property tests.
///
/// Strings are built from single-scalar characters that never merge into one grapheme with
/// their neighbours, so the number generated is the number of `Character`s.
private enum ProtocolRandom {
    static let pool: [Character] = Array(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_.,!?:/#$%&'()*+<=>@[]{}~"
            + "가나다라마바사아자차카타파하한글회의모찌" + "éüñçßøåœ" + "日本語中文" + "😀🐱🚀🎉👍🔥✅⏰")
    static let idPool: [Character] = Array("abcdefghijklmnopqrstuvwxyz0123456789-_" + "가나다한" + "😀🚀")
    static let hex: [Character] = Array("0123456789abcdef")

    /// At most `maxCharacters` characters and 255 bytes: within every §4 limit.
    static func text(_ maxCharacters: Int, _ rng: inout some RandomNumberGenerator) -> String {
        let count = Int.random(in: 0...maxCharacters, using: &rng)
        var result = ""
        var bytes = 0
        for _ in 0..<count {
            let character = pool.randomElement(using: &rng)!
            guard bytes + character.utf8.count <= 255 else { break }
            bytes += character.utf8.count
            result.append(character)
        }
        return result
    }

    /// A lower-case UUID string, 36 bytes.
    static func uuid(_ rng: inout some RandomNumberGenerator) -> String {
        [8, 4, 4, 4, 12].map { group in
            String((0..<group).map { _ in hex.randomElement(using: &rng)! })
        }.joined(separator: "-")
    }

    /// A UUID or a short id of 1…12 characters. Neither can start with the byte that would make
    /// a legacy packet also read as the inner form (see `KiroEventDecoder`).
    static func id(_ rng: inout some RandomNumberGenerator) -> String {
        if Bool.random(using: &rng) { return uuid(&rng) }
        let count = Int.random(in: 1...12, using: &rng)
        return String((0..<count).map { _ in idPool.randomElement(using: &rng)! })
    }

    static func hourMinute(_ rng: inout some RandomNumberGenerator) -> String {
        KiroDateText.hourMinute(Int.random(in: 0...23, using: &rng), Int.random(in: 0...59, using: &rng))
    }

    static func date(_ rng: inout some RandomNumberGenerator) -> KiroDate {
        let year = Int.random(in: 2000...2255, using: &rng)
        let month = Int.random(in: 1...12, using: &rng)
        let day = Int.random(in: 1...KiroDateText.daysIn(month: month, year: year), using: &rng)
        return KiroDate(year: year, month: month, day: day)
    }

    static func command(_ rng: inout some RandomNumberGenerator) -> KiroCommand {
        switch Int.random(in: 0..<8, using: &rng) {
        case 0:
            return .petStatus(PetStatus(
                name: text(20, &rng), mood: PetMood.allCases.randomElement(using: &rng)!,
                stage: PetStage.allCases.randomElement(using: &rng)!, progress: Int.random(in: 0...100, using: &rng)))
        case 1:
            let tasks = (0..<Int.random(in: 0...10, using: &rng)).map { _ in
                TaskItem(title: text(30, &rng), isCompleted: Bool.random(using: &rng))
            }
            return .taskList(TaskList(tasks: tasks))
        case 2:
            let events = (0..<Int.random(in: 0...8, using: &rng)).map { _ in
                ScheduleEvent(title: text(25, &rng), startTime: hourMinute(&rng))
            }
            return .schedule(Schedule(events: events))
        case 3:
            return .weather(Weather(temperature: Int.random(in: -128...127, using: &rng), condition: text(15, &rng)))
        case 4:
            let date = date(&rng)
            return .time(TimeSync(dateTime: KiroDateText.dateTime(
                year: date.year, month: date.month, day: date.day, hour: Int.random(in: 0...23, using: &rng),
                minute: Int.random(in: 0...59, using: &rng), second: Int.random(in: 0...59, using: &rng))))
        case 5:
            let tasks = (0..<Int.random(in: 0...3, using: &rng)).map { _ in
                TopTask(taskId: Bool.random(using: &rng) ? uuid(&rng) : text(36, &rng), title: text(30, &rng),
                        isCompleted: Bool.random(using: &rng), priority: Int.random(in: 1...3, using: &rng))
            }
            let settlement = Settlement(
                tasksCompleted: Int.random(in: 0...255, using: &rng), tasksTotal: Int.random(in: 0...255, using: &rng),
                pointsEarned: Int.random(in: 0...65535, using: &rng), streakDays: Int.random(in: 0...255, using: &rng),
                summaryMessage: text(50, &rng), encouragementMessage: text(50, &rng))
            return .dayPack(DayPack(
                date: date(&rng), deviceMode: Bool.random(using: &rng) ? .focus : .interactive,
                focusChallengeEnabled: Bool.random(using: &rng), morningGreeting: text(50, &rng),
                dailySummary: text(60, &rng), firstItem: text(40, &rng), currentScheduleSummary: text(30, &rng),
                companionPhrase: text(40, &rng), topTasks: tasks, settlement: settlement))
        case 6:
            return .taskInPage(TaskInPage(
                taskId: uuid(&rng), taskTitle: text(40, &rng), taskDescription: text(100, &rng),
                estimatedDuration: text(10, &rng), encouragement: text(50, &rng),
                focusChallengeActive: Bool.random(using: &rng)))
        default:
            return .deviceMode(Bool.random(using: &rng) ? .focus : .interactive)
        }
    }

    /// An event with only the fields its type carries, as the decoder returns it.
    static func event(_ rng: inout some RandomNumberGenerator) -> KiroEvent {
        let type = EventLogType.allCases.randomElement(using: &rng)!
        switch type {
        case .enterTaskIn, .completeTask, .skipTask, .selectedTaskChanged, .wheelSelect, .viewEventDetail:
            let stamp: UInt32? = Bool.random(using: &rng) ? UInt32.random(in: .min ... .max, using: &rng) : nil
            return KiroEvent(type: type, id: id(&rng), timestamp: stamp)
        case .lowBattery:
            return KiroEvent(type: type, batteryLevel: UInt8.random(in: 0...100, using: &rng))
        case .requestRefresh, .deviceWake, .deviceSleep:
            return KiroEvent(type: type)
        }
    }
}

/// Property tests: nothing crashes on arbitrary bytes, and encoding round-trips.
struct ProtocolPropertyTests {
    static let commands = Generator<KiroCommand, Shrink.None<KiroCommand>>(run: { rng in ProtocolRandom.command(&rng) })
    static let events = Generator<KiroEvent, Shrink.None<KiroEvent>>(run: { rng in ProtocolRandom.event(&rng) })
    /// Thousands of rejected inputs would flood the test log.

    @Test func eventDecoderNeverCrashesOnArbitraryBytes() async {
        let decoder = KiroEventDecoder()
        await propertyCheck(count: 1_000, input: Gen.uint8().array(of: 0...300)) { bytes in
            let data = Data(bytes)
            switch decoder.decodeResult(data) {
            case .success(let event):
                #expect(event.type.code == bytes[0])
            case .failure(.empty):
                #expect(bytes.isEmpty)
            case .failure(.unknownType(let code)):
                #expect(code == bytes[0])
            case .failure(.malformed):
                break
            }
            #expect(decoder.events(data).count <= bytes.count / 2)
        }
    }

    /// Arbitrary payloads behind a known type and a plausible length reach the deeper paths.
    @Test func eventDecoderNeverCrashesOnPlausiblePackets() async {
        let decoder = KiroEventDecoder()
        let codes = EventLogType.allCases.map(\.code)
        await propertyCheck(
            count: 1_000, input: Gen.element(of: codes), Gen.uint8().array(of: 0...60), Gen.int(in: -6...6)
        ) { code, body, skew in
            let length = UInt8(clamping: max(0, body.count + skew))
            var bytes = [code!, length] + body
            if body.count > 2, skew == 0 { bytes[2] = UInt8(clamping: body.count - 1) }
            switch decoder.decodeResult(Data(bytes)) {
            case .success(let event):
                #expect(event.type.code == code)
                if event.type.carriesID { #expect(event.id?.isEmpty == false) }
            case .failure(.malformed):
                break
            case .failure(let other):
                Issue.record("unexpected \(other) for \(bytes)")
            }
            _ = decoder.events(Data(bytes + bytes))
        }
    }

    @Test func randomEventsRoundTripInBothForms() async {
        let decoder = KiroEventDecoder()
        await propertyCheck(count: 1_000, input: Self.events, Gen.bool) { event, legacy in
            let form: KiroEventForm = legacy ? .legacy : .innerLength
            #expect(decoder.decodeResult(event.encoded(form: form)) == .success(event))
        }
    }

    @Test func randomEventStreamsSplitBackIntoTheirEvents() async {
        let decoder = KiroEventDecoder()
        let stamp = Gen.uint32(in: 0x5E00_0000...0x7FFF_FFFF).optional
        await propertyCheck(count: 300, input: Self.events.array(of: 0...8), stamp.array(of: 8), Gen.bool.array(of: 8)) {
            events, stamps, legacy in
            // Legacy timestamps sit outside the length, so streams use realistic times (see decodeAll).
            let events = events.enumerated().map { index, event in
                var event = event
                if event.type.carriesID { event.timestamp = stamps[index] }
                return event
            }
            var stream = Data()
            for (index, event) in events.enumerated() {
                stream += event.encoded(form: legacy[index] ? .legacy : .innerLength)
            }
            #expect(decoder.events(stream) == events)
        }
    }

    @Test func randomCommandsRoundTrip() async throws {
        await propertyCheck(count: 500, input: Self.commands, Gen.int(in: 1...400)) { command, split in
            let packet = try command.packet()
            #expect(try KiroCommand.decode(packet: packet) == command)
            let protected = try command.packet(checksum: true)
            #expect(try KiroCommand.decode(packet: protected, checksum: true) == command)
            // And through the device's reassembly, sliced in two.
            var assembler = KiroPacketAssembler(checksum: true)
            let cut = min(split, protected.count)
            var results = assembler.push(protected.prefix(cut), at: .zero)
            results += assembler.push(protected.dropFirst(cut), at: .milliseconds(5))
            #expect(results == [.success(command)])
        }
    }

    @Test func commandDecoderNeverCrashesOnArbitraryPayloads() async {
        await propertyCheck(count: 1_000, input: Gen.uint8(), Gen.uint8().array(of: 0...300)) { type, payload in
            do {
                let command = try KiroCommand.decode(type: type, payload: Data(payload))
                // Whatever decodes re-encodes to the same bytes: the decoder accepts nothing the
                // encoder could not have produced (string limits aside).
                #expect(command.type.rawValue == type)
            } catch is KiroPacketError {
            } catch {
                Issue.record("unexpected error \(error)")
            }
        }
    }

    @Test func assemblerStaysBoundedOnArbitraryWrites() async {
        await propertyCheck(
            count: 500, input: Gen.uint8().array(of: 0...200).array(of: 0...10), Gen.bool, Gen.int(in: 0...3_000)
        ) { writes, checksum, gap in
            var assembler = KiroPacketAssembler(checksum: checksum, maxPacketLength: 256)
            var now = Duration.zero
            for write in writes {
                _ = assembler.push(Data(write), at: now)
                #expect(assembler.bufferedByteCount < 256)
                now += .milliseconds(gap)
            }
        }
    }
}
