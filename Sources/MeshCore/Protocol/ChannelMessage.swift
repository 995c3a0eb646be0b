import Foundation

/// A received channel message: `CHANNEL_MSG_RECV` (legacy) or `CHANNEL_MSG_RECV_V3`.
///
/// V3: `11`, snr×4 (i8), 0, 0, channel index, path_len, txt_type, timestamp u32, text.
/// Legacy: `08` and the same fields from the channel index on. The text reads
/// "SenderName: message".
public struct ChannelMessage: ReceivedMeshMessage, Sendable, Hashable, Codable {
    /// The channel slot.
    public var channelIndex: UInt8
    /// How the message came, as the radio encodes it (``ReceivedMeshMessage/hopCount``).
    public var pathLength: UInt8
    /// The text type.
    public var textType: MeshTextType
    /// When the sender sent it (seconds since 1970, the sender's clock).
    public var timestamp: UInt32
    /// The full text, normally "SenderName: message".
    public var text: String
    /// The signal-to-noise ratio in dB (V3 only, in steps of 0.25).
    public var snr: Double?
    /// Whether the frame used the V3 layout.
    public var isV3: Bool

    /// Creates a channel message.
    public init(
        channelIndex: UInt8,
        pathLength: UInt8,
        textType: MeshTextType = .plain,
        timestamp: UInt32,
        text: String,
        snr: Double? = nil,
        isV3: Bool = true
    ) {
        self.channelIndex = channelIndex
        self.pathLength = pathLength
        self.textType = textType
        self.timestamp = timestamp
        self.text = text
        self.snr = snr
        self.isV3 = isV3
    }

    /// The sender's name: the text before the first ": ", or `nil` if there is none.
    public var senderName: String? {
        guard let separator = text.range(of: ": ") else { return nil }
        return String(text[..<separator.lowerBound])
    }

    /// The message without the sender's name: the text after the first ": ", or all of it.
    public var body: String {
        guard let separator = text.range(of: ": ") else { return text }
        return String(text[separator.upperBound...])
    }

    /// The frame code this message encodes with.
    var code: UInt8 {
        isV3
            ? MeshCoreResponseCode.channelMessageReceivedV3.rawValue
            : MeshCoreResponseCode.channelMessageReceived.rawValue
    }

    static func decode(from reader: inout ByteReader, isV3: Bool) throws(MeshCoreDecodeError) -> ChannelMessage {
        try reader.require(isV3 ? 10 : 7)
        var snr: Double?
        if isV3 {
            snr = Double(try reader.i8()) / 4
            _ = try reader.bytes(2)
        }
        return ChannelMessage(
            channelIndex: try reader.u8(), pathLength: try reader.u8(),
            textType: MeshTextType(rawValue: try reader.u8()), timestamp: try reader.u32(),
            text: reader.restString(), snr: snr, isV3: isV3)
    }

    func encode(into writer: inout ByteWriter) {
        if isV3 {
            writer.i8(MeshCoreFixedPoint.int8(snr ?? 0, scale: 4))
            writer.u8(0)
            writer.u8(0)
        }
        writer.u8(channelIndex)
        writer.u8(pathLength)
        writer.u8(textType.rawValue)
        writer.u32(timestamp)
        writer.string(text)
    }
}
