/// The `SENT` reply to `SEND_TXT_MSG`: the message was queued for sending.
public struct SentResult: Sendable, Hashable {
    /// Whether the message is flooded (no known path) rather than sent along a path.
    public var isFlood: Bool
    /// The acknowledgement code the recipient will return, as `SEND_CONFIRMED` reports it
    /// (the 4 wire bytes read little-endian).
    public var expectedAck: UInt32
    /// How long to wait for the acknowledgement, in milliseconds.
    public var suggestedTimeout: UInt32

    /// Creates a sent result.
    public init(isFlood: Bool, expectedAck: UInt32, suggestedTimeout: UInt32) {
        self.isFlood = isFlood
        self.expectedAck = expectedAck
        self.suggestedTimeout = suggestedTimeout
    }

    static func decode(from reader: inout ByteReader) throws(MeshCoreDecodeError) -> SentResult {
        try reader.require(9)
        return SentResult(
            isFlood: try reader.u8() != 0, expectedAck: try reader.u32(),
            suggestedTimeout: try reader.u32())
    }

    func encode(into writer: inout ByteWriter) {
        writer.bool(isFlood)
        writer.u32(expectedAck)
        writer.u32(suggestedTimeout)
    }
}
