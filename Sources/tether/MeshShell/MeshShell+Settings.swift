import Foundation
import MeshCore
import TetherCore

extension MeshShell {
    /// `get [NAME]`: one setting, a custom variable, or everything.
    func getSettings(_ name: String?) async throws {
        let info = try await session.refreshSelfInfo()
        let device = try await session.deviceQuery()
        var values: [(String, String)] = []
        func add(_ name: String, _ value: @autoclosure () -> String) { values.append((name, value())) }
        let modes = MeshTelemetryModes(rawValue: info.telemetryModes)
        add("name", info.name)
        add("tx", "\(info.txPower)")
        add("radio", String(format: "%.3f,%g,%d,%d", info.radioFrequency, info.radioBandwidth, info.spreadingFactor, info.codingRate))
        add("repeat", device.repeatMode == true ? "on" : "off")
        add("lat", String(format: "%.6f", info.latitude))
        add("lon", String(format: "%.6f", info.longitude))
        add("manual_add", info.manualAddContacts ? "on" : "off")
        add("telemetry_base", Self.word(modes.base))
        add("telemetry_location", Self.word(modes.location))
        add("telemetry_environment", Self.word(modes.environment))
        add("share_location", info.advertLocationPolicy != 0 ? "on" : "off")
        add("multi_acks", "\(info.multiAcks)")
        add("path_hash_mode", device.pathHashMode.map { "\($0)" } ?? "?")
        add("pin", "\(device.blePin)")
        // Older firmware lacks these: a refusal leaves them out rather than failing `get`.
        if let tuning = try? await session.tuningParameters() {
            add("tuning", String(format: "%g,%g", tuning.receiveDelayBase, tuning.airtimeFactor))
        }
        if let rules = try? await session.autoAddConfiguration() {
            add("autoadd", Self.words(rules.options))
            add("autoadd_max_hops", rules.maxHops.map { "\($0)" } ?? "?")
        }
        do {
            let scope = try await session.defaultFloodScope()
            add("default_scope", scope?.name ?? "-")
        } catch {}
        if let ranges = try? await session.allowedRepeatFrequencies() {
            add("repeat_frequencies", ranges.map { $0.lowerBound == $0.upperBound ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound)" }.joined(separator: ",") + " kHz")
        }
        let variables = (try? await session.customVariables()) ?? []
        for variable in variables { add(variable.name, variable.value) }
        if let name {
            // Settings in any case; the board's variables as it spells them, else in any case.
            guard let found = values.first(where: { $0.0 == name }) ?? values.first(where: { $0.0.lowercased() == name.lowercased() }) else {
                throw CLIError("no setting named \(terminalSafe(name)) (get lists them)")
            }
            values = [found]
        }
        for (name, value) in values {
            let report = MeshSettingReport(name: name, value: value)
            emit(report, text: report.text)
        }
    }

    /// `set NAME VALUE`.
    // swiftlint:disable:next cyclomatic_complexity function_body_length
    func setSetting(_ rawName: String, _ value: String) async throws {
        let name = rawName.lowercased()
        switch name {
        case "name":
            try await session.setAdvertName(value)
        case "tx":
            guard let power = Int8(value) else { throw CLIError("tx is a power in dBm, got \(terminalSafe(value))") }
            try await session.setTxPower(power)
        case "radio", "repeat":
            let info = try await session.refreshSelfInfo()
            let device = try await session.deviceQuery()
            var parameters = MeshRadioParameters(
                frequencyKilohertz: UInt32((info.radioFrequency * 1000).rounded()), bandwidthHertz: UInt32((info.radioBandwidth * 1000).rounded()),
                spreadingFactor: info.spreadingFactor, codingRate: info.codingRate, repeats: device.repeatMode == true)
            if name == "repeat" {
                parameters.repeats = try Self.onOff(value)
            } else {
                let parts = value.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 4, let frequency = Double(parts[0]), let bandwidth = Double(parts[1]),
                      let sf = UInt8(parts[2]), let cr = UInt8(parts[3]),
                      frequency.isFinite, bandwidth.isFinite, frequency > 0, bandwidth > 0
                else { throw CLIError("radio is MHz,kHz,SF,CR with whole SF and CR, e.g. 869.525,250,11,5") }
                parameters.frequencyKilohertz = UInt32(min((frequency * 1000).rounded(), Double(UInt32.max)))
                parameters.bandwidthHertz = UInt32(min((bandwidth * 1000).rounded(), Double(UInt32.max)))
                parameters.spreadingFactor = sf
                parameters.codingRate = cr
            }
            guard parameters.isValid else { throw CLIError("the radio takes 150–2500 MHz, 7–500 kHz, SF 5–12 and CR 5–8") }
            try await session.setRadio(parameters)
        case "lat", "lon":
            guard let number = Double(value), number.isFinite else { throw CLIError("\(name) is in degrees, got \(terminalSafe(value))") }
            let info = try await session.refreshSelfInfo()
            try await session.setCoordinates(
                latitude: name == "lat" ? number : info.latitude, longitude: name == "lon" ? number : info.longitude)
        case "tuning":
            let parts = value.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count == 2, let rx = parts[0], let af = parts[1], rx.isFinite, af.isFinite, rx >= 0, af >= 0, rx < 4_000_000, af < 4_000_000 else {
                throw CLIError("tuning is RX-DELAY,AIRTIME-FACTOR, e.g. 0,1")
            }
            try await session.setTuningParameters(MeshTuningParameters(receiveDelayBase: rx, airtimeFactor: af))
        case "manual_add", "share_location", "multi_acks", "telemetry_base", "telemetry_location", "telemetry_environment":
            let flag = ["manual_add", "share_location"].contains(name) ? try Self.onOff(value) : false
            let permission = name.hasPrefix("telemetry") ? try Self.permission(value) : .deny
            let acks: UInt8 = name == "multi_acks" ? try Self.number(value, in: 0...4, name) : 0
            try await session.updateOtherParameters { parameters in
                switch name {
                case "manual_add": parameters.manualAddContacts = flag
                case "share_location": parameters.sharesLocationInAdverts = flag
                case "multi_acks": parameters.multiAcks = acks
                case "telemetry_base": parameters.telemetryModes.base = permission
                case "telemetry_location": parameters.telemetryModes.location = permission
                default: parameters.telemetryModes.environment = permission
                }
            }
        case "autoadd", "autoadd_max_hops":
            var rules = try await session.autoAddConfiguration()
            if name == "autoadd" {
                rules.options = try Self.options(value)
            } else {
                rules.maxHops = try Self.number(value, in: 0...64, name)
            }
            rules.maxHops = rules.maxHops ?? 0
            try await session.setAutoAddConfiguration(rules)
        case "path_hash_mode":
            try await session.setPathHashMode(try Self.number(value, in: 0...2, name))
        case "pin":
            guard let pin = UInt32(value), pin == 0 || MeshCoreCommand.devicePinRange.contains(pin) else {
                throw CLIError("pin is six digits, or 0 for the board's default")
            }
            try await session.setDevicePin(pin)
        case "default_scope":
            try await session.setDefaultFloodScope(value == "-" || value.isEmpty ? nil : MeshFloodScope(region: value))
        case "scope":
            switch value.lowercased() {
            case "default": try await session.setFloodScope(.useDefault)
            case "none", "*": try await session.setFloodScope(.unscoped)
            default: try await session.setFloodScope(.region(value))
            }
        case "repeat_frequencies":
            throw CLIError("repeat_frequencies is read only")
        default:
            // A custom variable of the board.
            let variables = try await session.customVariables()
            guard variables.contains(where: { $0.name == rawName }) else {
                throw CLIError("no setting named \(terminalSafe(rawName)) (get lists them)")
            }
            try await session.setCustomVariable(rawName, to: value)
        }
        let report = MeshSettingReport(name: name, value: value)
        if json { emit(report, text: report.text) } else { console.print("\(name) set to \(terminalSafe(value))") }
    }

    static func word(_ permission: MeshTelemetryPermission) -> String {
        switch permission {
        case .deny: "deny"
        case .byContactFlags: "flags"
        case .allowAll: "all"
        }
    }

    static func permission(_ text: String) throws -> MeshTelemetryPermission {
        switch text.lowercased() {
        case "deny", "off", "no": .deny
        case "flags", "contacts": .byContactFlags
        case "all", "allow", "on": .allowAll
        default: throw CLIError("telemetry permissions are deny, flags or all")
        }
    }

    static func words(_ options: MeshAutoAddConfiguration.Options) -> String {
        let names: [(MeshAutoAddConfiguration.Options, String)] = [
            (.chat, "chat"), (.repeater, "repeater"), (.roomServer, "room"), (.sensor, "sensor"), (.overwriteOldest, "overwrite"),
        ]
        let set = names.filter { options.contains($0.0) }.map(\.1)
        return set.isEmpty ? "none" : set.joined(separator: ",")
    }

    static func options(_ text: String) throws -> MeshAutoAddConfiguration.Options {
        var options: MeshAutoAddConfiguration.Options = []
        for word in text.lowercased().split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where word != "none" {
            switch word {
            case "chat": options.insert(.chat)
            case "repeater", "repeaters": options.insert(.repeater)
            case "room", "rooms": options.insert(.roomServer)
            case "sensor", "sensors": options.insert(.sensor)
            case "overwrite": options.insert(.overwriteOldest)
            default: throw CLIError("autoadd takes chat, repeater, room, sensor, overwrite or none")
            }
        }
        return options
    }

    static func number(_ text: String, in range: ClosedRange<UInt8>, _ name: String) throws -> UInt8 {
        guard let value = UInt8(text), range.contains(value) else {
            throw CLIError("\(name) is \(range.lowerBound)…\(range.upperBound), got \(terminalSafe(text))")
        }
        return value
    }
}
