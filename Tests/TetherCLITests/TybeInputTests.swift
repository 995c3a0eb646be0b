import Foundation
import Testing
@testable import tether

/// `tether tybe type -` types what standard input holds, within a bound, and only UTF-8 text.
@Suite struct TybeInputTests {
    private func input(_ bytes: Data) throws -> String {
        // A file, not a pipe: a pipe's buffer (64 KiB) would block the writer before the read.
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tybe-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: url) }
        try bytes.write(to: url)
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        return try TybeCommands.TypeText.input("-", from: handle)
    }

    @Test func dashReadsStandardInputAndAnythingElseIsTheText() throws {
        #expect(try input(Data("안녕하세요 hello\n".utf8)) == "안녕하세요 hello\n")
        #expect(try TybeCommands.TypeText.input("plain text") == "plain text")
    }

    @Test func tooMuchOrNonUTF8InputIsRefused() throws {
        #expect(throws: CLIError.self) { try input(Data(repeating: 0x61, count: TybeCommands.TypeText.maximumInputBytes + 1)) }
        #expect(try input(Data(repeating: 0x61, count: TybeCommands.TypeText.maximumInputBytes)).count == TybeCommands.TypeText.maximumInputBytes)
        #expect(throws: CLIError.self) { try input(Data([0xFF, 0xFE])) }
    }
}
