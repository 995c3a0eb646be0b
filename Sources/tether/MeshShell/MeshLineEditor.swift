import Foundation

/// The interactive prompt's line editing: typing and deleting anywhere in the line, ←/→,
/// Home/End (Ctrl-A/Ctrl-E), ↑/↓ through the history, Tab to complete, Ctrl-U to clear the
/// line, Ctrl-C to drop it, Ctrl-D on an empty line to leave.
/// Where the line editor reads keys from (the terminal in raw mode; bytes in tests).
protocol MeshKeySource: Sendable {
    /// The next bytes typed; throws when input ends.
    func read() async throws -> [UInt8]
}

extension RawTerminal: MeshKeySource {}

final class MeshLineEditor {
    private let terminal: any MeshKeySource
    private let console: MeshConsole
    private(set) var history: [String] = []
    /// The most lines the history keeps.
    static let historyLimit = 500
    /// The longest line the editor takes.
    static let lineLimit = 4_096
    /// Keys read but not used yet (a paste of several lines), and a sequence cut between reads.
    private var queued: [Key] = []
    private var decoder = KeyDecoder()

    init(terminal: any MeshKeySource, console: MeshConsole, history: [String] = []) {
        self.terminal = terminal
        self.console = console
        self.history = Array(history.suffix(Self.historyLimit))
    }

