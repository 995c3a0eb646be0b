import Foundation

extension MeshCoreSession {
    /// Sets the transmit power in dBm (the radio takes −9 up to its board's maximum,
    /// ``SelfInfo/maxTxPower``).
    public func setTxPower(_ dBm: Int8) async throws {
        _ = try await execute(.setRadioTxPower(dBm), expectingOK)
    }

    /// Sets the position the radio advertises (degrees).
    public func setCoordinates(latitude: Double, longitude: Double) async throws {
        _ = try await execute(.setAdvertLatLon(latitude: latitude, longitude: longitude), expectingOK)
    }

    /// Sets the LoRa radio parameters; the radio retunes at once. Repeating is part of them:
    /// parameters with ``MeshRadioParameters/repeats`` false turn it off.
    ///
    /// - Throws: ``MeshCoreError/commandFailed(command:code:)`` with `illegalArgument` for a
    ///   value outside the firmware's ranges (``MeshRadioParameters/isValid``), or repeating on
    ///   a frequency it may not repeat on.
    public func setRadio(_ parameters: MeshRadioParameters) async throws {
        _ = try await execute(.setRadioParams(parameters), expectingOK)
    }
}

extension MeshCoreSession {
    /// The radio's timing parameters.
    public func tuningParameters() async throws -> MeshTuningParameters {
        try await request(.getTuningParams) { if case .tuningParameters(let value) = $0 { value } else { nil } }
    }

    /// Sets the radio's timing parameters (the firmware clamps them at its next boot, see
    /// ``MeshTuningParameters/receiveDelayBaseRange``).
    public func setTuningParameters(_ parameters: MeshTuningParameters) async throws {
        _ = try await execute(.setTuningParams(parameters), expectingOK)
    }

    /// Sets manual add, telemetry permissions, location sharing and multi-acks, all four at
    /// once (see ``updateOtherParameters(_:)`` to change one).
    public func setOtherParameters(_ parameters: MeshOtherParameters) async throws {
        _ = try await execute(.setOtherParams(parameters), expectingOK)
        if var info = selfInfo {
            info.manualAddContacts = parameters.manualAddContacts
            info.telemetryModes = parameters.telemetryModes.rawValue
            info.advertLocationPolicy = parameters.sharesLocationInAdverts ? 1 : 0
            info.multiAcks = parameters.multiAcks
            cacheSelfInfo(info)
        }
    }

    /// Reads the current settings from the radio (`APP_START`), applies `change`, and writes
    /// all four back, so the others keep the radio's values. Returns what was written.
    @discardableResult
    public func updateOtherParameters(_ change: @escaping @Sendable (inout MeshOtherParameters) -> Void) async throws -> MeshOtherParameters {
        try await exclusively {
            var parameters = MeshOtherParameters(try await self.refreshSelfInfo())
            change(&parameters)
            try await self.setOtherParameters(parameters)
            return parameters
        }
    }

    /// Sets the BLE pairing PIN: six digits, or 0 for the board's default (a random PIN shown
    /// on its screen, or 123456). It takes effect when the radio reboots.
    public func setDevicePin(_ pin: UInt32) async throws {
        _ = try await execute(.setDevicePin(pin), expectingOK)
    }

    /// The board's custom variables (empty when it has none).
    public func customVariables() async throws -> [MeshCustomVariable] {
        try await request(.getCustomVars) { if case .customVariables(let value) = $0 { value } else { nil } }
    }

    /// Sets one custom variable.
    ///
    /// - Throws: ``MeshCoreError/commandFailed(command:code:)`` with `illegalArgument` when
    ///   the board has no such variable or refuses the value.
    public func setCustomVariable(_ name: String, to value: String) async throws {
        _ = try await execute(.setCustomVar(MeshCustomVariable(name: name, value: value)), expectingOK)
    }

    /// Which nodes are still added by themselves in manual-add mode, and from how far.
    public func autoAddConfiguration() async throws -> MeshAutoAddConfiguration {
        try await request(.getAutoAddConfig) { if case .autoAddConfiguration(let value) = $0 { value } else { nil } }
    }

    /// Sets which nodes are added by themselves in manual-add mode, and from how far.
    public func setAutoAddConfiguration(_ configuration: MeshAutoAddConfiguration) async throws {
        _ = try await execute(.setAutoAddConfig(configuration), expectingOK)
    }

    /// The frequency ranges (kHz) on which the radio may repeat.
    public func allowedRepeatFrequencies() async throws -> [ClosedRange<UInt32>] {
        try await request(.getAllowedRepeatFrequencies) { if case .allowedRepeatFrequencies(let value) = $0 { value } else { nil } }
    }

    /// Sets the size of the hop hashes in floods this node starts: 0, 1 or 2 for 1-, 2- or
    /// 3-byte hashes (longer hashes tell repeaters apart in big meshes, and cost airtime).
    public func setPathHashMode(_ mode: UInt8) async throws {
        _ = try await execute(.setPathHashMode(mode), expectingOK)
    }

    /// Scopes this session's floods (until the radio reboots): to a region's key, back to the
    /// default scope, or to none.
    public func setFloodScope(_ scope: MeshFloodScopeOverride) async throws {
        _ = try await execute(.setFloodScope(scope), expectingOK)
    }

    /// The flood scope the radio keeps across reboots, nil when there is none.
    public func defaultFloodScope() async throws -> MeshFloodScope? {
        try await request(.getDefaultFloodScope) { if case .defaultFloodScope(let value) = $0 { .some(value) } else { nil } }
    }

    /// Sets (or, with nil, clears) the flood scope the radio keeps across reboots.
    public func setDefaultFloodScope(_ scope: MeshFloodScope?) async throws {
        _ = try await execute(.setDefaultFloodScope(scope), expectingOK)
    }
}
