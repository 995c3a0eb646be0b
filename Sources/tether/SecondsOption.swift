import ArgumentParser

/// The one rule for every `--seconds`: a finite number of seconds, more than 0 (or 0 where
/// "none" makes sense) and at most a day, refused with the same sentence everywhere. The
/// options are parsed unconditionally, so `--seconds -1` is a value to refuse, not an unknown
/// option `-1`.
enum Seconds {
    /// The longest duration any command runs for.
    static let maximum: Double = 86_400

    /// Refuses `value` unless it is within the rule.
    static func validate(_ value: Double, allowingZero: Bool = false) throws {
        let lowest = allowingZero ? value >= 0 : value > 0
        guard value.isFinite, lowest, value <= maximum else {
            throw ValidationError(allowingZero ? "--seconds must be from 0 to 86400" : "--seconds must be more than 0 and at most 86400")
        }
    }
}
