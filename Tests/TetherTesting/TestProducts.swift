import Foundation

/// The products a test runs as processes.
public enum TestProducts {
    /// The `tether` executable built next to the running test bundle (any `--scratch-path`).
    public static func tether() -> URL? {
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
}
