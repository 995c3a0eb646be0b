import Foundation

/// A received direct message: `CONTACT_MSG_RECV` (legacy) or `CONTACT_MSG_RECV_V3`.
///
/// V3: `10`, snr×4 (i8), 0, 0, sender prefix 6, path_len, txt_type, timestamp u32,
/// [author prefix 4 if txt_type is 2], text. Legacy: `07` and the same fields from the sender
/// prefix on.
public struct ContactMessage: ReceivedMeshMessage, Sendable, Hashable, Codable {
    /// The first 6 bytes of the sender's public key.
    public var senderPrefix: Data
    /// How the message came, as the radio encodes it (``ReceivedMeshMessage/hopCount``).
    public var pathLength: UInt8
    /// The text type.
    public var textType: MeshTextType
    /// When the sender sent it (seconds since 1970, the sender's clock).
    public var timestamp: UInt32
    /// The first 4 bytes of the original author's public key: a room server relays others'
    /// posts as ``MeshTextType/signedPlain``, the sender being the server. Present only then.
    public var authorPrefix: Data?
    /// The message text.
    public var text: String
    /// The signal-to-noise ratio in dB (V3 only, in steps of 0.25).
    public var snr: Double?
    /// Whether the frame used the V3 layout.
    public var isV3: Bool

    /// Creates a contact message.
    public init(
        senderPrefix: Data,
        pathLength: UInt8,
        textType: MeshTextType = .plain,
        timestamp: UInt32,
        authorPrefix: Data? = nil,
        text: String,
        snr: Double? = nil,
        isV3: Bool = true
    ) {
        self.senderPrefix = senderPrefix
        self.pathLength = pathLength
        self.textType = textType
        self.timestamp = timestamp
        self.authorPrefix = authorPrefix
        self.text = text
        self.snr = snr
        self.isV3 = isV3
    }

    /// The frame code this message encodes with.
    var code: UInt8 {
        isV3
            ? MeshCoreResponseCode.contactMessageReceivedV3.rawValue
            : MeshCoreResponseCode.contactMessageReceived.rawValue
    }

    static func decode(from reader: inout ByteReader, isV3: Bool) throws(MeshCoreDecodeError) -> ContactMessage {
        try reader.require(isV3 ? 15 : 12)
        var snr: Double?
        if isV3 {
            snr = Double(try reader.i8()) / 4
            _ = try reader.bytes(2)
        }
        let senderPrefix = try reader.bytes(6)
        let pathLength = try reader.u8()
        let textType = MeshTextType(rawValue: try reader.u8())
        let timestamp = try reader.u32()
        let authorPrefix: Data? = if textType == .signedPlain { try reader.bytes(4) } else { nil }
        let text = reader.restString()
        return ContactMessage(
            senderPrefix: senderPrefix, pathLength: pathLength, textType: textType,
            timestamp: timestamp, authorPrefix: authorPrefix, text: text, snr: snr, isV3: isV3)
    }

    func encode(into writer: inout ByteWriter) {
        if isV3 {
            writer.i8(MeshCoreFixedPoint.int8(snr ?? 0, scale: 4))
            writer.u8(0)
            writer.u8(0)
        }
        writer.bytes(senderPrefix, fixed: 6)
        writer.u8(pathLength)
        writer.u8(textType.rawValue)
        writer.u32(timestamp)
        if textType == .signedPlain {
            writer.bytes(authorPrefix ?? Data(), fixed: 4)
        }
        writer.string(text)
    }
}

/// A message the radio received over the mesh, with the route it came by.
public protocol ReceivedMeshMessage {
    /// How the message came, as the radio encodes it: 0xFF by a direct route, otherwise
    /// flooded over ``hopCount`` hops (bits 0–5; bits 6–7 are the path's hash size − 1).
    var pathLength: UInt8 { get }
}

extension ReceivedMeshMessage {
    /// Whether it came by a direct route (not flooded).
    public var cameDirect: Bool { pathLength == MeshContact.floodPathLength }

    /// The hops a flooded message took (nil when it came direct).
    public var hopCount: Int? { cameDirect ? nil : Int(pathLength & 0x3F) }
}
