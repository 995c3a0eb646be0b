/// The connection state machine's phase, as the transport guide names them.
///
/// The state machine keeps each phase's resources (timers, pending discovery sets) inside its
/// own private phase value and releases them on every transition; this public value is the
/// observable projection of it.
public enum BLEPhase: Sendable, Hashable, CustomStringConvertible {
    /// No connection and none wanted.
    case idle
    /// A connection was requested while the radio's state is not yet known.
    case waitingForBluetooth
    /// A connection request is out; the connect timeout runs.
    case connecting(PeripheralID)
    /// Connected; discovering services (the discovery timeout runs).
    case discoveringServices(PeripheralID)
    /// Discovering characteristics of the required services.
    case discoveringCharacteristics(PeripheralID)
    /// Enabling notifications on the configured characteristics.
    case subscribingToNotifications(PeripheralID)
    /// Discovery is done; notification streams are being wired.
    case discoveryComplete(PeripheralID)
    /// Ready for reads, writes and notifications.
    case connected(PeripheralID)
    /// The link dropped (or a first connection failed and is tried again); waiting for the OS
    /// or the policy to bring it back.
    case autoReconnecting(PeripheralID)
    /// Relaunched by the OS with this peripheral; waiting for the radio to power on.
    case restoringState(PeripheralID)
    /// A disconnection is in progress: requested, or of a link declared lost.
    case disconnecting(PeripheralID)

    /// The phase's name without its peripheral.
    public var name: String {
        switch self {
        case .idle: "idle"
        case .waitingForBluetooth: "waitingForBluetooth"
        case .connecting: "connecting"
        case .discoveringServices: "discoveringServices"
        case .discoveringCharacteristics: "discoveringCharacteristics"
        case .subscribingToNotifications: "subscribingToNotifications"
        case .discoveryComplete: "discoveryComplete"
        case .connected: "connected"
        case .autoReconnecting: "autoReconnecting"
        case .restoringState: "restoringState"
        case .disconnecting: "disconnecting"
        }
    }

    /// True only in ``connected(_:)``.
    public var isConnected: Bool {
        if case .connected = self { return true }
        return false
    }

    public var description: String { name }
}
