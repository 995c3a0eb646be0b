/// A status the device reports with `S:` (guide §1.3).
public enum GripFitStatus: Sendable, Hashable {
    /// `S:READY`: the sensor works.
    case ready
    /// `S:NOT_READY`: the HX711 is not responding — a hardware fault, not a zero reading.
    case notReady
    /// `S:PONG`: the answer to `CMD:PING`.
    case pong
    /// `S:TARED`: the scale was zeroed at the current load.
    case tared
    /// `S:RATE:<ms>`: the sample interval changed.
    case rate(ms: Int)
    /// Any other status, kept verbatim.
    case unknown(String)

    /// The status as the device writes it after `S:`.
    public var wireValue: String {
        switch self {
        case .ready: "READY"
        case .notReady: "NOT_READY"
        case .pong: "PONG"
        case .tared: "TARED"
        case .rate(let ms): "RATE:\(ms)"
        case .unknown(let raw): raw
        }
    }
}

/// One complete message from the device.
public enum GripFitMessage: Sendable, Hashable {
    /// `R:<value>`: a raw signed 24-bit HX711 reading (after tare: relative to the tare point).
    case reading(Int32)
    /// `S:<status>`.
    case status(GripFitStatus)
    /// `D:GRIPFIT,<version>`: the firmware version.
    case deviceInfo(firmwareVersion: String)

    /// The message as the device sends it, without the trailing newline.
    public var line: String {
        switch self {
        case .reading(let value): "R:\(value)"
        case .status(let status): "S:\(status.wireValue)"
        case .deviceInfo(let version): "\(GripFitBLEConstants.firmwareMessagePrefix)\(version)"
        }
    }
}
