import Foundation
import Testing
import MeshCore
import TetherCore
import TetherTesting

/// The public Python client `meshcore` (installed into `.venv` by `scripts/test-peers`) drives
/// `tether mesh emulate --listen` through app start, device query, contacts, time, battery, a
/// direct message with its ack and the echo bot's reply, and a channel message.
@Suite struct InteropTests {
    /// The repository root: this file is `Tests/MeshCoreTests/InteropTests.swift`.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func thePythonClientDrivesTheEmulatorOverTCP() async throws {
        let python = Self.root.appendingPathComponent(".venv/bin/python")
        let script = Self.root.appendingPathComponent("Tests/MeshCoreTests/Interop/meshcore_interop.py")
        try #require(
            FileManager.default.isExecutableFile(atPath: python.path),
            "\(python.path) is missing: run scripts/test-peers to install meshcore==2.3.17 into .venv")
        let tether = try #require(
            TestProducts.tether(),
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

        // The device and remote-node commands, with the expectations the prompt test shares.
        #expect(summary["tx_power"] as? Int == 10)
        #expect(summary["stats_core"] as? Int == 4_012)
        // The library sends tuning as given: 2500 and 1500 are the firmware's ×1000 for 2.5 and 1.5.
        #expect(summary["tuning"] as? [String: Int] == ["rx_dly": 2_500, "af": 1_500])
        #expect(summary["custom_vars"] as? [String: String] == ["gps": "1"])
        #expect(summary["custom_var_unknown_error"] as? Int == 6)
        #expect(summary["channel_ops_secret"] as? String == Self.hex(MeshChannelSecret.hashtag("#ops")))
        #expect((summary["own_card"] as? String)?.hasPrefix("meshcore://11") == true)
        let signer = try #require((summary["signer_key"] as? String).flatMap { Data(hexString: $0) })
        let signature = try #require((summary["signature"] as? String).flatMap { Data(hexString: $0) })
        #expect(MeshCoreSession.verify(signature: signature, of: Data("hello from python".utf8), publicKey: signer))
        if let card = summary["own_card"] as? String {
            let parsed = try MeshContactCard(uri: card)
            #expect(parsed.advert.isSignatureValid && parsed.advert.publicKey == signer && parsed.advert.data.name == "Tether Base")
        }
        #expect(summary["export_unheard_contact_error"] as? Int == 2)
        #expect(summary["import_contact"] as? Bool == true)
        #expect((summary["telemetry_self"] as? [[String: Any]])?.first?["value"] as? Double == 4.01)
        let login = summary["login"] as? [String: Any]
        #expect(login?["is_admin"] as? Bool == true && login?["fw_ver_level"] as? Int == 2)
        #expect(summary["login_wrong_password"] is NSNull)
        #expect(summary["login_path_update"] as? Bool == true)
        #expect((summary["status"] as? [String: Any])?["bat"] as? Int == 3_950)
        #expect((summary["room_login"] as? [String: Any])?["permissions"] as? Int == 2)
        #expect((summary["sensor_telemetry"] as? [[String: Any]])?.compactMap { $0["type"] as? String } == ["voltage", "temperature", "humidity"])
        #expect((summary["acl"] as? [[String: Any]])?.count == 1)
        #expect((summary["owner"] as? [String: String])?["owner"] == "Tether emulator")
        #expect((summary["anon"] as? [String: Any])?["regions"] as? String == "*,europe")
        #expect(((summary["trace"] as? [String: Any])?["path"] as? [Any])?.count == 2)
        #expect((summary["path_discovery"] as? [String: Any])?["out_path"] as? String == "01")
        #expect(summary["cli_reply"] as? String == "v1.17.1 (Build: 14-Aug-2026)")
        #expect((summary["cli_sent"] as? [String: Any])?["expected_ack"] as? String == "00000000")
        #expect((summary["node_discovery"] as? [[String: Any]])?.count == 2)
        #expect((summary["path_hash_mode"] as? [String: Int]) == ["read": 1, "invalid_error": 6])
        // Where the emulator knowingly differs from the firmware (see the emulator's documentation).
        #expect(summary["firmware_deviations"] as? [String] == [
            "EXPORT_PRIVATE_KEY returns the 32-byte seed followed by the public key; the firmware returns the 64-byte expanded key (clamped scalar, hash prefix)",
        ])
    }

    static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }
}

