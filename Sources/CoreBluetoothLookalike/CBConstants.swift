import Foundation
import TetherCore

// The value types, option keys and error types of CoreBluetooth, with Apple's names, raw
// values and Swift types. See docs/corebluetooth-lookalike.md for what differs.

/// `CFAbsoluteTime` is not exported by swift-corelibs-foundation; CoreFoundation defines it as
/// seconds (a `Double`) since 1 January 2001.
public typealias CFAbsoluteTime = Double

/// The state of a Core Bluetooth manager (raw values as Apple's `CBManagerState`).
///
/// Not `CustomStringConvertible`: Apple's isn't (logs map it to `CentralState` first).
public enum CBManagerState: Int, Sendable {
    /// The state is not known yet; an update follows.
    case unknown = 0
    /// The connection with the system service was lost; an update follows.
    case resetting = 1
    /// The platform has no Bluetooth Low Energy.
    case unsupported = 2
    /// The app is not authorized to use Bluetooth.
    case unauthorized = 3
    /// Bluetooth is turned off.
    case poweredOff = 4
    /// Bluetooth is on and available.
    case poweredOn = 5
}

/// The app's Bluetooth authorization (raw values as Apple's `CBManagerAuthorization`).
public enum CBManagerAuthorization: Int, Sendable {
    /// The user has not chosen yet.
    case notDetermined = 0
    /// Bluetooth use is restricted (for example by parental controls).
    case restricted = 1
    /// The user denied Bluetooth to this app.
    case denied = 2
    /// The app may always use Bluetooth.
    case allowedAlways = 3
}

/// A peripheral's connection state (raw values as Apple's `CBPeripheralState`).
public enum CBPeripheralState: Int, Sendable {
    /// Not connected.
    case disconnected = 0
    /// A connection is being set up (or the OS is reconnecting).
    case connecting = 1
    /// Connected.
    case connected = 2
    /// A disconnection is under way.
    case disconnecting = 3
}

/// How a characteristic value is written (raw values as Apple's `CBCharacteristicWriteType`).
public enum CBCharacteristicWriteType: Int, Sendable {
    /// ATT Write Request; `peripheral(_:didWriteValueFor:error:)` reports the outcome.
    case withResponse = 0
    /// ATT Write Command; paced by `canSendWriteWithoutResponse`.
    case withoutResponse = 1
}

/// A characteristic's properties (bit values as Apple's `CBCharacteristicProperties`).
public struct CBCharacteristicProperties: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    /// Wraps property bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// The value can be broadcast.
    public static let broadcast = Self(rawValue: 0x01)
    /// The value can be read.
    public static let read = Self(rawValue: 0x02)
    /// The value can be written without response.
    public static let writeWithoutResponse = Self(rawValue: 0x04)
    /// The value can be written with response.
    public static let write = Self(rawValue: 0x08)
    /// The value can be notified.
    public static let notify = Self(rawValue: 0x10)
    /// The value can be indicated.
    public static let indicate = Self(rawValue: 0x20)
    /// Signed writes are allowed.
    public static let authenticatedSignedWrites = Self(rawValue: 0x40)
    /// Extended properties are in a descriptor.
    public static let extendedProperties = Self(rawValue: 0x80)
    /// Only trusted devices may enable notifications.
    public static let notifyEncryptionRequired = Self(rawValue: 0x100)
    /// Only trusted devices may enable indications.
    public static let indicateEncryptionRequired = Self(rawValue: 0x200)
}

// MARK: Option and advertisement keys (Apple's constant names; values are private strings there)

