import ArgumentParser

/// The one rule for every `--seconds`: a finite number of seconds, more than 0 (or 0 where
/// "none" makes sense) and at most a day, refused with the same sentence everywhere. The
/// options are parsed unconditionally, so `--seconds -1` is a value to refuse, not an unknown
/// option `-1`.
enum Seconds {
    /// The longest duration any command runs for.
    static let maximum: Double = 86_400

    /// Refuses `value` unless it is within the rule (`maximum`: a command's own, shorter cap).
    static func validate(_ value: Double, allowingZero: Bool = false, maximum: Double = Seconds.maximum) throws {
        let lowest = allowingZero ? value >= 0 : value > 0
        guard value.isFinite, lowest, value <= maximum else {
            let most = String(format: "%g", maximum)
            throw ValidationError(allowingZero ? "--seconds must be from 0 to \(most)" : "--seconds must be more than 0 and at most \(most)")
        }
    }
}
