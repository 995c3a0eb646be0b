/// The code carried by an `ERR` response.
///
/// Equality and hashing follow ``rawValue`` (the standard library's `RawRepresentable`
/// implementations), so `.unknown(2)` equals `.notFound`.
public enum MeshCoreErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// 1: the radio does not know the command, or its arguments were not accepted.
    case unsupportedCommand
    /// 2: the contact or channel was not found.
    case notFound
    /// 3: a table is full, or sending failed.
    case tableFull
    /// 4: the radio is busy or in the wrong state (for example, a listing is in progress).
    case badState
    /// 5: the radio's storage failed.
    case fileIOError
    /// 6: an argument was invalid.
    case illegalArgument
    /// Any other code.
    case unknown(UInt8)

    /// Creates the error code for a wire byte.
    public init(rawValue: UInt8) {
        switch rawValue {
        case 1: self = .unsupportedCommand
        case 2: self = .notFound
        case 3: self = .tableFull
        case 4: self = .badState
        case 5: self = .fileIOError
        case 6: self = .illegalArgument
        default: self = .unknown(rawValue)
        }
    }

    /// The wire byte.
    public var rawValue: UInt8 {
        switch self {
        case .unsupportedCommand: 1
        case .notFound: 2
        case .tableFull: 3
        case .badState: 4
        case .fileIOError: 5
        case .illegalArgument: 6
        case .unknown(let value): value
        }
    }

    /// A short human-readable explanation.
    public var description: String {
        switch self {
        case .unsupportedCommand: "unsupported command"
        case .notFound: "not found"
        case .tableFull: "table full"
        case .badState: "bad state"
        case .fileIOError: "file I/O error"
        case .illegalArgument: "illegal argument"
        case .unknown(let value): "unknown error \(value)"
        }
    }
}
