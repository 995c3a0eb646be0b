import Foundation

/// One decoder under fuzzing: what it does with an input, and the inputs it starts from (the
/// test vectors of its protocol). An input that breaks an invariant traps, which libFuzzer
/// reports as a crash together with the input.
struct FuzzTarget: Sendable {
    let name: String
    let seeds: @Sendable () -> [Data]
    let run: @Sendable (Data) -> Void
}

/// Stops the run with `message` when `condition` does not hold (a finding, not an error).
func invariant(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("invariant broken: \(message())") }
}

/// Every target, by name.
let fuzzTargets: [String: FuzzTarget] = Dictionary(uniqueKeysWithValues: [
    newlineFramer, lengthPrefixedReassembler,
    gripFitLines, kiroEvents, kiroPackets, tybeStatusConfig, tybeFrames, terminalKeys,
    flockFinderJSON, meshCoreFrames, meshCoreCommands, meshCoreStream,
    dbusMessages,
].map { ($0.name, $0) })
