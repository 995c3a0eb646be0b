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

    @Test(arguments: [["--seconds=-1"], ["--seconds", "-1"], ["--seconds", "nan"], ["--seconds", "1e9"]])
    func kiroPushRefusesImpossibleDurations(arguments: [String]) {
        #expect(refusal(KiroCommands.Push.self, arguments) == "--seconds must be from 0 to 86400")
        #expect(refusal(KiroCommands.Push.self, ["--seconds", "0"]) == nil, "0: do not follow")
    }

    /// One rule and one sentence for `--seconds` in every command that takes it.
    @Test(arguments: [["--seconds", "0"], ["--seconds", "-1"], ["--seconds=-1"], ["--seconds", "inf"], ["--seconds", "86401"]])
    func everySecondsOptionRefusesTheSame(arguments: [String]) {
        let message = "--seconds must be more than 0 and at most 86400"
        #expect(refusal(ScanCommand.self, arguments) == message)
        #expect(refusal(GripFitCommands.Stream.self, arguments) == message)
        #expect(refusal(FlockCommands.Watch.self, arguments) == message)
        #expect(refusal(MeshCommands.Listen.self, arguments) == message)
        #expect(refusal(ScanCommand.self, ["--seconds", "86400"]) == nil)
        #expect(refusal(MeshCommands.Listen.self, ["--seconds", "0.5"]) == nil)
    }

    /// `mesh --timeout` follows the same rule, with its own cap.
    @Test(arguments: ["0", "-1", "nan", "601"])
    func meshTimeoutRefusesAsSecondsDo(value: String) {
        #expect(refusal(MeshCommands.Info.self, ["--timeout", value]) == "--timeout must be more than 0 and at most 600")
        #expect(refusal(MeshCommands.Info.self, ["--timeout", "600"]) == nil)
    }

    /// `--json` and `--database` are one option group: the same on every command, and an empty
    /// database path is refused before anything opens.
    @Test func jsonAndDatabaseAreTheSameEverywhere() throws {
        let stream = try GripFitCommands.Stream.parse(["--json", "--database", "/tmp/g.sqlite"])
        #expect(stream.json && stream.database == "/tmp/g.sqlite")
        let history = try FlockCommands.History.parse(["--json", "--database", "/tmp/f.sqlite"])
        #expect(history.json && history.database == "/tmp/f.sqlite")
        #expect(try ScanCommand.parse(["--json"]).json)
        #expect(try !ScanCommand.parse([]).json)
        #expect(refusal(GripFitCommands.Sessions.self, ["--database", ""]) == "--database needs a path")
        #expect(refusal(FlockCommands.Export.self, ["--format", "csv", "--database", ""]) == "--database needs a path")
        #expect(refusal(FlockCommands.History.self, ["--database", ""]) == "--database needs a path")
        #expect(throws: (any Error).self) { try Tether.parseAsRoot(["mesh", "messages", "--database", ""]) }
    }

    /// The README's completion instructions give scripts that complete subcommands and values.
    @Test(arguments: [CompletionShell.bash, .zsh, .fish])
    func completionScriptsKnowTheCommandsAndTheirValues(shell: CompletionShell) {
        let script = Tether.completionScript(for: shell)
        for word in ["gripfit", "decode-event", "day-pack", "csv", "corebluetooth", "database"] {
            #expect(script.contains(word), "\(shell) completion lacks \(word)")
        }
        // `emulate <device>` completes the catalog's ids, not file names.
        if shell == .bash {
            #expect(script.contains(#"'gripfit'$'\n''kiro'$'\n''tybe'$'\n''flock'$'\n''mesh'$'\n''echo'"#))
        }
    }

    /// The radio can be named before the subcommand, as the README writes it, or after it.
    @Test func meshTargetOptionsGoBeforeOrAfterTheSubcommand() throws {
        for arguments in [["mesh", "--tcp", "radio.local:5000", "info"], ["mesh", "info", "--tcp", "radio.local:5000"]] {
            let parsed = try Tether.parseAsRoot(arguments)
            let info = try #require(parsed as? MeshCommands.Info, "\(arguments)")
            #expect(info.target.tcp == "radio.local:5000", "\(arguments)")
        }
        let json = try #require(try Tether.parseAsRoot(["mesh", "--json", "battery"]) as? MeshCommands.Battery)
        #expect(json.target.json)
        // Options the group parses reach subcommands that read them from it.
        let messages = try #require(try Tether.parseAsRoot(["mesh", "messages", "--json", "--database", "/tmp/m.sqlite"]) as? MeshCommands.Messages)
        #expect(messages.json && messages.database == "/tmp/m.sqlite")
        // The emulator is a radio: it refuses the options that name one to reach.
        #expect(throws: (any Error).self) { try Tether.parseAsRoot(["mesh", "emulate", "--tcp", "0.0.0.0:6000"]) }
        // The emulator listens where --listen says (port 0: any free one).
        let emulate = try #require(try Tether.parseAsRoot(["mesh", "emulate", "--listen", "127.0.0.1:0"]) as? MeshEmulate)
        #expect(emulate.tcp == "127.0.0.1:0")
        #expect(!emulate.bluez)
        // Or over the air, with as many contacts as asked, but not on a pseudo-terminal as well.
        let overTheAir = try #require(try Tether.parseAsRoot(["mesh", "emulate", "--bluez", "--contacts", "20"]) as? MeshEmulate)
        #expect(overTheAir.bluez && overTheAir.contacts == 20)
        #expect(throws: (any Error).self) { try Tether.parseAsRoot(["mesh", "emulate", "--bluez", "--pty"]) }
    }
}

extension OptionValidationTests {
    @Test func meshMessagesTakesOneFilterAtATime() {
        let refused = { (arguments: [String]) -> String? in
            // Through the root: `messages` reads --json and --database from its group.
            do { _ = try Tether.parseAsRoot(["mesh", "messages"] + arguments); return nil } catch { return Tether.message(for: error) }
        }
        #expect(refused(["--contact", "alice", "--channel", "0"]) == "choose --contact or --channel, not both")
        #expect(refused(["--channel", "300"]) == "--channel must be between 0 and 255")
        #expect(refused(["--limit", "0"]) == "--limit must be between 1 and 1000000")
        #expect(refused(["--contact", "alice"]) == nil)
    }
}
