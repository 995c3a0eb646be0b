/// Why a MeshCore frame could not be decoded.
public enum MeshCoreDecodeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The frame had no bytes at all.
    case empty
    /// The frame ended early: `needed` bytes were required, only `got` were present.
    case truncated(code: UInt8, needed: Int, got: Int)
    /// The frame is longer than ``MeshCoreFrameLimits/maximumFrameSize``.
    case tooLarge(Int)
    /// The frame's bytes are inconsistent.
    case malformed(code: UInt8, reason: String)
    /// The frame is well formed but a value is outside what the command takes (the radio
    /// answers `ERR 6`, illegal argument).
    case invalidValue(code: UInt8, reason: String)

    /// A short human-readable explanation.
    public var description: String {
        switch self {
        case .empty:
            "empty frame"
        case .truncated(let code, let needed, let got):
            "frame 0x\(MeshCoreDecodeError.hex(code)) truncated: needed \(needed) bytes, got \(got)"
        case .tooLarge(let size):
            "frame of \(size) bytes exceeds the \(MeshCoreFrameLimits.maximumFrameSize)-byte maximum"
        case .malformed(let code, let reason):
            "frame 0x\(MeshCoreDecodeError.hex(code)) malformed: \(reason)"
        case .invalidValue(let code, let reason):
            "frame 0x\(MeshCoreDecodeError.hex(code)) has an invalid value: \(reason)"
        }
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return digits.count == 1 ? "0" + digits : digits
    }
}

/// Why a MeshCore command could not be encoded.
public enum MeshCoreEncodeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The encoded frame would be this many bytes, over ``MeshCoreFrameLimits/maximumFrameSize``.
    case frameTooLarge(Int)
    /// An argument cannot be encoded, for example a key prefix of the wrong length.
    case invalidArgument(String)

    /// A short human-readable explanation.
    public var description: String {
        switch self {
        case .frameTooLarge(let size):
            "command of \(size) bytes exceeds the \(MeshCoreFrameLimits.maximumFrameSize)-byte maximum"
        case .invalidArgument(let reason):
            "invalid argument: \(reason)"
        }
    }
}
