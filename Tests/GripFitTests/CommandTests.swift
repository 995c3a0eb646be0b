import Foundation
import GripFit
import Testing

@Suite struct CommandTests {
    // Guide §5.1 and §2.2: the exact bytes written to the RX characteristic.
    @Test(arguments: [
        (GripFitCommand.tare, "CMD:TARE\n"),
        (.ping, "CMD:PING\n"),
        (.info, "CMD:INFO\n"),
        (.setRate(ms: 50), "CMD:RATE:50\n"),
    ])
    func exactBytes(command: GripFitCommand, wire: String) {
        #expect(command.data == Data(wire.utf8))
        #expect(command.text + "\n" == wire)
    }

    @Test func tareMatchesTheGuideLiterally() {
        #expect(GripFitCommand.tare.data == Data("CMD:TARE\n".utf8))
    }

    @Test(arguments: [20, 50, 100, 1000])
    func rateAcceptsTheFirmwareRange(ms: Int) throws {
        let command = try GripFitCommand.rate(ms: ms)
        #expect(command == .setRate(ms: ms))
        #expect(command.data == Data("CMD:RATE:\(ms)\n".utf8))
    }

    @Test(arguments: [19, 1001, 0, -5])
    func rateRejectsIntervalsOutsideTheRange(ms: Int) {
        #expect(throws: GripFitCommand.InvalidCommand.rateOutOfRange(ms)) {
            try GripFitCommand.rate(ms: ms)
        }
        let description = GripFitCommand.InvalidCommand.rateOutOfRange(ms).errorDescription
        #expect(description?.isEmpty == false)
        #expect(description?.contains("\(ms)") == true)
    }

    @Test(arguments: [GripFitCommand.ping, .tare, .info, .setRate(ms: 20), .setRate(ms: 1000)])
    func lineParsesWhatTextProduces(command: GripFitCommand) {
        #expect(GripFitCommand(line: command.text) == command)
    }

    @Test(arguments: ["", "CMD:", "CMD:RESET", "cmd:ping", "CMD:RATE:", "CMD:RATE:abc", "PING"])
    func unknownCommandLines(line: String) {
        #expect(GripFitCommand(line: line) == nil)
    }
}
