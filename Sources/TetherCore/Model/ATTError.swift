/// An Attribute Protocol error code returned by a peripheral (CoreBluetooth's `CBATTError`).
public struct ATTError: Error, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The ATT error code.
    public let code: UInt8
    /// Wraps a raw ATT error code.
    public init(_ code: UInt8) { self.code = code }

    /// ATT error 1 (invalidHandle).
    public static let invalidHandle = ATTError(0x01)
    /// ATT error 2 (readNotPermitted).
    public static let readNotPermitted = ATTError(0x02)
    /// ATT error 3 (writeNotPermitted).
    public static let writeNotPermitted = ATTError(0x03)
    /// ATT error 4 (invalidPDU).
    public static let invalidPDU = ATTError(0x04)
    /// ATT error 5 (insufficientAuthentication).
    public static let insufficientAuthentication = ATTError(0x05)
    /// ATT error 6 (requestNotSupported).
    public static let requestNotSupported = ATTError(0x06)
    /// ATT error 7 (invalidOffset).
    public static let invalidOffset = ATTError(0x07)
    /// ATT error 8 (insufficientAuthorization).
    public static let insufficientAuthorization = ATTError(0x08)
    /// ATT error 9 (prepareQueueFull).
    public static let prepareQueueFull = ATTError(0x09)
    /// ATT error 10 (attributeNotFound).
    public static let attributeNotFound = ATTError(0x0A)
    /// ATT error 11 (attributeNotLong).
    public static let attributeNotLong = ATTError(0x0B)
    /// ATT error 12 (insufficientEncryptionKeySize).
    public static let insufficientEncryptionKeySize = ATTError(0x0C)
    /// ATT error 13 (invalidAttributeValueLength).
    public static let invalidAttributeValueLength = ATTError(0x0D)
    /// ATT error 14 (unlikelyError).
    public static let unlikelyError = ATTError(0x0E)
    /// ATT error 15 (insufficientEncryption).
    public static let insufficientEncryption = ATTError(0x0F)
    /// ATT error 16 (unsupportedGroupType).
    public static let unsupportedGroupType = ATTError(0x10)
    /// ATT error 17 (insufficientResources).
    public static let insufficientResources = ATTError(0x11)

    /// True for the codes the transport guide treats as pairing failures (5, 8, 14, 15).
    public var isPairingFailure: Bool { [0x05, 0x08, 0x0E, 0x0F].contains(code) }

    /// The code's name in the Core Specification.
    public var name: String {
        switch code {
        case 0x01: "invalidHandle"
        case 0x02: "readNotPermitted"
        case 0x03: "writeNotPermitted"
        case 0x04: "invalidPDU"
        case 0x05: "insufficientAuthentication"
        case 0x06: "requestNotSupported"
        case 0x07: "invalidOffset"
        case 0x08: "insufficientAuthorization"
        case 0x09: "prepareQueueFull"
        case 0x0A: "attributeNotFound"
        case 0x0B: "attributeNotLong"
        case 0x0C: "insufficientEncryptionKeySize"
        case 0x0D: "invalidAttributeValueLength"
        case 0x0E: "unlikelyError"
        case 0x0F: "insufficientEncryption"
        case 0x10: "unsupportedGroupType"
        case 0x11: "insufficientResources"
        default: "error0x\(String(code, radix: 16, uppercase: true))"
        }
    }

    public var description: String { "ATT error \(code) (\(name))" }
}
