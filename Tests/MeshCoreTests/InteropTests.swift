import Foundation
import Testing

/// The public Python client `meshcore` (installed into `.venv` by `scripts/test-peers`) drives
/// `tether mesh emulate --listen` through app start, device query, contacts, time, battery, a
/// direct message with its ack and the echo bot's reply, and a channel message.
@Suite struct InteropTests {
    /// The repository root: this file is `Tests/MeshCoreTests/InteropTests.swift`.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The `tether` executable built next to the running test bundle (any `--scratch-path`).
    static func tetherExecutable() -> URL? {
        let candidates = [Bundle.main.executableURL, URL(fileURLWithPath: CommandLine.arguments[0])]
            .compactMap { $0?.resolvingSymlinksInPath() }
        for executable in candidates {
            var directory = executable.deletingLastPathComponent()
            // On macOS the runner sits inside Foo.xctest/Contents/MacOS; on Linux beside the products.
            for _ in 0..<4 {
                let tether = directory.appendingPathComponent("tether")
                if FileManager.default.isExecutableFile(atPath: tether.path) { return tether }
                directory = directory.deletingLastPathComponent()
            }
        }
        return nil
    }

    @Test func thePythonClientDrivesTheEmulatorOverTCP() async throws {
        let python = Self.root.appendingPathComponent(".venv/bin/python")
        let script = Self.root.appendingPathComponent("Tests/MeshCoreTests/Interop/meshcore_interop.py")
        try #require(
            FileManager.default.isExecutableFile(atPath: python.path),
            "\(python.path) is missing: run scripts/test-peers to install meshcore==2.3.17 into .venv")
        let tether = try #require(
            Self.tetherExecutable(),
            "the tether executable was not found next to the test bundle (\(CommandLine.arguments[0])); build it with --build-tests")

        let process = Process()
        process.executableURL = python
        process.arguments = [
            script.path, "--emulator-cmd", tether.path, "mesh", "emulate", "--listen", "127.0.0.1:0", "--until-stdin-closes",
        ]
        process.currentDirectoryURL = Self.root
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        let status = try await withSafetyTimeout(120) {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int32, any Error>) in
                process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
                do { try process.run() } catch { continuation.resume(throwing: error) }
            }
        }
        let stdout = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(status == 0, "interop script failed:\n\(stdout)\n\(stderr.suffix(4_000))")

        let line = try #require(stdout.split(separator: "\n").last, "no summary printed; stderr:\n\(stderr.suffix(4_000))")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(summary["ok"] as? Bool == true, "\(summary)")
        #expect((summary["self_info"] as? [String: Any])?["name"] as? String == "Tether Base")
        #expect((summary["device_info"] as? [String: Any])?["fw ver"] as? Int == 13)
        #expect((summary["contacts"] as? [String])?.contains("Echo") == true)
        #expect((summary["time"] as? [String: Any])?["backwards_error"] as? Int == 6)
        #expect((summary["battery"] as? [String: Any])?["level"] as? Int == 4_012)
        let direct = summary["direct_message"] as? [String: Any]
        #expect(direct?["flood"] as? Int == 1)
        #expect(direct?["trip_time"] as? Int == 1_600)
        #expect((summary["echo_reply"] as? [String: Any])?["text"] as? String == "echo: hello from python")
        #expect(summary["emulator_exit"] as? Int == 0)
    }
}