/// Central manager option: show an alert when Bluetooth is off (ignored here).
public let CBCentralManagerOptionShowPowerAlertKey = "kCBInitOptionShowPowerAlert"
/// Central manager option: the identifier that opts the manager into state restoration.
public let CBCentralManagerOptionRestoreIdentifierKey = "kCBRestoreIdentifierKey"
/// Scan option: report every advertisement instead of one discovery per peripheral.
public let CBCentralManagerScanOptionAllowDuplicatesKey = "kCBScanOptionAllowDuplicates"
/// Scan option: solicited service UUIDs (accepted and ignored).
public let CBCentralManagerScanOptionSolicitedServiceUUIDsKey = "kCBScanOptionSolicitedServiceUUIDs"
/// Connect option: alert on connection while suspended (accepted and ignored).
public let CBConnectPeripheralOptionNotifyOnConnectionKey = "kCBConnectOptionNotifyOnConnection"
/// Connect option: alert on disconnection while suspended (accepted and ignored).
public let CBConnectPeripheralOptionNotifyOnDisconnectionKey = "kCBConnectOptionNotifyOnDisconnection"
/// Connect option: alert on notifications while suspended (accepted and ignored).
public let CBConnectPeripheralOptionNotifyOnNotificationKey = "kCBConnectOptionNotifyOnNotification"
/// Connect option (iOS 17 / macOS 14): the system reconnects by itself after a link loss.
public let CBConnectPeripheralOptionEnableAutoReconnect = "kCBConnectOptionEnableAutoReconnect"
/// Restored state: the peripherals the system kept for the app (`[CBPeripheral]`).
public let CBCentralManagerRestoredStatePeripheralsKey = "kCBRestoredPeripherals"
/// Restored state: the services the app was scanning for (`[CBUUID]`).
public let CBCentralManagerRestoredStateScanServicesKey = "kCBRestoredScanServices"
/// Restored state: the scan options in use (`[String: Any]`).
public let CBCentralManagerRestoredStateScanOptionsKey = "kCBRestoredScanOptions"
/// Advertisement: the local name (`String`).
public let CBAdvertisementDataLocalNameKey = "kCBAdvDataLocalName"
/// Advertisement: manufacturer data (`Data`).
public let CBAdvertisementDataManufacturerDataKey = "kCBAdvDataManufacturerData"
/// Advertisement: service data (`[CBUUID: Data]`).
public let CBAdvertisementDataServiceDataKey = "kCBAdvDataServiceData"
/// Advertisement: service UUIDs (`[CBUUID]`).
public let CBAdvertisementDataServiceUUIDsKey = "kCBAdvDataServiceUUIDs"
/// Advertisement: overflow-area service UUIDs (`[CBUUID]`, never produced here).
public let CBAdvertisementDataOverflowServiceUUIDsKey = "kCBAdvDataHashedServiceUUIDs"
/// Advertisement: transmit power level (`NSNumber`).
public let CBAdvertisementDataTxPowerLevelKey = "kCBAdvDataTxPowerLevel"
/// Advertisement: whether the peripheral is connectable (`NSNumber` holding a Bool).
public let CBAdvertisementDataIsConnectable = "kCBAdvDataIsConnectable"
/// Advertisement: solicited service UUIDs (`[CBUUID]`, never produced here).
public let CBAdvertisementDataSolicitedServiceUUIDsKey = "kCBAdvDataSolicitedServiceUUIDs"

// MARK: Errors

/// The error domain of Core Bluetooth errors.
public let CBErrorDomain = "CBErrorDomain"
/// The error domain of ATT errors a peripheral returned.
public let CBATTErrorDomain = "CBATTErrorDomain"

/// A Core Bluetooth error. Callbacks deliver these as `NSError`s in ``CBErrorDomain``
/// (as Apple does); this type names the codes.
public struct CBError: Error, Sendable, Hashable {
    /// Core Bluetooth's error codes (raw values as Apple's).
    public enum Code: Int, Sendable {
        /// An unknown error occurred.
        case unknown = 0
        /// The parameters are invalid.
        case invalidParameters = 1
        /// The attribute handle is invalid.
        case invalidHandle = 2
        /// The device is not connected.
        case notConnected = 3
        /// The device ran out of space.
        case outOfSpace = 4
        /// The operation was cancelled.
        case operationCancelled = 5
        /// The connection timed out (supervision timeout).
        case connectionTimeout = 6
        /// The peripheral disconnected.
        case peripheralDisconnected = 7
        /// The UUID is not allowed.
        case uuidNotAllowed = 8
        /// The peripheral is already advertising.
        case alreadyAdvertising = 9
        /// The connection failed.
        case connectionFailed = 10
        /// The system has too many connections.
        case connectionLimitReached = 11
        /// The device is unknown.
        case unknownDevice = 12
        /// The operation is not supported.
        case operationNotSupported = 13
        /// The peer removed its pairing information.
        case peerRemovedPairingInformation = 14
        /// Encryption timed out.
        case encryptionTimedOut = 15
        /// Too many LE devices are paired.
        case tooManyLEPairedDevices = 16
        // 17 and 18 (the background notification limits) exist on watchOS only, which
        // Tether does not reproduce: code that names them would not build for iOS or macOS.
    }

