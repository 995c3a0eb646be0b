/// The kind of node a contact is (the advert type).
///
/// Equality, hashing and `Codable` follow ``rawValue`` (the standard library's
/// `RawRepresentable` implementations), so `.unknown(n)` equals the named case for `n`.
public enum MeshContactType: RawRepresentable, Sendable, Hashable, Codable {
    /// 0: not set.
    case none
    /// 1: a companion (chat) node.
    case chat
    /// 2: a repeater.
    case repeater
    /// 3: a room server.
    case room
    /// 4: a sensor.
    case sensor
    /// Any other type byte.
    case unknown(UInt8)

    /// Creates the type for a wire byte.
    public init(rawValue: UInt8) {
        switch rawValue {
        case 0: self = .none
        case 1: self = .chat
        case 2: self = .repeater
        case 3: self = .room
        case 4: self = .sensor
        default: self = .unknown(rawValue)
        }
    }

    /// The wire byte.
    public var rawValue: UInt8 {
        switch self {
        case .none: 0
        case .chat: 1
        case .repeater: 2
        case .room: 3
        case .sensor: 4
        case .unknown(let value): value
        }
    }
}
