import ArgumentParser
import Foundation
import MeshCore
import TetherCore

/// Runs the mesh shell: at a prompt, over a script on standard input, or for one command.
enum MeshShellRunner {
    /// The longest line read from a script.
    static let scriptLineLimit = 16 * 1024

    /// `tether mesh` with no subcommand.
    static func interactiveOrScript(_ target: MeshTarget) async throws {
        let interactive = isatty(STDIN_FILENO) != 0 && isatty(STDOUT_FILENO) != 0 && !target.json
        let console = MeshConsole()
        let box = EventsBox()
        var failed = 0
        try await MeshLink.with(target, reconnect: true, announceNewMessages: !interactive, prepare: { box.events = await $0.events() }) { link in
            let shell = MeshShell(link: link, store: link.store, console: console)
            // Messages, acknowledgements and link changes are shown as they arrive.
            let names = Dictionary(await link.manager.contacts.map { ($0.publicKeyPrefix.hexString, $0.name) }, uniquingKeysWith: { a, _ in a })
            let json = link.json
            let listener = Task {
                guard let events = box.events else { return }
                // The startup's own state changes were reported on standard error already.
                var started = false
                for await event in events {
                    if case .state(let state) = event, !started {
                        started = state == .ready
                        continue
                    }
                    guard let line = MeshListenLine(event, names: names) else { continue }
                    console.print(json ? jsonLine(line) : line.line)
                }
            }
            defer { listener.cancel() }
            if interactive {
                try await prompt(shell, console: console)
            } else {
                try await script(shell)
            }
            failed = shell.failures
        }
        if failed > 0, !interactive { throw ExitCode(1) }
    }

    /// One command given as a subcommand: `tether mesh status NAME` runs `status NAME`.
    static func one(_ target: MeshTarget, _ command: String, _ arguments: [String]) async throws {
        let console = MeshConsole()
        var failed = 0
        try await MeshLink.with(target) { link in
            let shell = MeshShell(link: link, store: link.store, console: console)
            await shell.run(command, arguments)
            failed = shell.failures
        }
        if failed > 0 { throw ExitCode(1) }
    }

    private static func script(_ shell: MeshShell) async throws {
        var reader = LineReader(handle: .standardInput, limit: scriptLineLimit)
        while !shell.finished, let line = try reader.next() {
            guard let line else {
                shell.console.print(shell.json ? #"{"message":"a line longer than 16 KiB was skipped","type":"error"}"# : "error: a line longer than 16 KiB was skipped")
                continue
            }
            await shell.run(line: line)
        }
    }

    private static func prompt(_ shell: MeshShell, console: MeshConsole) async throws {
        let historyPath = DataDirectory.path(for: "mesh-history")
        let saved = (try? String(contentsOfFile: historyPath, encoding: .utf8))?.split(separator: "\n").map(String.init) ?? []
        let terminal = RawTerminal()
        defer { terminal.restore() }
        let editor = MeshLineEditor(terminal: terminal, console: console, history: saved)
        console.print("Type help for the commands, to NAME to chat, quit to leave.")
        while !shell.finished {
            let contacts = await shell.manager.contacts.map(\.name)
            guard let line = await editor.readLine(prompt: shell.prompt, complete: { completions(for: $0, contacts: contacts) }) else { break }
            await shell.run(line: line)
        }
        try? (editor.history.suffix(MeshLineEditor.historyLimit).joined(separator: "\n") + "\n").write(toFile: historyPath, atomically: true, encoding: .utf8)
    }

    /// What Tab offers for the text before the cursor: command names first, then the names
    /// the command takes (contacts, settings, kinds).
    static func completions(for text: String, contacts: [String]) -> [String] {
        let slash = text.hasPrefix("/") ? "/" : ""
        let body = String(text.dropFirst(slash.count))
        guard let space = body.firstIndex(of: " ") else {
            return MeshShellCatalog.entries.map(\.name).filter { $0.hasPrefix(body.lowercased()) }.map { slash + $0 + " " }
        }
        let command = String(body[..<space])
        let argument = String(body[body.index(after: space)...])
        guard let entry = MeshShellCatalog.entry(command), !argument.contains(" ") || entry.argument == .contact else { return [] }
        let candidates: [String] = switch entry.argument {
        case .contact: contacts.map(meshShellQuoted)
        case .setting: MeshShellCatalog.settings.map(\.name)
        case .statsKind: ["core", "radio", "packets"]
        case .anonymousKind: ["regions", "owner", "clock"]
        case .channel, .none: []
        }
        let lowered = argument.lowercased()
        return candidates.filter { $0.lowercased().hasPrefix(lowered) || $0.lowercased().hasPrefix("\"" + lowered) }
            .map { slash + command + " " + $0 + " " }
    }
}

/// Reads lines from a handle, at most `limit` bytes each: a longer line is skipped whole and
/// reported as nil (a line of its own), so a hostile script cannot grow memory.
struct LineReader {
    let handle: FileHandle
    let limit: Int
    private var buffer = Data()
    private var ended = false

    init(handle: FileHandle, limit: Int) {
        self.handle = handle
        self.limit = limit
    }

    /// The next line (without its newline; nil inside for one too long), or nil at the end.
    mutating func next() throws -> String?? {
        var skipping = false
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = buffer[buffer.startIndex..<newline]
                buffer = Data(buffer[(newline + 1)...])
                if skipping || line.count > limit { return .some(nil) }
                return .some(String(decoding: line.last == 0x0D ? line.dropLast() : line, as: UTF8.self))
            }
            if buffer.count > limit {
                skipping = true
                buffer.removeAll()
            }
            if ended {
                guard !buffer.isEmpty || skipping else { return nil }
                let line = buffer
                buffer.removeAll()
                if skipping { return .some(nil) }
                return .some(String(decoding: line, as: UTF8.self))
            }
            guard let chunk = try handle.read(upToCount: 4_096), !chunk.isEmpty else {
                ended = true
                continue
            }
            buffer.append(chunk)
        }
    }
}