    /// Reads one line; nil at Ctrl-D on an empty line or when input ends.
    /// `complete` returns the completions of the text before the cursor.
    func readLine(prompt: String, complete: (String) async -> [String]) async -> String? {
        var line: [Character] = []
        var cursor = 0
        var browsing = history.count
        var draft: [Character] = []
        func redraw() {
            // What is drawn is made safe (a completed name may hold control characters); the
            // cursor moves back by columns, so wide characters count twice.
            let text = terminalSafe(String(line))
            console.setEditing(prompt: prompt, line: text)
            let back = terminalSafe(String(line[cursor...])).reduce(0) { $0 + terminalColumns($1) }
            console.draw("\r\u{1B}[2K" + prompt + text + (back > 0 ? "\u{1B}[\(back)D" : ""))
        }
        redraw()
        while true {
            if queued.isEmpty {
                guard let bytes = try? await terminal.read() else {
                    console.endEditing()
                    return nil
                }
                queued = decoder.push(bytes)
                continue
            }
            while !queued.isEmpty {
                let key = queued.removeFirst()
                switch key {
                case .character(let character):
                    guard line.count < Self.lineLimit else { continue }
                    line.insert(character, at: cursor)
                    cursor += 1
                case .backspace where cursor > 0:
                    line.remove(at: cursor - 1)
                    cursor -= 1
                case .delete where cursor < line.count:
                    line.remove(at: cursor)
                case .left where cursor > 0: cursor -= 1
                case .right where cursor < line.count: cursor += 1
                case .home: cursor = 0
                case .end: cursor = line.count
                case .clear:
                    line.removeAll()
                    cursor = 0
                case .up where browsing > 0:
                    if browsing == history.count { draft = line }
                    browsing -= 1
                    line = Array(history[browsing])
                    cursor = line.count
                case .down where browsing < history.count:
                    browsing += 1
                    line = browsing == history.count ? draft : Array(history[browsing])
                    cursor = line.count
                case .tab:
                    let before = String(line[..<cursor])
                    let options = await complete(before)
                    if options.count == 1, let only = options.first {
                        line.replaceSubrange(0..<cursor, with: Array(only))
                        cursor = only.count
                    } else if options.count > 1 {
                        let common = Self.commonPrefix(options)
                        if common.count > before.count {
                            line.replaceSubrange(0..<cursor, with: Array(common))
                            cursor = common.count
                        } else {
                            // The candidates without the command in front of them.
                            let shown = options.map { option in
                                option.firstIndex(of: " ").map { String(option[option.index(after: $0)...]) } ?? option
                            }
                            console.print(terminalSafe(shown.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: "  ")))
                        }
                    }
                case .interrupt:
                    console.draw("^C")
                    line.removeAll()
                    cursor = 0
                    console.print("")
                case .endOfInput where line.isEmpty:
                    console.endEditing()
                    console.draw("\r\n")
                    return nil
                case .enter:
                    let text = String(line)
                    console.endEditing()
                    console.draw("\r\n")
                    if !text.trimmingCharacters(in: .whitespaces).isEmpty, history.last != text {
                        history.append(text)
                        if history.count > Self.historyLimit { history.removeFirst() }
                    }
                    return text
                default:
                    continue
                }
                redraw()
            }
        }
    }

    static func commonPrefix(_ words: [String]) -> String {
        guard var prefix = words.first else { return "" }
        for word in words.dropFirst() {
            while !word.hasPrefix(prefix) { prefix.removeLast() }
        }
        return prefix
    }

    /// A key the editor acts on.
    enum Key: Equatable {
        case character(Character)
        case backspace, delete, left, right, up, down, home, end, tab, enter, interrupt, endOfInput, clear, other
    }

    /// Turns terminal bytes into keys: UTF-8 characters, control keys and ANSI escape sequences.
    struct KeyDecoder {
        private var buffer: [UInt8] = []

        mutating func push(_ bytes: [UInt8]) -> [Key] {
            buffer += bytes
            var keys: [Key] = []
            while let first = buffer.first {
                switch first {
                case 0x1B:
                    // ESC [ X, ESC O X, ESC [ n ~; a lone ESC (or ESC and a character) is no key.
                    guard buffer.count >= 2, buffer[1] == 0x5B || buffer[1] == 0x4F else {
                        buffer.removeFirst()
                        keys.append(.other)
                        continue
                    }
                    // The rest of the sequence comes with the next read.
                    guard buffer.count >= 3 else { return keys }
                    var end = 2
                    while end < buffer.count, !(0x40...0x7E).contains(buffer[end]), buffer[end] >= 0x20, end < 16 { end += 1 }
                    // A control byte or a sequence too long for any key: the escape was no key,
                    // and what follows is read as typed.
                    if end < buffer.count, !(0x40...0x7E).contains(buffer[end]) {
                        buffer.removeFirst()
                        keys.append(.other)
                        continue
                    }
                    guard end < buffer.count else { return keys }
                    let sequence = Array(buffer[2...end])
                    buffer.removeFirst(end + 1)
                    switch sequence {
                    case [0x41]: keys.append(.up)
                    case [0x42]: keys.append(.down)
                    case [0x43]: keys.append(.right)
                    case [0x44]: keys.append(.left)
                    case [0x48], [0x31, 0x7E]: keys.append(.home)
                    case [0x46], [0x34, 0x7E]: keys.append(.end)
                    case [0x33, 0x7E]: keys.append(.delete)
                    default: keys.append(.other)
                    }
                case 0x7F, 0x08: buffer.removeFirst(); keys.append(.backspace)
                case 0x0D, 0x0A: buffer.removeFirst(); keys.append(.enter)
                case 0x09: buffer.removeFirst(); keys.append(.tab)
                case 0x03: buffer.removeFirst(); keys.append(.interrupt)
                case 0x04: buffer.removeFirst(); keys.append(.endOfInput)
                case 0x01: buffer.removeFirst(); keys.append(.home)
                case 0x05: buffer.removeFirst(); keys.append(.end)
                case 0x15: buffer.removeFirst(); keys.append(.clear)
                case 0x00..<0x20: buffer.removeFirst(); keys.append(.other)
                default:
                    // A byte that starts no UTF-8 sequence is taken alone (and is no character).
                    let length = switch first {
                    case 0xC2...0xDF: 2
                    case 0xE0...0xEF: 3
                    case 0xF0...0xF4: 4
                    default: 1
                    }
                    guard buffer.count >= length else { return keys }
                    let scalarBytes = Array(buffer.prefix(length))
                    buffer.removeFirst(length)
                    if let text = String(validating: scalarBytes, as: UTF8.self), let character = text.first {
                        keys.append(.character(character))
                    } else {
                        keys.append(.other)
                    }
                }
            }
            return keys
        }
    }
}
