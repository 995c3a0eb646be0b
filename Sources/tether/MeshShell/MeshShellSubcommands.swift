import ArgumentParser

/// `tether mesh stats`, `get`, `set`, … : one shell command each, on a fresh connection.
enum MeshShellSubcommands {
    /// The arguments every shell subcommand takes after its name.
    struct Words: ParsableArguments {
        // Options Tether knows (--json, --tcp, …) are parsed wherever they stand; anything else,
        // a negative number included, is the command's.
        @Argument(parsing: .allUnrecognized, help: "The command's arguments (see `tether mesh help`).")
        var words: [String] = []
    }

    static func configuration(_ name: String) -> CommandConfiguration {
        let entry = MeshShellCatalog.entry(name)
        return CommandConfiguration(commandName: name, abstract: entry?.summary ?? "", discussion: "Usage: tether mesh \(entry?.usage ?? name)")
    }

    struct Stats: AsyncParsableCommand {
        static let configuration = MeshShellSubcommands.configuration("stats")
        @OptionGroup var target: MeshTarget
        @OptionGroup var arguments: Words
        func run() async throws { try await MeshShellRunner.one(target, "stats", arguments.words) }
    }

    struct Get: AsyncParsableCommand {
        static let configuration = MeshShellSubcommands.configuration("get")
        @OptionGroup var target: MeshTarget
        @OptionGroup var arguments: Words
        func run() async throws { try await MeshShellRunner.one(target, "get", arguments.words) }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = MeshShellSubcommands.configuration("set")
        @OptionGroup var target: MeshTarget
        @OptionGroup var arguments: Words
        func run() async throws { try await MeshShellRunner.one(target, "set", arguments.words) }
    }

    struct Path: AsyncParsableCommand {
        static let configuration = MeshShellSubcommands.configuration("path")
        @OptionGroup var target: MeshTarget
        @OptionGroup var arguments: Words
        func run() async throws { try await MeshShellRunner.one(target, "path", arguments.words) }
    }

    struct Trace: AsyncParsableCommand {
        static let configuration = MeshShellSubcommands.configuration("trace")
        @OptionGroup var target: MeshTarget
        @OptionGroup var arguments: Words
        func run() async throws { try await MeshShellRunner.one(target, "trace", arguments.words) }
    }

    struct Login: AsyncParsableCommand {
        static let configuration = MeshShellSubcommands.configuration("login")
        @OptionGroup var target: MeshTarget
        @OptionGroup var arguments: Words
        func run() async throws { try await MeshShellRunner.one(target, "login", arguments.words) }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = MeshShellSubcommands.configuration("status")
        @OptionGroup var target: MeshTarget
        @OptionGroup var arguments: Words
        func run() async throws { try await MeshShellRunner.one(target, "status", arguments.words) }
    }

    struct Telemetry: AsyncParsableCommand {
        static let configuration = MeshShellSubcommands.configuration("telemetry")
        @OptionGroup var target: MeshTarget
        @OptionGroup var arguments: Words
        func run() async throws { try await MeshShellRunner.one(target, "telemetry", arguments.words) }
    }

    struct Neighbours: AsyncParsableCommand {
        static let configuration = MeshShellSubcommands.configuration("neighbours")
        @OptionGroup var target: MeshTarget
        @OptionGroup var arguments: Words
        func run() async throws { try await MeshShellRunner.one(target, "neighbours", arguments.words) }
    }

    struct Cmd: AsyncParsableCommand {
        static let configuration = MeshShellSubcommands.configuration("cmd")
        @OptionGroup var target: MeshTarget
        @OptionGroup var arguments: Words
        func run() async throws { try await MeshShellRunner.one(target, "cmd", arguments.words) }
    }

    struct Card: AsyncParsableCommand {
        static let configuration = MeshShellSubcommands.configuration("card")
        @OptionGroup var target: MeshTarget
        func run() async throws { try await MeshShellRunner.one(target, "card", []) }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = MeshShellSubcommands.configuration("export")
        @OptionGroup var target: MeshTarget
        @OptionGroup var arguments: Words
        func run() async throws { try await MeshShellRunner.one(target, "export", arguments.words) }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = MeshShellSubcommands.configuration("import")
        @OptionGroup var target: MeshTarget
        @OptionGroup var arguments: Words
        func run() async throws { try await MeshShellRunner.one(target, "import", arguments.words) }
    }

    struct Reboot: AsyncParsableCommand {
        static let configuration = MeshShellSubcommands.configuration("reboot")
        @OptionGroup var target: MeshTarget
        func run() async throws { try await MeshShellRunner.one(target, "reboot", []) }
    }

    /// `tether mesh run COMMAND…`: any shell command (help lists them) on a fresh connection.
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "run", abstract: "Run any command of the mesh prompt once (tether mesh run help lists them).")
        @OptionGroup var target: MeshTarget
        @Argument(parsing: .allUnrecognized, help: "The command and its arguments.") var words: [String] = []
        func validate() throws {
            guard !words.isEmpty else { throw ValidationError("give a command (tether mesh run help lists them)") }
        }
        func run() async throws { try await MeshShellRunner.one(target, words[0], Array(words.dropFirst())) }
    }
}
