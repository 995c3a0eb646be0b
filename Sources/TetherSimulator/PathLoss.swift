import Foundation
import TetherCore

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
