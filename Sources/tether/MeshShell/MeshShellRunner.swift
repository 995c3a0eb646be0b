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
            let json = link.json
            let manager = link.manager
            let listener = Task {
                guard let events = box.events else { return }
                var names: [String: String] = [:]
                // The startup's own state changes were reported on standard error already.
                var started = false
                for await event in events {
                    if case .state(let state) = event, !started {
                        started = state == .ready
                        continue
                    }
                    if case .contactsUpdated(let contacts) = event {
                        names = Dictionary(contacts.map { ($0.publicKeyPrefix.hexString, $0.name) }, uniquingKeysWith: { a, _ in a })
                    }
                    if names.isEmpty {
                        names = Dictionary(await manager.contacts.map { ($0.publicKeyPrefix.hexString, $0.name) }, uniquingKeysWith: { a, _ in a })
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
        while !shell.finished, let line = try await reader.nextLine() {
            guard let line else {
                shell.fail("a line longer than 16 KiB was skipped")
                continue
            }
            await shell.run(line: line)
        }
    }

    private static func prompt(_ shell: MeshShell, console: MeshConsole) async throws {
        let historyPath = DataDirectory.path(for: "mesh-history")
        let terminal = RawTerminal()
        defer { terminal.restore() }
        let editor = MeshLineEditor(terminal: terminal, console: console, history: loadHistory(historyPath))
        console.print("Type help for the commands, to NAME to chat, quit to leave; Ctrl-C stops a command.")
        // For the whole prompt, Ctrl-C cancels the command running (if any) instead of ending
        // the program: while a line is edited the terminal is raw and Ctrl-C is a key.
        let running = RunningCommand()
        await ExitCleanup.shared.whileInterruptible({ running.cancel() }) {
            while !shell.finished {
                let contacts = await shell.manager.contacts.map { terminalSafe($0.name) }
                guard let line = await editor.readLine(prompt: shell.prompt, complete: { completions(for: $0, contacts: contacts) }) else { break }
                // While a command runs the terminal is in its normal mode (Ctrl-C signals).
                terminal.restore()
                let task = Task { await shell.run(line: line) }
                running.set(task)
                await task.value
                running.set(nil)
                terminal.makeRaw()
            }
        }
        saveHistory(editor.history, to: historyPath)
    }

    /// The command the prompt is running, for Ctrl-C to cancel.
    final class RunningCommand: @unchecked Sendable {
        private let lock = NSLock()
        private var task: Task<Void, Never>?
        func set(_ task: Task<Void, Never>?) { lock.withLock { self.task = task } }
        func cancel() { lock.withLock { task }?.cancel() }
    }

    /// The most history read back, in bytes.
    static let historyFileLimit = 256 * 1024

    /// The newest lines of the history file (its last 256 KiB; a line cut there is dropped).
    static func loadHistory(_ path: String) -> [String] {
        guard let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        let size = (try? handle.seekToEnd()) ?? 0
        let start = size > UInt64(historyFileLimit) ? size - UInt64(historyFileLimit) : 0
        guard (try? handle.seek(toOffset: start)) != nil, let data = try? handle.read(upToCount: historyFileLimit) else { return [] }
        var lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        if start > 0, !lines.isEmpty { lines.removeFirst() }
        return lines.filter { !$0.isEmpty && $0.count <= MeshLineEditor.lineLimit }.map(String.init).suffix(MeshLineEditor.historyLimit)
    }

    /// Commands whose lines carry secrets, kept out of the history: passwords, channel
    /// secrets, PINs, remote commands (which may set a password), imported links.
    static let secretCommands: Set<String> = ["login", "channel-set", "cmd", "import", "private-key"]

    /// Writes the history for this user only (created with mode 0600), without secrets.
    static func saveHistory(_ lines: [String], to path: String) {
        let kept = lines.filter { line in
            let words = line.trimmingCharacters(in: .whitespaces).drop { $0 == "/" }.split(separator: " ").map { $0.lowercased() }
            guard let command = words.first else { return false }
            if secretCommands.contains(command) { return false }
            return !(command == "set" && words.dropFirst().first == "pin")
        }
        let text = kept.suffix(MeshLineEditor.historyLimit).joined(separator: "\n") + "\n"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { return }
        fchmod(descriptor, 0o600)
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        try? handle.write(contentsOf: Data(text.utf8))
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
    private var dropping = false

    init(handle: FileHandle, limit: Int) {
        self.handle = handle
        self.limit = limit
    }

    /// ``next()`` with its blocking reads off the cooperative thread pool, in a loop that
    /// keeps at most one line's worth of bytes (a longer line is dropped as it arrives).
    mutating func nextLine() async throws -> String?? {
        while !ended, !buffer.contains(0x0A) {
            if buffer.count > limit {
                // Too long already: drop what there is, and the rest up to its newline.
                buffer.removeAll()
                dropping = true
            }
            let handle = self.handle
            let chunk: Data? = try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async {
                    do { continuation.resume(returning: try handle.read(upToCount: 4_096)) } catch { continuation.resume(throwing: error) }
                }
            }
            guard let chunk, !chunk.isEmpty else {
                ended = true
                break
            }
            if dropping, let newline = chunk.firstIndex(of: 0x0A) {
                dropping = false
                buffer = Data(chunk[(newline + 1)...])
                return .some(nil)
            }
            if !dropping { buffer.append(chunk) }
        }
        if dropping {
            dropping = false
            return .some(nil)
        }
        return try next()
    }

    /// The next line (without its newline; nil inside for one too long), or nil at the end.
    mutating func next() throws -> String?? {
        var skipping = false
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                var line = buffer[buffer.startIndex..<newline]
                buffer = Data(buffer[(newline + 1)...])
                if line.last == 0x0D { line = line.dropLast() }
                if skipping || line.count > limit { return .some(nil) }
                return .some(String(decoding: line, as: UTF8.self))
            }
            if buffer.count > limit {
                skipping = true
                buffer.removeAll()
            }
            if ended {
                guard !buffer.isEmpty || skipping else { return nil }
                var line = buffer
                buffer.removeAll()
                if skipping { return .some(nil) }
                if line.last == 0x0D { line = line.dropLast() }
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
