import Foundation

/// The `CHANNEL_INFO` reply to `GET_CHANNEL`: a channel's name and secret.
public struct ChannelInfo: Sendable, Hashable {
    /// The width of the name field.
    static let nameSize = 32
    /// The length of the secret.
    static let secretSize = 16

    /// The channel slot.
    public var index: UInt8
    /// The channel name (32 NUL-padded bytes on the wire); empty for an unused slot.
    public var name: String
    /// The 16-byte channel secret.
    public var secret: Data

    /// Creates a channel-info record.
    public init(index: UInt8, name: String, secret: Data) {
        self.index = index
        self.name = name
        self.secret = secret
    }

    static func decode(from reader: inout ByteReader) throws(MeshCoreDecodeError) -> ChannelInfo {
        try reader.require(1 + nameSize + secretSize)
        return ChannelInfo(
            index: try reader.u8(), name: try reader.string(fixed: nameSize),
            secret: try reader.bytes(secretSize))
    }

    func encode(into writer: inout ByteWriter) {
        writer.u8(index)
        writer.string(name, fixed: Self.nameSize)
        writer.bytes(secret, fixed: Self.secretSize)
    }
}
