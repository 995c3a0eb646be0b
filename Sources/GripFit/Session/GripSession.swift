import Foundation

/// One sample of a stored session: a reading, timed relative to the session's start.
public struct GripSample: Sendable, Hashable, Codable {
    /// Seconds since the session started (negative if the reading arrived before the start).
    public var offset: TimeInterval
    /// The raw HX711 value.
    public var raw: Int32
    /// The calibrated force.
    public var force: Double

    /// Creates a sample.
    public init(offset: TimeInterval, raw: Int32, force: Double) {
        self.offset = offset
        self.raw = raw
        self.force = force
    }

    /// Creates a sample from a reading taken during a session that started at `startedAt`.
    public init(_ reading: GripReading, startedAt: Date) {
        self.init(offset: reading.receivedAt.timeIntervalSince(startedAt), raw: reading.raw, force: reading.force)
    }
}

/// What is kept of a finished grip test (guide §3.4): peak and average force, duration and
/// start time.
public struct GripSessionSummary: Sendable, Hashable, Codable, Identifiable {
    /// The session's identity.
    public var id: UUID
    /// When the session started.
    public var startedAt: Date
    /// How long the session lasted, in seconds.
    public var duration: TimeInterval
    /// The highest ``GripReading/force`` recorded; 0 without samples.
    public var maxForce: Double
    /// The mean ``GripReading/force`` over all recorded readings; 0 without samples.
    public var averageForce: Double
    /// How many readings were recorded, including any not kept as samples.
    public var sampleCount: Int

    /// Creates a summary.
    public init(
        id: UUID, startedAt: Date, duration: TimeInterval, maxForce: Double, averageForce: Double, sampleCount: Int
    ) {
        self.id = id
        self.startedAt = startedAt
        self.duration = duration
        self.maxForce = maxForce
        self.averageForce = averageForce
        self.sampleCount = sampleCount
    }
}

/// A finished session as it is stored: its summary and the samples that were kept.
///
/// `samples` may be shorter than ``GripSessionSummary/sampleCount`` when the session hit its
/// sample limit; the summary still describes every reading.
public struct GripSessionRecord: Sendable, Hashable, Codable, Identifiable {
    /// The statistics of the whole session.
    public var summary: GripSessionSummary
    /// The kept samples, in the order they were recorded.
    public var samples: [GripSample]

    /// Creates a record.
    public init(summary: GripSessionSummary, samples: [GripSample]) {
        self.summary = summary
        self.samples = samples
    }

    /// The session's identity (the summary's).
    public var id: UUID { summary.id }
}

/// Records the readings of one grip test in memory (guide §3.4: hold readings in memory and
/// persist only when the test is complete).
///
/// Storage is bounded: after ``maxSamples`` readings, further readings are no longer kept in
/// ``readings``, but the count, sum, maximum and last reading time are running values, so
/// ``summary(endedAt:)`` stays exact however long the session runs.
public struct GripSession: Sendable {
    /// One hour at the default 10 Hz sample rate.
    public static let defaultMaxSamples = 36_000

    /// The session's identity, carried into its summary and record.
    public let id: UUID
    /// When the session started; sample offsets are relative to it.
    public let startedAt: Date
    /// The most readings kept in ``readings``.
    public let maxSamples: Int
    /// The kept readings, oldest first: the first ``maxSamples`` recorded.
    public private(set) var readings: [GripReading] = []

    /// How many readings were recorded, kept or not.
    public private(set) var count = 0
    private var forceSum = 0.0
    private var maxForce = -Double.infinity
    private var lastReceivedAt: Date?

    /// Creates an empty session.
    ///
    /// - Parameters:
    ///   - id: The session's identity.
    ///   - startedAt: When the session started.
    ///   - maxSamples: The most readings to keep; must not be negative.
    public init(id: UUID = UUID(), startedAt: Date, maxSamples: Int = GripSession.defaultMaxSamples) {
        precondition(maxSamples >= 0, "maxSamples must not be negative")
        self.id = id
        self.startedAt = startedAt
        self.maxSamples = maxSamples
    }

    /// Whether readings were recorded beyond ``maxSamples`` and are therefore missing from
    /// ``readings``.
    public var isTruncated: Bool { count > readings.count }

    /// Adds a reading to the statistics, and keeps it while fewer than ``maxSamples`` are kept.
    public mutating func record(_ reading: GripReading) {
        count += 1
        forceSum += reading.force
        maxForce = max(maxForce, reading.force)
        lastReceivedAt = reading.receivedAt
        if readings.count < maxSamples {
            readings.append(reading)
        }
    }

    /// The session's statistics.
    ///
    /// - Parameter endedAt: When the session ended; defaults to the last reading's time, or
    ///   the start when there is none. The duration is never negative, so a clock that stepped
    ///   back yields 0 rather than a nonsensical value.
    public func summary(endedAt: Date? = nil) -> GripSessionSummary {
        let end = endedAt ?? lastReceivedAt ?? startedAt
        return GripSessionSummary(
            id: id,
            startedAt: startedAt,
            duration: max(0, end.timeIntervalSince(startedAt)),
            maxForce: count > 0 ? maxForce : 0,
            averageForce: count > 0 ? forceSum / Double(count) : 0,
            sampleCount: count
        )
    }

    /// The session ready to store: its summary and the kept readings as samples.
    ///
    /// - Parameter endedAt: As for ``summary(endedAt:)``.
    public func record(endedAt: Date? = nil) -> GripSessionRecord {
        GripSessionRecord(
            summary: summary(endedAt: endedAt),
            samples: readings.map { GripSample($0, startedAt: startedAt) }
        )
    }
}
