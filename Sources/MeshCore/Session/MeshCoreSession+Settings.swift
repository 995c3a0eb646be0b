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
