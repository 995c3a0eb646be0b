import ArgumentParser
import Foundation
import Kiro
import Testing
@testable import tether

/// `tether kiro encode`: every command's printed example is a model it encodes, and the model
/// is given one way at a time.
@Suite struct KiroEncodeTests {
    @Test(arguments: KiroCommands.CommandName.allCases)
    func everyExampleEncodes(command: KiroCommands.CommandName) throws {
        let kiroCommand = try command.command(from: Data(command.example.utf8))
        #expect(try !kiroCommand.packet().isEmpty)
    }

    @Test func theModelIsGivenOnceAndExampleTakesNone() throws {
        #expect(throws: (any Error).self) { try KiroCommands.Encode.parse(["weather"]) }
        #expect(throws: (any Error).self) { try KiroCommands.Encode.parse(["weather", "{}", "--json", "{}"]) }
        #expect(throws: (any Error).self) { try KiroCommands.Encode.parse(["weather", "{}", "--example"]) }
        #expect(try KiroCommands.Encode.parse(["--example", "day-pack"]).example)
        #expect(try KiroCommands.Encode.parse(["weather", "--json", "{}"]).legacyModel == "{}")
    }

    @Test func aModelFileLargerThanTheBoundIsRefused() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("kiro-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(repeating: 0x20, count: KiroCommands.Encode.maximumModelBytes + 1).write(to: URL(fileURLWithPath: path))
        #expect(throws: CLIError.self) { try KiroCommands.Encode.read("@" + path) }
        try Data(KiroCommands.CommandName.weather.example.utf8).write(to: URL(fileURLWithPath: path))
        #expect(try KiroCommands.Encode.read("@" + path) == Data(KiroCommands.CommandName.weather.example.utf8))
    }
}
