/// The radio's timing parameters (`SET_TUNING_PARAMS`, `GET_TUNING_PARAMS`): how long it waits
/// before retransmitting a flood, and how much airtime it leaves others.
///
/// On the wire each value is a `UInt32` of the value × 1000. The firmware takes any value and
/// clamps it at its next boot (the receive delay to 0…20, the airtime factor to 0…9).
public struct MeshTuningParameters: Sendable, Hashable, Codable {
    /// The base of the random delay before a received flood is repeated (`rx_delay_base`).
    public var receiveDelayBase: Double
    /// How many times a transmission's airtime the radio stays silent after it (`airtime_factor`).
    public var airtimeFactor: Double

    /// Creates tuning parameters.
    public init(receiveDelayBase: Double, airtimeFactor: Double) {
        self.receiveDelayBase = receiveDelayBase
        self.airtimeFactor = airtimeFactor
    }

    /// The ranges the firmware clamps the values to when it boots.
    public static let receiveDelayBaseRange: ClosedRange<Double> = 0...20
    /// See ``receiveDelayBaseRange``.
    public static let airtimeFactorRange: ClosedRange<Double> = 0...9

    static func decode(from reader: inout ByteReader) throws(MeshCoreDecodeError) -> MeshTuningParameters {
        try reader.require(8)
        return MeshTuningParameters(
            receiveDelayBase: Double(try reader.u32()) / 1000, airtimeFactor: Double(try reader.u32()) / 1000)
    }

    func encode(into writer: inout ByteWriter) {
        writer.u32(MeshCoreFixedPoint.uint32(receiveDelayBase, scale: 1000))
        writer.u32(MeshCoreFixedPoint.uint32(airtimeFactor, scale: 1000))
    }
}
