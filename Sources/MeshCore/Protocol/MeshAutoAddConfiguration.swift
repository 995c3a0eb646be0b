/// Which nodes a radio in manual-add mode still adds by itself, how far away an advert may
/// come from, and whether a full table makes room (`SET_AUTOADD_CONFIG`,
/// `GET_AUTOADD_CONFIG`). The hop limit and ``Options-swift.struct/overwriteOldest`` apply in
/// both modes; the node kinds only in manual-add mode.
public struct MeshAutoAddConfiguration: Sendable, Hashable, Codable {
    /// The kinds of node, and what to do when the table is full.
    public struct Options: OptionSet, Sendable, Hashable, Codable {
        /// The byte as on the wire.
        public let rawValue: UInt8
        /// Wraps a byte from the wire.
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// When the table is full, the oldest contact that is not a favourite makes room
        /// (the radio then pushes ``MeshCoreFrame/contactDeleted(publicKey:)``). Applies in
        /// both modes.
        public static let overwriteOldest = Options(rawValue: 0x01)
        /// Chat nodes are added.
        public static let chat = Options(rawValue: 0x02)
        /// Repeaters are added.
        public static let repeater = Options(rawValue: 0x04)
        /// Room servers are added.
        public static let roomServer = Options(rawValue: 0x08)
        /// Sensors are added.
        public static let sensor = Options(rawValue: 0x10)

        /// Whether a node of `type` is added.
        public func adds(_ type: MeshContactType) -> Bool {
            switch type {
            case .chat: contains(.chat)
            case .repeater: contains(.repeater)
            case .room: contains(.roomServer)
            case .sensor: contains(.sensor)
            default: false
            }
        }
    }

    /// What is added, and whether the oldest makes room.
    public var options: Options
    /// The farthest an advert may have come from: 0 = any distance, 1 = zero-hop only, N =
    /// up to N − 1 hops (the radio caps it at 64). Nil when the radio did not say (firmware
    /// before 1.14 sends only the options).
    public var maxHops: UInt8?

    /// Creates a configuration. Give `maxHops` explicitly: a frame without it leaves the radio
    /// to read whatever byte its buffer holds.
    public init(options: Options, maxHops: UInt8?) {
        self.options = options
        self.maxHops = maxHops
    }

    /// Whether an advert that came over `hops` hops is within ``maxHops``.
    public func admits(hops: Int) -> Bool {
        guard let maxHops, maxHops > 0 else { return true }
        return hops < Int(maxHops)
    }

    static func decode(from reader: inout ByteReader) throws(MeshCoreDecodeError) -> MeshAutoAddConfiguration {
        let options = Options(rawValue: try reader.u8())
        let maxHops: UInt8? = reader.isAtEnd ? nil : try reader.u8()
        return MeshAutoAddConfiguration(options: options, maxHops: maxHops)
    }

    func encode(into writer: inout ByteWriter) {
        writer.u8(options.rawValue)
        if let maxHops { writer.u8(maxHops) }
    }
}
