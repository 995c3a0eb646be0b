import Foundation

/// One squeeze of the dynamometer as a grip-test screen shows it.
public struct Squeeze: Sendable, Hashable {
    /// When the force rose above the threshold.
    public let startedAt: Date
    /// The last reading's time (the end, once the squeeze is over).
    public let lastReadingAt: Date
    /// The highest force above the resting level.
    public let peak: Double
    /// The mean force above the resting level.
    public let average: Double
    /// How many readings it spans.
    public let sampleCount: Int

    /// How long it has lasted.
    public var duration: TimeInterval { max(0, lastReadingAt.timeIntervalSince(startedAt)) }
}

/// Finds squeezes in a stream of readings (guide §3.2: the view model computes the maximum and
/// tracks the squeeze duration).
///
/// The resting level follows the readings while nobody squeezes (an untared HX711 rests far
/// from zero, and drifts); a squeeze starts when the force exceeds it by ``threshold`` and ends
/// when it falls back below half of that (the hysteresis keeps noise at the threshold from
/// cutting one squeeze into many). Pure and bounded: it keeps running sums, never the readings.
public struct SqueezeDetector: Sendable {
    /// Force above rest that starts a squeeze, in the readings' unit (a value that is not finite
    /// and positive falls back to the default).
    public var threshold: Double {
        didSet { if !(threshold.isFinite && threshold > 0) { threshold = Self.defaultThreshold } }
    }
    /// The default threshold.
    public static let defaultThreshold = 20_000.0
    /// A squeeze longer than this is a load left on (or a missed tare): it ends, and the
    /// resting level starts again from the current force.
    public var maximumDuration: TimeInterval = 60
    /// The resting level, once a reading has been seen.
    public private(set) var rest: Double?
    /// The squeeze under way, if any.
    public private(set) var current: Squeeze?

    private var sum = 0.0

    /// Creates a detector. The default suits raw HX711 counts (a firm squeeze is hundreds of
    /// thousands above rest, the noise a few hundred); give calibrated readings their own.
    public init(threshold: Double = SqueezeDetector.defaultThreshold) {
        self.threshold = threshold.isFinite && threshold > 0 ? threshold : Self.defaultThreshold
    }

    /// Takes one reading; returns the squeeze it ended, if it ended one.
    public mutating func push(_ reading: GripReading) -> Squeeze? {
        let force = reading.force
        guard force.isFinite else { return nil }
        guard let rest else {
            self.rest = force
            return nil
        }
        let above = force - rest
        if let squeeze = current {
            if reading.receivedAt.timeIntervalSince(squeeze.startedAt) > maximumDuration {
                current = nil
                sum = 0
                self.rest = force
                return squeeze
            }
            if above < threshold / 2 {
                current = nil
                sum = 0
                self.rest = rest + (force - rest) * 0.2
                return squeeze
            }
            sum += above
            current = Squeeze(startedAt: squeeze.startedAt, lastReadingAt: reading.receivedAt, peak: max(squeeze.peak, above),
                              average: sum / Double(squeeze.sampleCount + 1), sampleCount: squeeze.sampleCount + 1)
            return nil
        }
        if above > threshold {
            sum = above
            current = Squeeze(startedAt: reading.receivedAt, lastReadingAt: reading.receivedAt, peak: above, average: above, sampleCount: 1)
        } else if above < threshold / 2 {
            // Follow noise and slow drift; not the onset of a squeeze (between half the
            // threshold and the threshold), which would lift the rest under the peak.
            self.rest = rest + (force - rest) * 0.2
        }
        return nil
    }

    /// Forgets the resting level (after a tare or a new connection); returns the squeeze that
    /// was under way, so that its peak is not lost.
    @discardableResult
    public mutating func reset() -> Squeeze? {
        let unfinished = current
        rest = nil
        current = nil
        sum = 0
        return unfinished
    }
}
