import Foundation

/// The bridge's error byte in a status notification.
public enum TybeStatusCode: UInt8, Sendable, Hashable, Codable, CaseIterable, Error {
    /// No error.
    case ok = 0x00
    /// `len` disagreed with the bytes written, or was over 253.
    case malformedFrame = 0x01
    /// The frame held an unknown opcode; the keys before it were sent.
    case unknownOpcode = 0x02
    /// Same seq as the previous frame: dropped as a duplicate.
    case duplicateSeq = 0x03
    /// The dongle did not acknowledge the radio packet.
    case dongleNoAck = 0x04
    /// The bridge's queue was full; the frame was dropped and should be sent again.
    case busy = 0x05
    /// A keycode outside 0x04…0xE7.
    case invalidKey = 0x06
    /// An internal bridge error.
    case internalError = 0xFF

    /// The protocol's name for the code, e.g. `"MALFORMED_FRAME"`.
    public var name: String {
        switch self {
        case .ok: "OK"
        case .malformedFrame: "MALFORMED_FRAME"
        case .unknownOpcode: "UNKNOWN_OPCODE"
        case .duplicateSeq: "DUPLICATE_SEQ"
        case .dongleNoAck: "DONGLE_NO_ACK"
        case .busy: "BUSY"
        case .invalidKey: "INVALID_KEY"
        case .internalError: "INTERNAL"
        }
    }
}

extension TybeStatusCode: CustomStringConvertible {
    /// A sentence for logs and the UI.
    public var description: String {
        switch self {
        case .ok: "OK."
        case .malformedFrame: "Malformed frame: the length byte disagreed with the bytes written or exceeded 253."
        case .unknownOpcode: "Unknown opcode: the rest of the frame was rejected; keys before it were sent."
        case .duplicateSeq: "Duplicate sequence number: the frame repeated the previous seq and was dropped."
        case .dongleNoAck: "The dongle did not acknowledge the radio packet."
        case .busy: "The bridge is busy: its queue was full and the frame was dropped; send it again."
        case .invalidKey: "Invalid key: a keycode was outside 0x04…0xE7."
        case .internalError: "Internal bridge error."
        }
    }
}

/// A 4-byte status notification: `[flags][seq][error][reserved]`.
public struct TybeStatus: Hashable, Sendable {
    /// Flags bit 0: the bridge is ready (always set by the bridge).
    public var bridgeReady: Bool
    /// Flags bit 1: the dongle acknowledged the frame with ``seq``.
    public var ackReceived: Bool
    /// Flags bit 2: the dongle is linked (sticky; cleared after ~4 s without any dongle ACK).
    public var dongleLinked: Bool
    /// The frame this status describes (the last frame's seq for heartbeats).
    public var seq: UInt8
    /// The raw error byte.
    public var errorCode: UInt8

    /// Flags bit masks.
    public static let bridgeReadyBit: UInt8 = 0x01
    /// Flags bit masks.
    public static let ackReceivedBit: UInt8 = 0x02
    /// Flags bit masks.
    public static let dongleLinkedBit: UInt8 = 0x04
    /// A status notification's length.
    public static let byteCount = 4

    /// Creates a status.
    public init(bridgeReady: Bool = true, ackReceived: Bool = false, dongleLinked: Bool = false, seq: UInt8 = 0, errorCode: UInt8 = 0) {
        self.bridgeReady = bridgeReady
        self.ackReceived = ackReceived
        self.dongleLinked = dongleLinked
        self.seq = seq
        self.errorCode = errorCode
    }

    /// Creates a status with a known error.
    public init(bridgeReady: Bool = true, ackReceived: Bool = false, dongleLinked: Bool = false, seq: UInt8 = 0, error: TybeStatusCode) {
        self.init(bridgeReady: bridgeReady, ackReceived: ackReceived, dongleLinked: dongleLinked, seq: seq, errorCode: error.rawValue)
    }

    /// Parses a notification; nil unless it is exactly 4 bytes. Unknown flag bits and the
    /// reserved byte are ignored.
    public init?(_ data: Data) {
        let bytes = [UInt8](data)
        guard bytes.count == Self.byteCount else { return nil }
        self.init(
            bridgeReady: bytes[0] & Self.bridgeReadyBit != 0,
            ackReceived: bytes[0] & Self.ackReceivedBit != 0,
            dongleLinked: bytes[0] & Self.dongleLinkedBit != 0,
            seq: bytes[1],
            errorCode: bytes[2])
    }

    /// The flags byte.
    public var flags: UInt8 {
        (bridgeReady ? Self.bridgeReadyBit : 0) | (ackReceived ? Self.ackReceivedBit : 0)
            | (dongleLinked ? Self.dongleLinkedBit : 0)
    }

    /// The wire bytes (reserved byte 0).
    public var bytes: Data { Data([flags, seq, errorCode, 0]) }

    /// The error, or nil for a code this version does not know.
    public var error: TybeStatusCode? { TybeStatusCode(rawValue: errorCode) }

    /// Whether the error byte is OK.
    public var isOK: Bool { errorCode == TybeStatusCode.ok.rawValue }

    /// Nil when OK; the code's description when known; `"unknown error 0xNN"` otherwise.
    public var errorDescription: String? {
        if isOK { return nil }
        return error?.description ?? "unknown error 0x\(tybeHexByte(errorCode))"
    }
}
