import Foundation

/// A phone-screen usage interval (unlock → lock).
///
/// Usage interrupts focus (protocol §9.2–9.3). An interval whose ``lockedAt`` is before its
/// ``unlockedAt`` is malformed and ignored by ``FocusTimeCalculator``; one where both are equal
/// is a momentary unlock and still interrupts.
public struct ScreenActivity: Sendable, Hashable, Codable {
    /// When the phone was unlocked.
    public var unlockedAt: Date
    /// When the phone was locked again.
    public var lockedAt: Date

    /// Creates an interval from unlock to lock.
    public init(unlockedAt: Date, lockedAt: Date) {
        self.unlockedAt = unlockedAt
        self.lockedAt = lockedAt
    }

    /// Whether this interval touches the closed range `[start, end]`.
    func overlaps(from start: Date, to end: Date) -> Bool {
        lockedAt >= unlockedAt && lockedAt >= start && unlockedAt <= end
    }
}

/// Where screen unlock intervals come from (Screen Time on iOS; scripted in tests and the simulator).
public protocol ScreenActivitySource: Sendable {
    /// The usage intervals that overlap `[start, end]`, including ones that began before
    /// `start` or end after `end`; callers clip them, so sources need not.
    func activity(from start: Date, to end: Date) async throws -> [ScreenActivity]
}

/// A ``ScreenActivitySource`` that serves a fixed list of intervals.
public struct StaticScreenActivitySource: ScreenActivitySource {
    /// Every interval this source knows, in the order given.
    public let intervals: [ScreenActivity]

    /// Creates a source serving `intervals`.
    public init(_ intervals: [ScreenActivity]) {
        self.intervals = intervals
    }

    /// The intervals that overlap `[start, end]` (touching an edge counts), in the order given.
    public func activity(from start: Date, to end: Date) async throws -> [ScreenActivity] {
        intervals.filter { $0.overlaps(from: start, to: end) }
    }
}
