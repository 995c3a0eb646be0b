// The BlueZ guest probe: what the TCP-forwarded bus cannot carry, run inside the QEMU guest
// next to the real bluetoothd (a static build shared over 9p). RealStackTests on the host runs
// one case per test through the guest's shell and asserts the facts it prints.
//
// usage: BlueZGuestProbe CASE CENTRAL-ADAPTER PERIPHERAL-ADAPTER
//   CASE: bus | sockets | burst | just-works | passkey | wrong-passkey
// Prints one line `PROBE-RESULT {json}` (string facts) and exits 0, or 1 when the case failed
// (the facts then hold `failure`). Logs go to standard error.
#if os(Linux)
import Foundation
import Logging

LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = ProcessInfo.processInfo.environment["TETHER_PROBE_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .notice
    return handler
}

let arguments = CommandLine.arguments
guard arguments.count == 4, let probeCase = ProbeCase(rawValue: arguments[1]) else {
    FileHandle.standardError.write(Data("usage: BlueZGuestProbe \(ProbeCase.allCases.map(\.rawValue).joined(separator: "|")) CENTRAL-ADAPTER PERIPHERAL-ADAPTER\n".utf8))
    exit(2)
}
let probe = Probe(central: arguments[2], peripheral: arguments[3])
var facts: [String: String]
var status: Int32 = 0
do {
    facts = try await probe.run(probeCase)
} catch {
    facts = probe.facts.value
    facts["failure"] = "\(error)"
    status = 1
}
await probe.close()
let json = (try? JSONSerialization.data(withJSONObject: facts, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
print("PROBE-RESULT \(json)")
exit(status)
#else
print("BlueZGuestProbe runs on Linux only (in the BlueZ test guest)")
#endif
