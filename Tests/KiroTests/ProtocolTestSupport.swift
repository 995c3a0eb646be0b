import Foundation
import Logging

@testable import Kiro

/// Bytes from hex text such as `"05 00 06 1A"`; spaces and newlines are ignored. Test vectors are
/// written out by hand in this form so they do not depend on the encoder.
func protocolHex(_ text: String) -> Data {
    let digits = text.filter { !$0.isWhitespace }
    precondition(digits.count % 2 == 0, "odd number of hex digits in a test vector")
    var bytes: [UInt8] = []
    var index = digits.startIndex
    while index < digits.endIndex {
        let next = digits.index(index, offsetBy: 2)
        bytes.append(UInt8(digits[index..<next], radix: 16)!)
        index = next
    }
    return Data(bytes)
}

/// The ASCII bytes of `text` with a one-byte length in front, for readable vectors.
func protocolLengthPrefixed(_ text: String) -> [UInt8] {
    let bytes = Array(text.utf8)
    return [UInt8(bytes.count)] + bytes
}

/// Counts what a logger receives, per level, so tests can check that rejects are logged.
final class ProtocolLogRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var levels: [Logger.Level] = []

    func record(_ level: Logger.Level) {
        lock.lock()
        defer { lock.unlock() }
        levels.append(level)
    }

    func count(_ level: Logger.Level) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return levels.filter { $0 == level }.count
    }

    var logger: Logger {
        Logger(label: "test.kiro.protocol") { _ in ProtocolRecordingHandler(recorder: self) }
    }
}

private struct ProtocolRecordingHandler: LogHandler {
    let recorder: ProtocolLogRecorder
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        recorder.record(event.level)
    }
}
