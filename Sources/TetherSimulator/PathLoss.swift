import Foundation

/// Turns distance into RSSI with the log-distance path-loss model and seeded noise.
struct PathLoss {
    /// RSSI at one metre (typical for a phone and a small peripheral at 0 dBm).
    var rssiAtOneMetre: Double = -59
    /// Path-loss exponent: 2 in free space, higher indoors.
    var exponent: Double = 2.2
    /// Spread of the noise in dB.
    var noise: Double = 2

    func rssi(distance: Double, using rng: inout SplitMix64) -> Int {
        let d = max(0.1, distance)
        let mean = rssiAtOneMetre - 10 * exponent * log10(d)
        // Sum of uniforms: a cheap, bounded, roughly normal jitter.
        let jitter = (rng.nextUnit() + rng.nextUnit() + rng.nextUnit() - 1.5) * noise
        return Int((mean + jitter).rounded())
    }
}

/// A small deterministic PRNG so a seeded simulation replays exactly.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    /// Seeds the generator.
    public init(seed: UInt64) { state = seed }
    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// A value in [0, 1).
    public mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
