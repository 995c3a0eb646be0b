/// The state of the local Bluetooth radio, as CoreBluetooth reports it.
public enum CentralState: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// Not known yet (right after start-up).
    case unknown
    /// The radio is restarting.
    case resetting
    /// The machine has no Bluetooth LE.
    case unsupported
    /// The user or system has not allowed this app to use Bluetooth.
    case unauthorized
    /// Bluetooth is turned off.
    case poweredOff
    /// Ready.
    case poweredOn

    /// True for states that may still change to `poweredOn` without user action.
    public var isTransient: Bool { self == .unknown || self == .resetting }

    public var description: String { rawValue }
}
