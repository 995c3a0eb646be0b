import Foundation

/// One line of `tether gripfit parse --json`: what a raw line from the device decodes to.
///
/// `{"type":"reading","raw":N}`, `{"type":"status","status":"TARED"}` (`"RATE"` with
/// `"ms"`), `{"type":"deviceInfo","version":"1.0"}`, or `{"type":"invalid","input":…,"reason":…}`.
/// A `reading` has the fields of the CLI's live reading record (`gripfit stream --json`) that a
/// line alone can tell: `raw` is the device's value, before calibration.
public struct GripFitParseReport: Encodable, Sendable, Hashable {
    /// The record's type: `reading`, `status`, `deviceInfo` or `invalid`.
    public let type: String
    /// The reading's value, as the device sent it.
    public var raw: Int32?
    /// The status word (`RATE` for rate confirmations).
    public var status: String?
    /// The interval of a `RATE` status.
    public var ms: Int?
    /// The firmware version of an `info` line.
    public var version: String?
    /// The rejected line.
    public var input: String?
    /// Why it was rejected.
    public var reason: String?

    /// An `invalid` record for a line that was not decoded at all (`reason` says why: too
    /// long), so nothing on the input goes unreported.
    public init(overlong reason: String) {
        type = "invalid"
        self.reason = reason
    }

    /// Describes a parse result for `raw`.
    public init(_ result: Result<GripFitMessage, BLEMessageParser.ParseFailure>, raw: String) {
        switch result {
        case .success(.reading(let value)):
            type = "reading"
            self.raw = value
        case .success(.status(let status)):
            type = "status"
            switch status {
            case .rate(let ms):
                self.status = "RATE"
                self.ms = ms
            default:
                self.status = status.wireValue
            }
        case .success(.deviceInfo(let version)):
            type = "deviceInfo"
            self.version = version
        case .failure(let failure):
            type = "invalid"
            self.input = raw
            reason = failure.description
        }
    }
}
