#if os(macOS) || os(Linux)
import Testing
@testable import tether

/// `tether studio`'s options: loopback unless the user says otherwise.
@Suite("tether studio options")
struct StudioCommandTests {
    @Test func loopbackIsTheDefaultAndAnythingElseNeedsAllowRemote() throws {
        let plain = try StudioCommand.parse([])
        #expect(plain.host == "127.0.0.1" && plain.port == 8080 && !plain.allowRemote)
        #expect(try StudioCommand.parse(["--host", "::1", "--port", "0"]).port == 0)
        #expect(try StudioCommand.parse(["--host", "localhost"]).host == "localhost")
        #expect(throws: (any Error).self) { try StudioCommand.parse(["--host", "0.0.0.0"]) }
        #expect(throws: (any Error).self) { try StudioCommand.parse(["--host", "192.168.1.20"]) }
        #expect(try StudioCommand.parse(["--host", "0.0.0.0", "--allow-remote"]).allowRemote)
        #expect(throws: (any Error).self) { try StudioCommand.parse(["--port", "65536"]) }
        #expect(throws: (any Error).self) { try StudioCommand.parse(["--host", "bad host"]) }
        // A name that only starts like a loopback address is not one.
        #expect(throws: (any Error).self) { try StudioCommand.parse(["--host", "127.evil.example"]) }
        #expect(try StudioCommand.parse(["--host", "127.0.0.2"]).host == "127.0.0.2")
        #expect(try StudioCommand.parse(["--host", "[::1]"]).host == "[::1]")
    }
}
#endif