/// Tether's own client, the `tether mesh` prompt fed a script with `--json`, drives an emulator
/// started the same way as for the Python client, with the same expectations.
@Suite struct CLIInteropTests {
    @Test func theMeshPromptDrivesTheEmulatorOverTCP() async throws {
        let tether = try #require(TestProducts.tether(), "the tether executable was not found next to the test bundle")
        let emulator = Process()
        emulator.executableURL = tether
        emulator.arguments = ["mesh", "emulate", "--listen", "127.0.0.1:0", "--until-stdin-closes", "--quiet"]
        let emulatorOutput = Pipe(), emulatorInput = Pipe()
        emulator.standardOutput = emulatorOutput
        emulator.standardError = FileHandle.nullDevice
        emulator.standardInput = emulatorInput
        try emulator.run()
        defer { if emulator.isRunning { emulator.terminate() } }
        let first = try await withSafetyTimeout(30) { () -> String in
            var line = Data()
            while true {
                let byte = try emulatorOutput.fileHandleForReading.read(upToCount: 1) ?? Data()
                guard let value = byte.first else { throw CLIInteropFailure("the emulator ended before listening") }
                if value == 0x0A { return String(decoding: line, as: UTF8.self) }
                line.append(value)
            }
        }
        let port = try #require(first.split(separator: ":").last.map(String.init), "no port in \(first)")

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cli-interop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("commands.txt")
        try Data(Self.script.utf8).write(to: script)
        let client = Process()
        client.executableURL = tether
        client.arguments = ["mesh", "--tcp", "127.0.0.1:\(port)", "--json", "--database", directory.appendingPathComponent("mesh.sqlite").path]
        client.standardInput = try FileHandle(forReadingFrom: script)
        // Files, not pipes: the output is read once the client has ended, whatever its size.
        let outputURL = directory.appendingPathComponent("stdout.txt"), errorURL = directory.appendingPathComponent("stderr.txt")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        client.standardOutput = try FileHandle(forWritingTo: outputURL)
        client.standardError = try FileHandle(forWritingTo: errorURL)
        let status = try await withSafetyTimeout(120) {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int32, any Error>) in
                client.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
                do { try client.run() } catch { continuation.resume(throwing: error) }
            }
        }
        let stdout = String(decoding: try Data(contentsOf: outputURL), as: UTF8.self)
        let stderr = String(decoding: try Data(contentsOf: errorURL), as: UTF8.self)
        let records = stdout.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
        #expect(records.count == stdout.split(separator: "\n").count, "every line is one JSON object:\n\(stdout)")
        func all(_ type: String) -> [[String: Any]] { records.filter { $0["type"] as? String == type } }
        func setting(_ name: String) -> String? { all("setting").last { $0["name"] as? String == name }?["value"] as? String }

        // The one deliberate mistake is reported, and fails the run.
        #expect(status == 1, "stderr:\n\(stderr.suffix(2_000))")
        #expect(all("error").count == 1 && all("error").first?["command"] as? String == "bogus", "\(all("error"))")

        let info = try #require(all("radioInfo").first, "no radioInfo in:\n\(stdout)")
        #expect(info["name"] as? String == "Tether Base" && info["firmwareVersionCode"] as? Int == 13)
        #expect(all("contact").contains { $0["name"] as? String == "Echo" })
        #expect(setting("tx") == "10" && setting("tuning") == "2.5,1.5" && setting("gps") == "1")
        #expect((all("stats").first { $0["kind"] as? String == "core" }?["values"] as? [String: Double])?["batteryMillivolts"] == 4_012)
        #expect(all("channelSet").first?["secret"] as? String == InteropTests.hex(MeshChannelSecret.hashtag("#ops")))
        let card = try #require(all("card").first)
        #expect(card["signatureValid"] as? Bool == true && card["name"] as? String == "Tether Base")
        #expect((card["uri"] as? String)?.hasPrefix("meshcore://11") == true)
        let signature = try #require(all("signature").first)
        let key = try #require((info["publicKey"] as? String).flatMap { Data(hexString: $0) })
        let signed = try #require((signature["signature"] as? String).flatMap { Data(hexString: $0) })
        #expect(MeshCoreSession.verify(signature: signed, of: Data("hello from tether".utf8), publicKey: key))
        #expect(all("login").first?["admin"] as? Bool == true)
        #expect(((all("status").first?["status"]) as? [String: Any])?["batteryMillivolts"] as? Int == 3_950)
        let telemetry = try #require(all("telemetry").first?["readings"] as? [[String: Any]])
        #expect(telemetry.first?["kind"] as? String == "voltage" && (telemetry.first?["value"] as? [Double]) == [4.01])
        #expect((all("trace").first?["hops"] as? [Any])?.count == 1)
        #expect(all("discoveredPath").first?["outPath"] as? String == "01")
        #expect(all("commandReply").first?["reply"] as? String == "v1.17.1 (Build: 14-Aug-2026)")
        #expect(all("owner").first?["owner"] as? String == "Tether emulator")
        #expect(Set(all("discovered").compactMap { $0["name"] as? String }) == ["Ridge Repeater", "Weather Station"])
        #expect(all("path").first?["outPath"] as? String == "0102" && all("favourite").first?["favourite"] as? Bool == true)
        #expect(all("contact").last?["name"] as? String == "Bob" && all("contact").last?["path"] as? String == "2 hop(s)")
        // A command's reply is not also shown (or stored) as a chat message.
        #expect(!all("message").contains { ($0["text"] as? String)?.hasPrefix("v1.17.1") == true })
        #expect(all("message").contains { $0["direction"] as? String == "incoming" && $0["text"] as? String == "echo: hello from tether" },
                "no echo reply in:\n\(stdout)")

        try emulatorInput.fileHandleForWriting.close()
        let exit = try await withSafetyTimeout(30) {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int32, any Error>) in
                DispatchQueue.global().async {
                    emulator.waitUntilExit()
                    continuation.resume(returning: emulator.terminationStatus)
                }
            }
        }
        #expect(exit == 0)
    }

    static let script = """
        info
        contacts
        set tx 10
        get tx
        set tuning 2.5,1.5
        get tuning
        set gps 1
        get gps
        stats core
        channel-set 2 #ops
        card
        sign hello from tether
        login "Ridge Repeater" password
        status "Ridge Repeater"
        telemetry
        trace "Ridge Repeater"
        discover-path Bob
        cmd "Ridge Repeater" ver
        owner "Ridge Repeater"
        discover all
        set-path Bob 01,02
        favourite Bob on
        contacts Bob
        bogus
        send Echo hello from tether
        wait 3
        quit
        """
}

struct CLIInteropFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
