/// A scriptable force curve: squeezes with ramp, hold and release over a baseline, plus noise.
///
/// Shared by the device emulator and the mock manager so both produce the same realistic
/// squeeze shape (guide §2.3) rather than random numbers.
public struct ForceProfile: Sendable, Hashable {
    /// One squeeze of the dynamometer.
    public struct Squeeze: Sendable, Hashable {
        /// When the squeeze starts, from the profile's origin.
        public var start: Duration
        /// Time to reach the peak.
        public var ramp: Duration
        /// Time at the peak.
        public var hold: Duration
        /// Time back to no force.
        public var release: Duration
        /// The peak, in raw ADC counts above the baseline.
        public var peak: Int32

        /// Creates a squeeze.
        public init(start: Duration, ramp: Duration = .seconds(1), hold: Duration = .milliseconds(1500), release: Duration = .milliseconds(800), peak: Int32) {
            self.start = start
            self.ramp = ramp
            self.hold = hold
            self.release = release
            self.peak = peak
        }

        /// How long the squeeze lasts.
        public var length: Duration { ramp + hold + release }

        /// Force above the baseline at `t` from the profile's origin (smooth ramps).
        func value(at t: Duration) -> Double {
            let local = t - start
            guard local >= .zero, local < length else { return 0 }
            let peak = Double(self.peak)
            if local < ramp { return peak * ease(local / ramp) }
            if local < ramp + hold { return peak }
            return peak * (1 - ease((local - ramp - hold) / release))
        }

        private func ease(_ x: Double) -> Double {
            let x = min(max(x, 0), 1)
            return x * x * (3 - 2 * x)
        }
    }

    /// The squeezes, by start time.
    public var squeezes: [Squeeze]
    /// When set, the squeezes repeat with this period.
    public var period: Duration?
    /// The raw value with no force (an untared HX711 rarely reads zero).
    public var baseline: Int32
    /// Peak-to-peak noise amplitude in raw counts.
    public var noise: Int32

    /// Creates a profile.
    public init(squeezes: [Squeeze], period: Duration? = nil, baseline: Int32 = 84_000, noise: Int32 = 300) {
        self.squeezes = squeezes
        self.period = period
        self.baseline = baseline
        self.noise = noise
    }

    /// A squeeze every 5 seconds, 1 s ramp, 1.5 s hold, 0.8 s release, peaking ~420 000 counts.
    public static let standard = ForceProfile(
        squeezes: [Squeeze(start: .milliseconds(500), peak: 420_000)], period: .seconds(5))

    /// No force at all (just the baseline and noise).
    public static let idle = ForceProfile(squeezes: [])

    /// The raw value at `t` from the origin, before noise, clamped to the 24-bit range.
    public func value(at t: Duration) -> Int32 {
        var local = t
        if let period, period > .zero, t >= period {
            let periods = (t / period).rounded(.down)
            local = t - period * periods
        }
        let force = squeezes.reduce(0.0) { $0 + $1.value(at: local) }
        return Self.clamp(Double(baseline) + force)
    }

    /// The value with `noise` applied from a unit random number in [0, 1).
    public func value(at t: Duration, noiseSample: Double) -> Int32 {
        let jitter = (noiseSample - 0.5) * Double(noise)
        return Self.clamp(Double(value(at: t)) + jitter)
    }

    package static func clamp(_ value: Double) -> Int32 {
        Int32(min(max(value.rounded(), -8_388_608), 8_388_607))
    }
}