    /// The error's code.
    public let code: Code
    /// Wraps a code.
    public init(_ code: Code) { self.code = code }
    /// The domain, ``CBErrorDomain``.
    public static var errorDomain: String { CBErrorDomain }

    /// Shorthand for ``Code/unknown``.
    public static var unknown: Code { .unknown }
    /// Shorthand for ``Code/invalidParameters``.
    public static var invalidParameters: Code { .invalidParameters }
    /// Shorthand for ``Code/invalidHandle``.
    public static var invalidHandle: Code { .invalidHandle }
    /// Shorthand for ``Code/notConnected``.
    public static var notConnected: Code { .notConnected }
    /// Shorthand for ``Code/outOfSpace``.
    public static var outOfSpace: Code { .outOfSpace }
    /// Shorthand for ``Code/operationCancelled``.
    public static var operationCancelled: Code { .operationCancelled }
    /// Shorthand for ``Code/connectionTimeout``.
    public static var connectionTimeout: Code { .connectionTimeout }
    /// Shorthand for ``Code/peripheralDisconnected``.
    public static var peripheralDisconnected: Code { .peripheralDisconnected }
    /// Shorthand for ``Code/uuidNotAllowed``.
    public static var uuidNotAllowed: Code { .uuidNotAllowed }
    /// Shorthand for ``Code/alreadyAdvertising``.
    public static var alreadyAdvertising: Code { .alreadyAdvertising }
    /// Shorthand for ``Code/connectionFailed``.
    public static var connectionFailed: Code { .connectionFailed }
    /// Shorthand for ``Code/connectionLimitReached``.
    public static var connectionLimitReached: Code { .connectionLimitReached }
    /// Shorthand for ``Code/unknownDevice``.
    public static var unknownDevice: Code { .unknownDevice }
    /// Shorthand for ``Code/operationNotSupported``.
    public static var operationNotSupported: Code { .operationNotSupported }
    /// Shorthand for ``Code/peerRemovedPairingInformation``.
    public static var peerRemovedPairingInformation: Code { .peerRemovedPairingInformation }
    /// Shorthand for ``Code/encryptionTimedOut``.
    public static var encryptionTimedOut: Code { .encryptionTimedOut }
    /// Shorthand for ``Code/tooManyLEPairedDevices``.
    public static var tooManyLEPairedDevices: Code { .tooManyLEPairedDevices }
}

/// An ATT error a peripheral returned. Callbacks deliver these as `NSError`s in
/// ``CBATTErrorDomain`` (as Apple does); this type names the codes.
public struct CBATTError: Error, Sendable, Hashable {
    /// ATT error codes (raw values as Apple's and the Core Specification's).
    public enum Code: Int, Sendable {
        /// ATT 0: success.
        case success = 0
        /// ATT 1: the attribute handle is invalid.
        case invalidHandle = 1
        /// ATT 2: the value cannot be read.
        case readNotPermitted = 2
        /// ATT 3: the value cannot be written.
        case writeNotPermitted = 3
        /// ATT 4: the request was malformed.
        case invalidPdu = 4
        /// ATT 5: pairing (authentication) is required.
        case insufficientAuthentication = 5
        /// ATT 6: the request is not supported.
        case requestNotSupported = 6
        /// ATT 7: the offset is past the value.
        case invalidOffset = 7
        /// ATT 8: authorization is required.
        case insufficientAuthorization = 8
        /// ATT 9: too many prepared writes.
        case prepareQueueFull = 9
        /// ATT 10: no attribute in the range.
        case attributeNotFound = 10
        /// ATT 11: the attribute cannot be read with a blob read.
        case attributeNotLong = 11
        /// ATT 12: the encryption key is too short.
        case insufficientEncryptionKeySize = 12
        /// ATT 13: the value has the wrong length.
        case invalidAttributeValueLength = 13
        /// ATT 14: an unlikely error (often: the peer removed the pairing).
        case unlikelyError = 14
        /// ATT 15: encryption is required.
        case insufficientEncryption = 15
        /// ATT 16: the grouping type is not supported.
        case unsupportedGroupType = 16
        /// ATT 17: the peer ran out of resources.
        case insufficientResources = 17
    }

