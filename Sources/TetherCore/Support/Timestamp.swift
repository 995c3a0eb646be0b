import Foundation

/// The one way Tether writes a moment as text: ISO 8601, UTC, with milliseconds
/// (`2026-11-25T16:52:36.123Z`).
///
/// Every JSON line the `tether` CLI prints and every export uses it, so a consumer parses one
/// format; milliseconds because readings and detections arrive many times a second.
public enum Timestamp {
    private static let withMilliseconds = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let withoutFraction = Date.ISO8601FormatStyle()

    /// `date` as ISO 8601 in UTC with milliseconds.
    public static func string(from date: Date) -> String {
        date.formatted(withMilliseconds)
    }

    /// A moment written as ISO 8601 with or without fractional seconds (nil when `text` is
    /// neither).
    public static func date(from text: String) -> Date? {
        (try? Date(text, strategy: withMilliseconds)) ?? (try? Date(text, strategy: withoutFraction))
    }

    /// A device's clock, in whole seconds since 1970 (how MeshCore and Kiro stamp events), as
    /// ISO 8601.
    public static func string(unixSeconds: UInt32) -> String {
        string(from: Date(timeIntervalSince1970: TimeInterval(unixSeconds)))
    }
}
