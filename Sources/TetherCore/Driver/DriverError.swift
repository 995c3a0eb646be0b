/// An error a driver reports with an event, mirroring CoreBluetooth's `CBError` and `CBATTError`.
public enum DriverError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The peripheral answered with an ATT error.
    case att(ATTError)
    /// The link was lost (supervision timeout: out of range, powered off).
    case connectionTimeout
    /// The peripheral closed the link.
    case peripheralDisconnected
    /// The connection attempt failed.
    case connectionFailed(String)
    /// The local radio went away (powered off, reset).
    case bluetoothUnavailable(CentralState)
    /// The pairing or encryption handshake failed.
    case encryptionFailed
    /// The peripheral does not know the requested attribute.
    case invalidHandle
    /// Anything else, with the platform's description.
    case other(String)

    public var description: String {
        switch self {
        case .att(let e): e.description
        case .connectionTimeout: "the link timed out"
        case .peripheralDisconnected: "the peripheral disconnected"
        case .connectionFailed(let why): "connection failed: \(why)"
        case .bluetoothUnavailable(let state): "Bluetooth is \(state)"
        case .encryptionFailed: "encryption failed"
        case .invalidHandle: "invalid attribute handle"
        case .other(let text): text
        }
    }
}
