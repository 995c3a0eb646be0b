#if os(macOS) || os(Linux)
import Foundation
import Testing
import TetherTesting

/// Tether Studio in a real headless Chromium: `Browser/studio_browser.py` (selenium from
/// `.venv`, Debian's chromium and chromium-driver, all installed by `scripts/test-peers`)
/// starts `tether studio` on the simulator and goes through the screens; each of its checks is
/// asserted here. Screenshots of the screens are left in `.build/studio-screenshots/`.
@Suite("Tether Studio: in Chromium")
struct StudioBrowserTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The checks the script makes, in its order; each must be reported and pass.
    static let checks = [
        "screens_load_without_console_errors",
        "devices_scan_lists_the_simulated_devices",
        "gripfit_chart_receives_live_points",
        "gripfit_tare_zeroes_the_readings",
        "gripfit_records_a_squeeze_and_saves_the_session",
        "flockfinder_detection_appears",
        "tybe_keyboard_keys_become_frames_and_the_pills_turn_green",
        "tybe_compose_reaches_the_korean_host",
        "mesh_message_is_confirmed_and_a_reply_appears",
        "kiro_pages_follow_the_device_and_an_edited_day_is_pushed",
        "device_text_renders_as_text",
    ]

    /// Everything `handle` yields until its end, read on a thread outside the concurrency pool.
    static func readToEnd(_ handle: FileHandle) async -> Data {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: handle.readDataToEndOfFile()) }
        }
    }

    @Test func theScreensWorkInARealBrowser() async throws {
        let python = Self.root.appendingPathComponent(".venv/bin/python")
        try #require(FileManager.default.isExecutableFile(atPath: python.path),
                     "\(python.path) is missing: run scripts/test-peers (it installs selenium into .venv)")
        for program in ["/usr/bin/chromium", "/usr/bin/chromedriver"] {
            try #require(FileManager.default.isExecutableFile(atPath: program),
                         "\(program) is missing: run scripts/test-peers (it installs Debian's chromium and chromium-driver)")
        }
        let tether = try #require(TestProducts.tether(), "the tether executable was not found next to the test bundle; build with --build-tests")
        let process = Process()
        process.executableURL = python
        process.arguments = [
            Self.root.appendingPathComponent("Tests/TetherStudioTests/Browser/studio_browser.py").path,
            "--tether", tether.path,
            "--screenshots", Self.root.appendingPathComponent(".build/studio-screenshots").path,
        ]
        process.currentDirectoryURL = Self.root
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        // Both pipes drained while it runs (a chatty Chromium must not block on a full pipe), on
        // threads of their own: a blocking read on the concurrency pool (two threads on two
        // cores) would starve every other test of this process for the script's whole run.
        async let stdoutData = Self.readToEnd(output.fileHandleForReading)
        async let stderrData = Self.readToEnd(errors.fileHandleForReading)
        let status = try await within(420, "the browser script") {
            // Past the bound, the script is interrupted (it stops Chromium and the studio it
            // started) and, if that does not end it, terminated: the wait ends either way.
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int32, any Error>) in
                    process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
                    do { try process.run() } catch { continuation.resume(throwing: error) }
                }
            } onCancel: {
                process.interrupt()
                DispatchQueue.global().asyncAfter(deadline: .now() + 15) { if process.isRunning { process.terminate() } }
            }
        }
        let stdout = String(decoding: await stdoutData, as: UTF8.self)
        let stderr = String(decoding: await stderrData, as: UTF8.self)
        let lines = stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let results = Dictionary(lines.compactMap { line in (line["check"] as? String).map { ($0, line) } }, uniquingKeysWith: { first, _ in first })
        for check in Self.checks {
            let result = results[check]
            #expect(result != nil, "\(check) was not reported; stderr:\n\(stderr.suffix(3_000))")
            #expect(result?["ok"] as? Bool == true, "\(check): \(result?["detail"] ?? "—")\n\(result?["trace"] ?? "")")
        }
        #expect(status == 0, "the browser script failed:\n\(stdout.suffix(3_000))\n\(stderr.suffix(3_000))")
        #expect(lines.last?["ok"] as? Bool == true)
    }
}
#endif