    /// The error's code.
    public let code: Code
    /// Wraps a code.
    public init(_ code: Code) { self.code = code }
    /// The domain, ``CBATTErrorDomain``.
    public static var errorDomain: String { CBATTErrorDomain }

    /// Shorthand for ``Code/success``.
    public static var success: Code { .success }
    /// Shorthand for ``Code/invalidHandle``.
    public static var invalidHandle: Code { .invalidHandle }
    /// Shorthand for ``Code/readNotPermitted``.
    public static var readNotPermitted: Code { .readNotPermitted }
    /// Shorthand for ``Code/writeNotPermitted``.
    public static var writeNotPermitted: Code { .writeNotPermitted }
    /// Shorthand for ``Code/invalidPdu``.
    public static var invalidPdu: Code { .invalidPdu }
    /// Shorthand for ``Code/insufficientAuthentication``.
    public static var insufficientAuthentication: Code { .insufficientAuthentication }
    /// Shorthand for ``Code/requestNotSupported``.
    public static var requestNotSupported: Code { .requestNotSupported }
    /// Shorthand for ``Code/invalidOffset``.
    public static var invalidOffset: Code { .invalidOffset }
    /// Shorthand for ``Code/insufficientAuthorization``.
    public static var insufficientAuthorization: Code { .insufficientAuthorization }
    /// Shorthand for ``Code/prepareQueueFull``.
    public static var prepareQueueFull: Code { .prepareQueueFull }
    /// Shorthand for ``Code/attributeNotFound``.
    public static var attributeNotFound: Code { .attributeNotFound }
    /// Shorthand for ``Code/attributeNotLong``.
    public static var attributeNotLong: Code { .attributeNotLong }
    /// Shorthand for ``Code/insufficientEncryptionKeySize``.
    public static var insufficientEncryptionKeySize: Code { .insufficientEncryptionKeySize }
    /// Shorthand for ``Code/invalidAttributeValueLength``.
    public static var invalidAttributeValueLength: Code { .invalidAttributeValueLength }
    /// Shorthand for ``Code/unlikelyError``.
    public static var unlikelyError: Code { .unlikelyError }
    /// Shorthand for ``Code/insufficientEncryption``.
    public static var insufficientEncryption: Code { .insufficientEncryption }
    /// Shorthand for ``Code/unsupportedGroupType``.
    public static var unsupportedGroupType: Code { .unsupportedGroupType }
    /// Shorthand for ``Code/insufficientResources``.
    public static var insufficientResources: Code { .insufficientResources }
}

extension DriverError {
    /// The `NSError` CoreBluetooth would hand a delegate for this simulator error.
    var cbNSError: NSError {
        func error(_ domain: String, _ code: Int, _ text: String) -> NSError {
            NSError(domain: domain, code: code, userInfo: [NSLocalizedDescriptionKey: text])
        }
        switch self {
        case .att(let att): return error(CBATTErrorDomain, Int(att.code), att.description)
        case .connectionTimeout: return error(CBErrorDomain, CBError.Code.connectionTimeout.rawValue, "The connection has timed out unexpectedly.")
        case .peripheralDisconnected: return error(CBErrorDomain, CBError.Code.peripheralDisconnected.rawValue, "The specified device has disconnected from us.")
        case .connectionFailed(let why): return error(CBErrorDomain, CBError.Code.connectionFailed.rawValue, why)
        case .bluetoothUnavailable(let state): return error(CBErrorDomain, CBError.Code.unknown.rawValue, "Bluetooth is \(state)")
        case .encryptionFailed: return error(CBErrorDomain, CBError.Code.encryptionTimedOut.rawValue, "Encryption timed out.")
        case .invalidHandle: return error(CBErrorDomain, CBError.Code.invalidHandle.rawValue, "The handle is invalid.")
        case .other(let text): return error(CBErrorDomain, CBError.Code.unknown.rawValue, text)
        }
    }
}
