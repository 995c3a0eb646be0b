/// A rough distance band derived from RSSI (BLE protocol spec, "Signal Strength").
///
/// The spec's ranges share their end points (-30…-50, -50…-70, -70…-85, -85…-100); each
/// shared boundary belongs to the nearer band, and values outside the table extend the
/// outermost bands:
///
/// | RSSI (dBm)          | Band         | Distance   |
/// |---------------------|--------------|------------|
/// | ≥ -50 (incl. > -30) | ``veryClose`` | < 2 m      |
/// | -51 … -70           | ``close``     | 2–10 m     |
/// | -71 … -85           | ``medium``    | 10–30 m    |
/// | ≤ -86 (incl. < -100)| ``far``       | > 30 m     |
public enum Proximity: String, Sendable, Hashable, Codable, CaseIterable {
    /// Under about 2 metres.
    case veryClose
    /// About 2–10 metres.
    case close
    /// About 10–30 metres.
    case medium
    /// Over about 30 metres.
    case far

    /// The band for a signal strength in dBm (boundaries belong to the nearer band).
    public init(rssi: Int) {
        switch rssi {
        case (-50)...: self = .veryClose
        case (-70)...: self = .close
        case (-85)...: self = .medium
        default: self = .far
        }
    }

    /// A human-readable label: "Very close", "Close", "Medium", "Far".
    public var label: String {
        switch self {
        case .veryClose: "Very close"
        case .close: "Close"
        case .medium: "Medium"
        case .far: "Far"
        }
    }

    /// The spec's rough distance: "< 2 m", "2-10 m", "10-30 m", "> 30 m".
    public var distance: String {
        switch self {
        case .veryClose: "< 2 m"
        case .close: "2-10 m"
        case .medium: "10-30 m"
        case .far: "> 30 m"
        }
    }
}
