/// The `BATT_AND_STORAGE` reply: battery voltage and, on newer firmware, storage use.
public struct BatteryAndStorage: Sendable, Hashable {
    /// The battery voltage in millivolts.
    public var millivolts: UInt16
    /// The storage used in kilobytes; `nil` when the firmware does not report it.
    public var usedKilobytes: UInt32?
    /// The total storage in kilobytes; `nil` when the firmware does not report it.
    public var totalKilobytes: UInt32?

    /// Creates a battery and storage report.
    public init(millivolts: UInt16, usedKilobytes: UInt32? = nil, totalKilobytes: UInt32? = nil) {
        self.millivolts = millivolts
        self.usedKilobytes = usedKilobytes
        self.totalKilobytes = totalKilobytes
    }

    /// Reads the voltage, then each storage field that is present in full; a partial field
    /// is an error.
    static func decode(from reader: inout ByteReader) throws(MeshCoreDecodeError) -> BatteryAndStorage {
        let millivolts = try reader.u16()
        var used: UInt32?
        var total: UInt32?
        if !reader.isAtEnd {
            used = try reader.u32()
            if !reader.isAtEnd {
                total = try reader.u32()
            }
        }
        return BatteryAndStorage(millivolts: millivolts, usedKilobytes: used, totalKilobytes: total)
    }

    /// Writes the voltage and the storage fields that are set (used as 0 if only the total is).
    func encode(into writer: inout ByteWriter) {
        writer.u16(millivolts)
        if usedKilobytes != nil || totalKilobytes != nil {
            writer.u32(usedKilobytes ?? 0)
            if let totalKilobytes {
                writer.u32(totalKilobytes)
            }
        }
    }
}
