import Foundation

/// Why pairing failed, from the ATT error the peripheral returned.
public enum PairingFailureReason: String, Sendable, Hashable, Codable {
    /// ATT 5: the peripheral requires pairing that has not been completed.
    case insufficientAuthentication
    /// ATT 8: the peripheral refused authorization.
    case insufficientAuthorization
    /// ATT 14: typically the peer removed its pairing information.
    case pairingInformationRemoved
    /// ATT 15: the link could not be encrypted.
    case insufficientEncryption

    /// The reason for a pairing-related ATT error, or nil for other codes.
    public init?(_ error: ATTError) {
        switch error.code {
        case 0x05: self = .insufficientAuthentication
        case 0x08: self = .insufficientAuthorization
        case 0x0E: self = .pairingInformationRemoved
        case 0x0F: self = .insufficientEncryption
        default: return nil
        }
    }
}

/// Errors a connection reports, shaped for a UI to show.
public enum BLEError: Error, Hashable, Sendable {
    /// Bluetooth is not usable in this state (off, unauthorized, unsupported).
    case bluetoothUnavailable(CentralState)
    /// No matching device was found.
    case deviceNotFound
    /// Scanning ended without a match.
    case scanTimeout
    /// The connection (or discovery) did not complete in time.
    case connectionTimeout
    /// The connection attempt failed.
    case connectionFailed(String)
    /// A read, write or subscription did not complete in time; the link stays up.
    case operationTimeout
    /// A required service is missing.
    case serviceNotFound(BluetoothUUID)
    /// A required characteristic is missing.
    case characteristicNotFound(BluetoothUUID)
    /// There is no connection to use.
    case notConnected
    /// The link went down.
    case disconnected(String?)
    /// The peripheral requires pairing that failed (ATT 5, 8, 14, 15).
    case pairingFailed(PairingFailureReason)
    /// A write was rejected: the driver's error, with the ATT code when the peripheral gave
    /// one (``attError``).
    case writeFailed(DriverError)
    /// A read was rejected (the driver's error, see ``attError``).
    case readFailed(DriverError)
    /// A subscription was rejected (the driver's error, see ``attError``).
    case subscriptionFailed(DriverError)
    /// Automatic reconnection gave up.
    case reconnectFailed(attempts: Int)
    /// The operation was cancelled (by `disconnect()` or task cancellation).
    case cancelled
    /// The call does not fit the connection's configuration (for example an unknown characteristic).
    case invalidRequest(String)

    /// Maps a driver error: pairing-related ATT codes become ``pairingFailed(_:)``, Bluetooth
    /// going away ``bluetoothUnavailable(_:)``, anything else `fallback`.
    public static func from(_ error: DriverError, otherwise fallback: (DriverError) -> BLEError) -> BLEError {
        switch error {
        case .att(let att):
            if let reason = PairingFailureReason(att) { return .pairingFailed(reason) }
            return fallback(error)
        case .encryptionFailed:
            return .pairingFailed(.insufficientEncryption)
        case .bluetoothUnavailable(let state):
            return .bluetoothUnavailable(state)
        default:
            return fallback(error)
        }
    }

    /// The ATT error the peripheral answered with, when a read, write or subscription was
    /// refused with one: what a client matches on instead of a message. (Codes 5, 8, 14 and 15
    /// are ``pairingFailed(_:)``, whose reason names them.)
    public var attError: ATTError? {
        switch self {
        case .writeFailed(.att(let att)), .readFailed(.att(let att)), .subscriptionFailed(.att(let att)): att
        default: nil
        }
    }
}

extension BLEError: LocalizedError {
    public var errorDescription: String? {
        switch self {
        case .bluetoothUnavailable(let state):
            switch state {
            case .poweredOff: "Bluetooth is turned off."
            case .unauthorized: "This app is not allowed to use Bluetooth."
            case .unsupported: "This device does not support Bluetooth Low Energy."
            default: "Bluetooth is not available (\(state))."
            }
        case .deviceNotFound: "No matching device was found."
        case .scanTimeout: "Scanning timed out without finding the device."
        case .connectionTimeout: "The connection timed out."
        case .connectionFailed(let why): "The connection failed: \(why)."
        case .operationTimeout: "The device did not answer in time."
        case .serviceNotFound(let uuid): "The device does not offer service \(uuid)."
        case .characteristicNotFound(let uuid): "The device does not offer characteristic \(uuid)."
        case .notConnected: "Not connected."
        case .disconnected(let why): "The device disconnected" + (why.map { ": \($0)." } ?? ".")
        case .pairingFailed(let reason): "Pairing failed (\(reason.rawValue)); pair the device in the system's Bluetooth settings and try again."
        case .writeFailed(let why): "The write failed: \(why)."
        case .readFailed(let why): "The read failed: \(why)."
        case .subscriptionFailed(let why): "Subscribing to notifications failed: \(why)."
        case .reconnectFailed(let attempts): "Reconnection gave up after \(attempts) attempts."
        case .cancelled: "Cancelled."
        case .invalidRequest(let why): "Invalid request: \(why)."
        }
    }
}
