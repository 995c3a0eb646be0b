import Foundation
import MeshCore
import MeshCoreStorage
import TetherCore

/// Runs `tether mesh` commands on an open radio link, one line at a time: typed at the
/// interactive prompt, piped in from a script, or given as a subcommand.
///
/// Each result is printed as a line of text, or with `--json` as one JSON object with a
/// `type` field. A command that fails prints an `error` record and the shell goes on.
// Unchecked: one command runs at a time (the prompt and the script reader await each before
// reading the next line), so its state is never touched from two tasks at once.
final class MeshShell: @unchecked Sendable {
    let link: MeshLink
    let store: MeshStore
    let console: MeshConsole
    /// Who lines without a leading `/` go to, in chat mode.
    private(set) var chat: ChatTarget?
    /// How many commands failed.
    private(set) var failures = 0
    /// Set by `quit`.
    private(set) var finished = false

    /// A chat partner.
    enum ChatTarget {
        case contact(MeshContact)
        case channel(index: UInt8, name: String)

        var label: String {
            switch self {
            case .contact(let contact): contact.name
            case .channel(let index, let name): "#\(index) \(name)"
            }
        }
    }

    init(link: MeshLink, store: MeshStore, console: MeshConsole) {
        self.link = link
        self.store = store
        self.console = console
    }

    var json: Bool { link.json }
    var session: MeshCoreSession { link.session }
    var manager: ConnectionManager { link.manager }

    /// The prompt: the chat partner, if any.
    var prompt: String { chat.map { "to \(terminalSafe($0.label))> " } ?? "mesh> " }

    // MARK: Lines

    /// Runs one line. In chat mode a line is a message unless it starts with `/`.
    func run(line raw: String) async {
        let line = raw.trimmingCharacters(in: .whitespaces)
        guard !line.isEmpty else { return }
        if let chat, !line.hasPrefix("/") {
            await report(command: "send") { try await self.say(line, to: chat) }
            return
        }
        // Outside a chat, a line starting with # is a comment (scripts, #!).
        guard !line.hasPrefix("#") else { return }
        let text = line.hasPrefix("/") ? String(line.dropFirst()) : line
        guard let words = meshShellWords(text) else {
            return fail(command: nil, CLIError("unterminated quote in: \(terminalSafe(text))"))
        }
        guard let name = words.first else { return }
        await run(name, Array(words.dropFirst()))
    }

    /// Runs the command `name` with `arguments`.
    func run(_ name: String, _ arguments: [String]) async {
        guard let entry = MeshShellCatalog.entry(name) else {
            return fail(command: name, CLIError("unknown command \(terminalSafe(name)) (help lists them)"))
        }
        await report(command: entry.name) { try await self.execute(entry, arguments) }
    }

    private func report(command: String, _ body: () async throws -> Void) async {
        do {
            try await body()
        } catch {
            fail(command: command, error)
        }
    }

    /// Counts a failure that happened outside a command (a script line that was skipped).
    func fail(_ message: String) { fail(command: nil, CLIError(message)) }

    private func fail(command: String?, _ error: any Error) {
        failures += 1
        let message = CLIError.from(error).message
        struct Failure: Encodable { let type = "error"; let command: String?; let message: String }
        if json {
            console.print(jsonLine(Failure(command: command, message: message)))
        } else {
            console.print("error: " + terminalSafe(message))
        }
    }

    /// Prints one result.
    func emit(_ value: some Encodable, text: String) {
        console.print(json ? jsonLine(value) : text)
    }

    // MARK: Arguments

    func require(_ arguments: [String], _ count: Int, _ usage: String) throws {
        guard arguments.count >= count else { throw CLIError("usage: \(usage)") }
    }

    /// A contact by name (any case) or at least 4 hex digits of its key.
    func contact(_ name: String) async throws -> MeshContact {
        if let found = await manager.contact(named: name) { return found }
        let known = await manager.contacts.map(\.name)
        let hint = known.isEmpty ? "none" : terminalSafe(known.prefix(12).joined(separator: ", ")) + (known.count > 12 ? ", …" : "")
        throw CLIError("no contact named \(terminalSafe(name)) (known: \(hint))")
    }

    /// The contact all the arguments name (a name may hold spaces without quotes).
    func contactArgument(_ arguments: [String], _ usage: String) async throws -> MeshContact {
        try require(arguments, 1, usage)
        return try await contact(arguments.joined(separator: " "))
    }

    func channelIndex(_ text: String) throws -> UInt8 {
        guard let index = UInt8(text.hasPrefix("#") ? String(text.dropFirst()) : text) else {
            throw CLIError("a channel is an index 0…255, got \(terminalSafe(text))")
        }
        return index
    }

    static func onOff(_ text: String) throws -> Bool {
        switch text.lowercased() {
        case "on", "yes", "true", "1": return true
        case "off", "no", "false", "0": return false
        default: throw CLIError("on or off, got \(terminalSafe(text))")
        }
    }

    // MARK: Chat

    private func say(_ text: String, to target: ChatTarget) async throws {
        switch target {
        case .contact(let contact):
            let message = try await manager.sendMessage(text, to: contact)
            emit(MeshMessageLine(message, contact: contact.name),
                 text: "→ \(terminalSafe(contact.name)): delivered" + (message.roundTrip.map { " (\($0) ms)" } ?? ""))
        case .channel(let index, let name):
            let message = try await manager.sendChannelMessage(text, channel: index)
            emit(MeshMessageLine(message, contact: nil), text: "→ #\(index) \(terminalSafe(name)): sent")
        }
    }

    func setChat(_ arguments: [String]) async throws {
        guard let target = arguments.first, target != "-" else {
            chat = nil
            struct Chat: Encodable { let type = "chat"; let with: String? }
            emit(Chat(with: nil), text: "Chat ended")
            return
        }
        if target.hasPrefix("#"), let index = UInt8(target.dropFirst()) {
            let name = await manager.channels.first { $0.index == index }?.name ?? "channel \(index)"
            chat = .channel(index: index, name: name)
        } else {
            chat = .contact(try await contact(arguments.joined(separator: " ")))
        }
        struct Chat: Encodable { let type = "chat"; let with: String? }
        emit(Chat(with: chat?.label), text: "Chatting with \(terminalSafe(chat?.label ?? "")); lines starting with / are commands, /to - ends the chat")
    }

    func quit() { finished = true }
}
