import Foundation

/// Turns one complete line from the device into a typed message (guide §2.4).
///
/// Pure and BLE-free: both the real manager and the mock feed it lines. Malformed lines are
/// reported as ``ParseFailure`` (callers decide whether to log them); nothing here can crash.
public struct BLEMessageParser: Sendable {
    /// Why a line was rejected.
    public enum ParseFailure: Error, Hashable, Sendable, CustomStringConvertible {
        /// The line has no known `R:`, `S:` or `D:` tag.
        case unknownTag(String)
        /// An `R:` line whose value is not an integer.
        case nonNumericReading(String)
        /// An `R:` value outside the HX711's 24-bit signed range.
        case readingOutOfRange(String)
        /// An `S:RATE:` line without a valid interval.
        case invalidRate(String)
        /// A `D:` line that is not `D:GRIPFIT,<version>`.
        case invalidDeviceInfo(String)
        /// An empty line.
        case empty

        public var description: String {
            switch self {
            case .unknownTag(let line): "unknown tag in \(line.debugDescription)"
            case .nonNumericReading(let line): "non-numeric reading \(line.debugDescription)"
            case .readingOutOfRange(let line): "reading outside the 24-bit range: \(line.debugDescription)"
            case .invalidRate(let line): "invalid rate status \(line.debugDescription)"
            case .invalidDeviceInfo(let line): "invalid device info \(line.debugDescription)"
            case .empty: "empty line"
            }
        }
    }

    /// The HX711's range: 24-bit signed.
    public static let readingRange: ClosedRange<Int32> = -8_388_608...8_388_607

    /// Creates a parser.
    public init() {}

    /// The message in one line (without its newline; trailing carriage returns are ignored),
    /// or why there is none.
    public func decode(_ line: String) throws(ParseFailure) -> GripFitMessage {
        var line = Substring(line)
        while line.hasSuffix("\r") { line = line.dropLast() }
        return try parseTrimmed(String(line)).get()
    }

    private func parseTrimmed(_ line: String) -> Result<GripFitMessage, ParseFailure> {
        guard !line.isEmpty else { return .failure(.empty) }
        if line.hasPrefix("R:") {
            let text = line.dropFirst(2)
            let digits = text.first == "-" || text.first == "+" ? text.dropFirst() : text
            guard !digits.isEmpty, digits.allSatisfy(\.isASCIIDigit) else { return .failure(.nonNumericReading(line)) }
            // Anything that does not fit Int32 is certainly outside the 24-bit range too.
            guard let value = Int32(text), Self.readingRange.contains(value) else { return .failure(.readingOutOfRange(line)) }
            return .success(.reading(value))
        }
        if line.hasPrefix("S:") {
            let status = String(line.dropFirst(2))
            switch status {
            case "READY": return .success(.status(.ready))
            case "NOT_READY": return .success(.status(.notReady))
            case "PONG": return .success(.status(.pong))
            case "TARED": return .success(.status(.tared))
            default:
                if status.hasPrefix("RATE:") {
                    guard let ms = Int(status.dropFirst(5)), ms > 0 else { return .failure(.invalidRate(line)) }
                    return .success(.status(.rate(ms: ms)))
                }
                return .success(.status(.unknown(status)))
            }
        }
        if line.hasPrefix("D:") {
            guard line.hasPrefix(GripFitBLEConstants.firmwareMessagePrefix) else { return .failure(.invalidDeviceInfo(line)) }
            let version = String(line.dropFirst(GripFitBLEConstants.firmwareMessagePrefix.count))
            guard !version.isEmpty, !version.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 0x20 } == true }) else {
                return .failure(.invalidDeviceInfo(line))
            }
            return .success(.deviceInfo(firmwareVersion: version))
        }
        return .failure(.unknownTag(line))
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
