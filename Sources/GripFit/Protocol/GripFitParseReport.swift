import Foundation

/// One line of `tether gripfit parse --json`: what a raw line from the device decodes to.
///
/// `{"kind":"reading","value":N}`, `{"kind":"status","status":"TARED"}` (`"RATE"` with
/// `"ms"`), `{"kind":"info","version":"1.0"}`, or `{"kind":"invalid","raw":…,"reason":…}`.
public struct GripFitParseReport: Encodable, Sendable, Hashable {
    /// `reading`, `status`, `info` or `invalid`.
    public let kind: String
    /// The reading's value.
    public var value: Int32?
    /// The status word (`RATE` for rate confirmations).
    public var status: String?
    /// The interval of a `RATE` status.
    public var ms: Int?
    /// The firmware version of an `info` line.
    public var version: String?
    /// The rejected line.
    public var raw: String?
    /// Why it was rejected.
    public var reason: String?

    /// An `invalid` record for a line that was not decoded at all (`reason` says why: too
    /// long), so nothing on the input goes unreported.
    public init(overlong reason: String) {
        kind = "invalid"
        self.reason = reason
    }

    /// Describes a parse result for `raw`.
    public init(_ result: Result<GripFitMessage, BLEMessageParser.ParseFailure>, raw: String) {
        switch result {
        case .success(.reading(let value)):
            kind = "reading"
            self.value = value
        case .success(.status(let status)):
            kind = "status"
            switch status {
            case .rate(let ms):
                self.status = "RATE"
                self.ms = ms
            default:
                self.status = status.wireValue
            }
        case .success(.deviceInfo(let version)):
            kind = "info"
            self.version = version
        case .failure(let failure):
            kind = "invalid"
            self.raw = raw
            reason = failure.description
        }
    }
}
