/// The type of a text message (`txt_type`).
///
/// Equality, hashing and `Codable` follow ``rawValue`` (the standard library's
/// `RawRepresentable` implementations), so `.unknown(n)` equals the named case for `n`.
public enum MeshTextType: RawRepresentable, Sendable, Hashable, Codable {
    /// 0: plain text.
    case plain
    /// 1: a CLI command or its output.
    case cliData
    /// 2: plain text carrying a 4-byte signer prefix.
    case signedPlain
    /// Any other type byte.
    case unknown(UInt8)

    /// Creates the type for a wire byte.
    public init(rawValue: UInt8) {
        switch rawValue {
        case 0: self = .plain
        case 1: self = .cliData
        case 2: self = .signedPlain
        default: self = .unknown(rawValue)
        }
    }

    /// The wire byte.
    public var rawValue: UInt8 {
        switch self {
        case .plain: 0
        case .cliData: 1
        case .signedPlain: 2
        case .unknown(let value): value
        }
    }
}
