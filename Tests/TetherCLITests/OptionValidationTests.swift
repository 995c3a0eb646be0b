import ArgumentParser
import Testing
@testable import tether

/// Numeric options a user gets wrong are refused with a sentence, before anything runs: a
/// negative count trapped (`bench --megabytes=-1`) and zero hung (`bench --notifications 0`).
@Suite struct OptionValidationTests {
    /// The message a parse failure prints, or nil if `arguments` parse.
    private func refusal<C: ParsableCommand>(_ command: C.Type, _ arguments: [String]) -> String? {
        do {
            _ = try command.parse(arguments)
            return nil
        } catch {
            return command.message(for: error)
        }
    }

    @Test(arguments: [
        (["--megabytes=-1"], "--megabytes must be between 1 and 4096"),
        (["--megabytes", "0"], "--megabytes must be between 1 and 4096"),
        (["--notifications", "0"], "--notifications must be between 1 and 10000000"),
        (["--notifications=-5"], "--notifications must be between 1 and 10000000"),
        (["--maximum-value-length", "513"], "--maximum-value-length must be between 1 and 512"),
    ])
    func benchRefusesCountsOutOfRange(arguments: [String], message: String) {
        #expect(refusal(BenchCommand.self, arguments) == message)
    }

    @Test func benchTakesItsDefaultsAndSensibleValues() {
        #expect(refusal(BenchCommand.self, []) == nil)
        #expect(refusal(BenchCommand.self, ["--megabytes", "1", "--notifications", "1"]) == nil)
    }

    @Test(arguments: [["--seconds=-1"], ["--seconds", "nan"], ["--seconds", "1e9"]])
    func kiroPushRefusesImpossibleDurations(arguments: [String]) {
        #expect(refusal(KiroCommands.Push.self, arguments) == "--seconds must be between 0 and 86400")
    }
}

extension OptionValidationTests {
    @Test func meshMessagesTakesOneFilterAtATime() {
        let refused = { (arguments: [String]) -> String? in
            do { _ = try MeshCommands.Messages.parse(arguments); return nil } catch { return MeshCommands.Messages.message(for: error) }
        }
        #expect(refused(["--contact", "alice", "--channel", "0"]) == "choose --contact or --channel, not both")
        #expect(refused(["--channel", "300"]) == "--channel must be between 0 and 255")
        #expect(refused(["--limit", "0"]) == "--limit must be between 1 and 1000000")
        #expect(refused(["--contact", "alice"]) == nil)
    }
}
