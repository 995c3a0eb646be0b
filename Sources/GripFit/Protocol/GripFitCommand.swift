import Foundation

/// A command to the device (guide §1.4): UTF-8, newline-terminated, written with response.
public enum GripFitCommand: Sendable, Hashable {
    /// `CMD:PING` → `S:PONG`.
    case ping
    /// `CMD:TARE` → `S:TARED` (or `S:NOT_READY`).
    case tare
    /// `CMD:RATE:<ms>` → `S:RATE:<ms>`; use ``rate(ms:)`` to build it with validation.
    case setRate(ms: Int)
    /// `CMD:INFO` → `D:GRIPFIT,<version>`.
    case info

    /// Sample intervals the firmware accepts.
    public static let rateRange: ClosedRange<Int> = 20...1000

    /// Why a command cannot be built.
    public enum InvalidCommand: Error, Hashable, Sendable, LocalizedError {
        /// The sample interval is outside 20...1000 ms.
        case rateOutOfRange(Int)

        public var errorDescription: String? {
            switch self {
            case .rateOutOfRange(let ms): "The sample interval must be between 20 and 1000 ms (got \(ms) ms)."
            }
        }
    }

    /// A rate command, or ``InvalidCommand/rateOutOfRange(_:)`` outside 20...1000 ms.
    public static func rate(ms: Int) throws -> GripFitCommand {
        guard rateRange.contains(ms) else { throw InvalidCommand.rateOutOfRange(ms) }
        return .setRate(ms: ms)
    }

    /// The command's text without the newline.
    public var text: String {
        switch self {
        case .ping: "CMD:PING"
        case .tare: "CMD:TARE"
        case .setRate(let ms): "CMD:RATE:\(ms)"
        case .info: "CMD:INFO"
        }
    }

    /// The bytes to write: the text and `\n`.
    public var data: Data { Data((text + "\n").utf8) }

    /// Parses a command line as the firmware does (used by the emulator); nil if unknown.
    public init?(line: String) {
        switch line {
        case "CMD:PING": self = .ping
        case "CMD:TARE": self = .tare
        case "CMD:INFO": self = .info
        default:
            guard line.hasPrefix("CMD:RATE:"), let ms = Int(line.dropFirst(9)) else { return nil }
            self = .setRate(ms: ms)
        }
    }
}
