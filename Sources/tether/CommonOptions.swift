import ArgumentParser

// The options several commands share, declared once so that each reads, helps and refuses the
// same way everywhere. (`--driver` and `--adapter` are `GlobalOptions`.)

/// The one rule for every duration option (`--seconds`, `mesh --timeout`): a finite number of
/// seconds, more than 0 (or 0 where "none" makes sense) and at most a day, refused with the
/// same sentence everywhere. The options are parsed unconditionally, so `--seconds -1` is a
/// value to refuse, not an unknown option `-1`.
enum Seconds {
    /// The longest duration any command runs for.
    static let maximum: Double = 86_400

    /// Refuses `value` unless it is within the rule (`maximum`: a command's own, shorter cap).
    static func validate(_ value: Double, option: String = "--seconds", allowingZero: Bool = false, maximum: Double = Seconds.maximum) throws {
        let lowest = allowingZero ? value >= 0 : value > 0
        guard value.isFinite, lowest, value <= maximum else {
            let most = String(format: "%g", maximum)
            throw ValidationError(allowingZero ? "\(option) must be from 0 to \(most)" : "\(option) must be more than 0 and at most \(most)")
        }
    }
}

/// `--json`: records instead of text, on every command that prints them.
struct JSONOption: ParsableArguments {
    @Flag(help: "One JSON object per line, each with a \"type\" naming its record (docs/json-lines.md).")
    var json = false
}

/// `--database`: where a command keeps or reads its device's records.
struct DatabaseOption: ParsableArguments {
    @Option(help: ArgumentHelp("The SQLite database (default: the device's file in $TETHER_DATA_DIR, else ~/.local/share/tether).", valueName: "path"))
    var database: String?

    func validate() throws {
        if database?.isEmpty == true { throw ValidationError("--database needs a path") }
    }
}
