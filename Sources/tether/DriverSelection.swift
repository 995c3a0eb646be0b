import Foundation

/// The driver and adapter the user asked for, for the whole process.
///
/// `--driver` and `--adapter` are taken out of the command line before ArgumentParser sees it
/// (``extract(from:environment:)``), so they work at every level and in every position:
/// `tether --driver=bluez mesh info`, `tether mesh --driver bluez info`,
/// `tether mesh info --driver bluez`. `GlobalOptions` still declares them, for the help.
struct DriverSelection: Sendable, Equatable {
    /// Where the driver choice came from.
    enum Source: Sendable, Equatable {
        /// `--driver`.
        case flag
        /// `TETHER_DRIVER`.
        case environment
        /// Neither: `auto`.
        case defaulted
    }

    var driver: DriverChoice = .auto
    var source: Source = .defaulted
    /// `--adapter hciN`: the BlueZ adapter (the central's, or the one `tether emulate` serves on).
    var adapter: String?

    /// True when the user named the driver (flag or environment).
    var isExplicit: Bool { source != .defaulted }

    /// How the choice is named in messages: `--driver bluez` or `TETHER_DRIVER=bluez`.
    var origin: String {
        switch source {
        case .flag: "--driver \(driver.rawValue)"
        case .environment: "TETHER_DRIVER=\(driver.rawValue)"
        case .defaulted: "the default driver (auto)"
        }
    }

    /// The environment variable that picks the driver when `--driver` is not given.
    static let environmentVariable = "TETHER_DRIVER"

    private static let lock = NSLock()
    nonisolated(unsafe) private static var stored = DriverSelection()

    /// The selection of this process (set once by `Tether.main`).
    static var current: DriverSelection {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }

    /// Removes every `--driver X`, `--driver=X`, `--adapter X` and `--adapter=X` from
    /// `arguments` and returns the selection and what is left for ArgumentParser.
    ///
    /// Nothing after a `--` terminator is touched (it is positional text). The value of
    /// another option is never mistaken for one of ours: every option of the CLI parses its
    /// value with ArgumentParser's default strategy, which refuses a value starting with `-`,
    /// so such a token can only be an option itself (and `--bridge=--driver` is one token, not
    /// matched). The last `--driver` (or `--adapter`) wins, as with any ArgumentParser option.
    static func extract(from arguments: [String], environment: [String: String]) throws -> (DriverSelection, [String]) {
        var selection = DriverSelection()
        var driverText: String?
        var rest: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" {
                rest += arguments[index...]
                break
            }
            var matched: (name: String, value: String?)?
            for name in ["--driver", "--adapter"] {
                if argument == name {
                    let next = index + 1 < arguments.count ? arguments[index + 1] : nil
                    guard let next, !next.hasPrefix("-") || next == "-" else {
                        throw CLIError(name == "--driver" ? "--driver needs a value: \(DriverChoice.validList)" : "--adapter needs a value, for example hci0")
                    }
                    matched = (name, next)
                    index += 1
                } else if argument.hasPrefix(name + "=") {
                    matched = (name, String(argument.dropFirst(name.count + 1)))
                }
            }
            index += 1
            guard let matched else {
                rest.append(argument)
                continue
            }
            if matched.name == "--driver" { driverText = matched.value } else { selection.adapter = matched.value }
        }
        if let driverText {
            guard let choice = DriverChoice(rawValue: driverText.lowercased()) else {
                throw CLIError("unknown driver \"\(terminalSafe(driverText))\" for --driver (valid: \(DriverChoice.validList))")
            }
            selection.driver = choice
            selection.source = .flag
        } else if let text = environment[environmentVariable], !text.isEmpty {
            guard let choice = DriverChoice(rawValue: text.lowercased()) else {
                throw CLIError("unknown driver \"\(terminalSafe(text))\" in \(environmentVariable) (valid: \(DriverChoice.validList))")
            }
            selection.driver = choice
            selection.source = .environment
        }
        if let adapter = selection.adapter {
            guard Self.isAdapterName(adapter) else {
                throw CLIError("--adapter wants a BlueZ adapter name such as hci0 (got \"\(terminalSafe(adapter))\")")
            }
        }
        return (selection, rest)
    }

    /// `hci` followed by a number, as BlueZ names adapters.
    static func isAdapterName(_ text: String) -> Bool {
        guard text.hasPrefix("hci") else { return false }
        let digits = text.dropFirst(3)
        return !digits.isEmpty && digits.count <= 3 && digits.allSatisfy(\.isASCII) && digits.allSatisfy(\.isNumber)
    }
}
