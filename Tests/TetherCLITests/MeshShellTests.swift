import Foundation
import Testing
@testable import tether

/// The mesh prompt's pieces: words and quotes, completion, the script reader and the keys.
@Suite struct MeshShellTests {
    @Test func wordsSplitLikeAShell() {
        #expect(meshShellWords("login \"Ridge Repeater\" pass word") == ["login", "Ridge Repeater", "pass", "word"])
        #expect(meshShellWords("send 'Bob' it\\'s  fine ") == ["send", "Bob", "it's", "fine"])
        #expect(meshShellWords("set name \"\"") == ["set", "name", ""])
        #expect(meshShellWords("a\\ b") == ["a b"])
        #expect(meshShellWords("say \"unterminated") == nil)
        #expect(meshShellWords("trailing\\") == nil)
        #expect(meshShellWords("   ") == [])
        for word in ["plain", "two words", "quo\"te", "back\\slash", ""] {
            #expect(meshShellWords("x " + meshShellQuoted(word)) == ["x", word])
        }
    }

    @Test func everyCatalogEntryIsReachableAndUnique() {
        let names = MeshShellCatalog.entries.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(MeshShellCatalog.entry("EXIT")?.name == "quit")
        #expect(MeshShellCatalog.entry("neighbors")?.name == "neighbours")
        #expect(MeshShellCatalog.entry("nope") == nil)
        for entry in MeshShellCatalog.entries { #expect(entry.usage.hasPrefix(entry.name), "\(entry.name)") }
    }

    @Test func tabCompletesCommandsThenWhatTheyTake() {
        let contacts = ["Ridge Repeater", "Rita", "Bob"]
        #expect(MeshShellRunner.completions(for: "sta", contacts: contacts) == ["stats ", "status "])
        #expect(MeshShellRunner.completions(for: "/lo", contacts: contacts) == ["/login ", "/logout "])
        #expect(MeshShellRunner.completions(for: "login Ri", contacts: contacts) == ["login \"Ridge Repeater\" ", "login Rita "])
        #expect(MeshShellRunner.completions(for: "login \"Ridge R", contacts: contacts) == ["login \"Ridge Repeater\" "])
        #expect(MeshShellRunner.completions(for: "get multi", contacts: contacts) == ["get multi_acks "])
        #expect(MeshShellRunner.completions(for: "stats r", contacts: contacts) == ["stats radio "])
        #expect(MeshShellRunner.completions(for: "bogus x", contacts: contacts).isEmpty)
        #expect(MeshLineEditor.commonPrefix(["status ", "stats "]) == "stat")
    }

    @Test func scriptsAreReadALineAtATimeAndLongLinesSkipped() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("mesh-script-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: url) }
        let long = String(repeating: "x", count: 40)
        try Data("info\r\n\(long)\nstats core\nlast".utf8).write(to: url)
        var reader = LineReader(handle: try FileHandle(forReadingFrom: url), limit: 32)
        #expect(try reader.next() == .some("info"))
        #expect(try reader.next() == .some(nil))
        #expect(try reader.next() == .some("stats core"))
        #expect(try reader.next() == .some("last"))
        #expect(try reader.next() == nil)
        // A line far over the limit is skipped without being kept whole.
        try Data((String(repeating: "y", count: 20_000) + "\nok\n").utf8).write(to: url)
        var big = LineReader(handle: try FileHandle(forReadingFrom: url), limit: 32)
        #expect(try big.next() == .some(nil))
        #expect(try big.next() == .some("ok"))
        #expect(try big.next() == nil)
    }

    @Test func scriptLinesAreReadOffThePoolWithinTheirBound() async throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("mesh-script-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: url) }
        // A megabyte without a newline is dropped as it arrives, then reading goes on.
        try (Data(count: 1 << 20) + Data("\nok\ntail".utf8)).write(to: url)
        var reader = LineReader(handle: try FileHandle(forReadingFrom: url), limit: 64)
        #expect(try await reader.nextLine() == .some(nil))
        #expect(try await reader.nextLine() == .some("ok"))
        #expect(try await reader.nextLine() == .some("tail"))
        #expect(try await reader.nextLine() == nil)
        // A carriage return is not part of the line, at the limit or at the end of input.
        try Data((String(repeating: "a", count: 64) + "\r\nfavourite Bob on\r").utf8).write(to: url)
        var crlf = LineReader(handle: try FileHandle(forReadingFrom: url), limit: 64)
        #expect(try await crlf.nextLine() == .some(String(repeating: "a", count: 64)))
        #expect(try await crlf.nextLine() == .some("favourite Bob on"))
        // Input that ends inside an overlong line reports it once.
        try Data(count: 10_000).write(to: url)
        var cut = LineReader(handle: try FileHandle(forReadingFrom: url), limit: 64)
        #expect(try await cut.nextLine() == .some(nil))
        #expect(try await cut.nextLine() == nil)
    }

    @Test func keysDecodeFromTerminalBytes() {
        var decoder = MeshLineEditor.KeyDecoder()
        #expect(decoder.push(Array("hé".utf8)) == [.character("h"), .character("é")])
        #expect(decoder.push([0x1B, 0x5B, 0x41, 0x1B, 0x5B, 0x44, 0x1B, 0x5B, 0x33, 0x7E]) == [.up, .left, .delete])
        #expect(decoder.push([0x7F, 0x09, 0x0D, 0x03, 0x04, 0x01, 0x05, 0x15]) == [.backspace, .tab, .enter, .interrupt, .endOfInput, .home, .end, .clear])
        // A character split across reads waits for its last byte.
        let snowman = Array("☃".utf8)
        #expect(decoder.push(Array(snowman.prefix(2))).isEmpty)
        #expect(decoder.push(Array(snowman.suffix(1))) == [.character("☃")])
        // So does an escape sequence.
        var fresh = MeshLineEditor.KeyDecoder()
        #expect(fresh.push([0x1B, 0x5B, 0x31]).isEmpty)
        #expect(fresh.push([0x7E]) == [.home])
        // Invalid UTF-8 is no character.
        #expect(fresh.push([0xFF]) == [.other])
    }

    /// Bytes as a terminal would deliver them, one read at a time.
    final class Keys: MeshKeySource, @unchecked Sendable {
        private let lock = NSLock()
        private var reads: [[UInt8]]
        init(_ reads: [[UInt8]]) { self.reads = reads }
        func read() async throws -> [UInt8] {
            try lock.withLock {
                guard !reads.isEmpty else { throw CLIError("end of input") }
                return reads.removeFirst()
            }
        }
    }

    @Test func thePromptEditsLinesAndKeepsWhatWasPastedAhead() async {
        let keys = Keys([
            Array("info\nbatt".utf8), Array("ery\n".utf8),
            // Edit: type "stxs", go left twice, delete one, then Home and insert.
            Array("stxs".utf8), [0x1B, 0x5B, 0x44, 0x1B, 0x5B, 0x44, 0x7F], [0x01], Array("/".utf8), [0x0D],
            // History: up twice is "battery"; Ctrl-U clears; Tab completes a contact.
            [0x1B, 0x5B, 0x41, 0x1B, 0x5B, 0x41, 0x0D], [0x15] + Array("login Ri".utf8) + [0x09, 0x0D],
            [0x04],
        ])
        let editor = MeshLineEditor(terminal: keys, console: MeshConsole())
        var lines: [String] = []
        while let line = await editor.readLine(prompt: "> ", complete: { MeshShellRunner.completions(for: $0, contacts: ["Ridge Repeater"]) }) {
            lines.append(line)
        }
        #expect(lines == ["info", "battery", "/sxs", "battery", "login \"Ridge Repeater\" "])
        #expect(editor.history == ["info", "battery", "/sxs", "battery", "login \"Ridge Repeater\" "])
    }

    @Test func historyLeavesOutPasswordsAndIsPrivate() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("mesh-history-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        MeshShellRunner.saveHistory(["info", "login Hill secret", "/login Hill s2", "set pin 123456", "channel-set 3 x 00", "set tx 5", "stats"], to: path)
        #expect(MeshShellRunner.loadHistory(path) == ["info", "set tx 5", "stats"])
        let permissions = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
        // The newest lines are read when the file is larger than the bound.
        let many = (0..<30_000).map { "line \($0)" }.joined(separator: "\n") + "\n"
        try Data(many.utf8).write(to: URL(fileURLWithPath: path))
        #expect(MeshShellRunner.loadHistory(path).last == "line 29999")
        #expect(MeshShellRunner.loadHistory(path).count == MeshLineEditor.historyLimit)
        // An oversized line in the file is not loaded.
        try Data(("ok\n" + String(repeating: "z", count: MeshLineEditor.lineLimit + 1) + "\nfine\n").utf8).write(to: URL(fileURLWithPath: path))
        #expect(MeshShellRunner.loadHistory(path) == ["ok", "fine"])
    }

    @Test func anEscapeThatNeverEndsIsNoKeyAndWhatFollowsIsTyped() {
        var decoder = MeshLineEditor.KeyDecoder()
        #expect(decoder.push([0x1B, 0x5B, 0x0D]) == [.other, .character("["), .enter])
        let long = [0x1B, 0x5B] + Array(repeating: UInt8(0x30), count: 30)
        let keys = decoder.push(long)
        #expect(keys.first == .other && keys.count == 32)
    }
}
