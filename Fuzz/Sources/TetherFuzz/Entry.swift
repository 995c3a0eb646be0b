import Foundation
import Logging

/// The target chosen by TETHER_FUZZ_TARGET at start-up.
nonisolated(unsafe) private var selected: FuzzTarget?

/// libFuzzer calls this once before fuzzing: picks the target, silences the decoders' logs
/// (a warning per bad input would cost more than the decoding), and writes the seeds into
/// TETHER_FUZZ_SEEDS when given (libFuzzer reads its corpus directories after this).
@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    LoggingSystem.bootstrap { _ in SwiftLogNoOpLogHandler() }
    let environment = ProcessInfo.processInfo.environment
    guard let name = environment["TETHER_FUZZ_TARGET"], let target = fuzzTargets[name] else {
        let names = fuzzTargets.keys.sorted().joined(separator: ", ")
        FileHandle.standardError.write(Data("TETHER_FUZZ_TARGET must be one of: \(names)\n".utf8))
        exit(2)
    }
    selected = target
    if let directory = environment["TETHER_FUZZ_SEEDS"] {
        let folder = URL(fileURLWithPath: directory, isDirectory: true)
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (index, seed) in target.seeds().enumerated() {
            try? seed.write(to: folder.appendingPathComponent("seed-\(index)"))
        }
    }
    return 0
}

/// libFuzzer calls this with each input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = start.map { Data(bytes: $0, count: count) } ?? Data()
    selected?.run(data)
    return 0
}

@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// The executable's entry point. SwiftPM links an executable's `main` to `<module>_main`, so
/// libFuzzer's own `main` is not used: this hands the command line to libFuzzer's driver.
@_cdecl("TetherFuzz_main")
public func tetherFuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { start, size in fuzzerTestOneInput(start, size) }
}
