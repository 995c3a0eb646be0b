/// The `SEND_CONFIRMED` push: a recipient acknowledged a direct message.
public struct SendConfirmation: Sendable, Hashable {
    /// The acknowledgement code, matching ``SentResult/expectedAck``.
    public var ack: UInt32
    /// The round-trip time in milliseconds.
    public var roundTrip: UInt32

    /// Creates a send confirmation.
    public init(ack: UInt32, roundTrip: UInt32) {
        self.ack = ack
        self.roundTrip = roundTrip
    }

    static func decode(from reader: inout ByteReader) throws(MeshCoreDecodeError) -> SendConfirmation {
        try reader.require(8)
        return SendConfirmation(ack: try reader.u32(), roundTrip: try reader.u32())
    }

    func encode(into writer: inout ByteWriter) {
        writer.u32(ack)
        writer.u32(roundTrip)
    }
}
