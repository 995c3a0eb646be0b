/// The state of the local Bluetooth radio, as CoreBluetooth reports it.
public enum CentralState: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    case unknown, resetting, unsupported, unauthorized, poweredOff, poweredOn

    /// True for states that may still change to `poweredOn` without user action.
    public var isTransient: Bool { self == .unknown || self == .resetting }

    public var description: String { rawValue }
}
