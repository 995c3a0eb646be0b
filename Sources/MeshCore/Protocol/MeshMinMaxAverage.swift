import Foundation

/// A sensor's minimum, maximum and average of each reading over a window (the answer to
/// ``MeshBinaryRequest/minMaxAverage(fromSecondsAgo:toSecondsAgo:)``).
///
/// Layout: the sensor's clock (`UInt32`), then records of channel, LPP type and three
/// big-endian values. The sensor firmware writes each value as one number with its own widths
/// and scales, not Cayenne LPP's: humidity takes 2 bytes × 10, accelerometer and gyrometer ×1
/// (Cayenne: 1 byte × 2, ×1000 and ×100), and the wide types (accelerometer and gyrometer 6
/// bytes, GPS 9) hold a single 32-bit number in their last 4 bytes. So this decoder does not
/// share ``MeshTelemetry``'s table, and every value is a ``MeshTelemetry/Value/number(_:)``.
public struct MeshMinMaxAverage: Sendable, Hashable {
    /// The sensor's clock when it answered (seconds since 1970).
    public var clock: UInt32
    /// One record per sensor reading.
    public var records: [Record]
    /// Bytes after the last record that could not be read (an unknown type, or padding).
    public var unparsed: Data

    /// One reading's figures.
    public struct Record: Sendable, Hashable {
        /// The sensor channel.
        public var channel: UInt8
        /// What is measured.
        public var type: MeshLPPType
        /// The lowest value in the window.
        public var minimum: MeshTelemetry.Value
        /// The highest value in the window.
        public var maximum: MeshTelemetry.Value
        /// The average over the window.
        public var average: MeshTelemetry.Value

        /// Creates a record.
        public init(channel: UInt8, type: MeshLPPType, minimum: MeshTelemetry.Value, maximum: MeshTelemetry.Value, average: MeshTelemetry.Value) {
            self.channel = channel
            self.type = type
            self.minimum = minimum
            self.maximum = maximum
            self.average = average
        }
    }

    /// Creates the figures.
    public init(clock: UInt32, records: [Record], unparsed: Data = Data()) {
        self.clock = clock
        self.records = records
        self.unparsed = unparsed
    }

    /// Decodes a response body; never traps.
    ///
    /// - Throws: ``MeshCoreDecodeError`` when the body has no clock.
    public init(decoding body: Data) throws(MeshCoreDecodeError) {
        var reader = ByteReader(body, code: MeshCorePushCode.binaryResponse.rawValue, offset: 0)
        let clock = try reader.u32()
        var records: [Record] = []
        while reader.remaining >= 2 {
            let start = reader.offset
            let channel = try reader.u8()
            guard channel != 0, let type = MeshLPPType(rawValue: try reader.u8()), reader.remaining >= 3 * Self.width(type),
                let minimum = Self.value(type, try reader.bytes(Self.width(type))),
                let maximum = Self.value(type, try reader.bytes(Self.width(type))),
                let average = Self.value(type, try reader.bytes(Self.width(type)))
            else {
                // An unknown type, a record cut short, or a wide value with bytes the firmware
                // leaves zero: left unread.
                reader = ByteReader(body, code: reader.code, offset: start)
                break
            }
            records.append(Record(channel: channel, type: type, minimum: minimum, maximum: maximum, average: average))
        }
        self.init(clock: clock, records: records, unparsed: reader.rest())
    }

    /// The response body.
    public var encoded: Data {
        var writer = ByteWriter()
        writer.u32(clock)
        for record in records {
            writer.u8(record.channel)
            writer.u8(record.type.rawValue)
            for value in [record.minimum, record.maximum, record.average] { writer.bytes(Self.bytes(record.type, value)) }
        }
        writer.bytes(unparsed)
        return writer.data
    }

    /// The width of one value of `type`, as the sensor firmware writes it.
    static func width(_ type: MeshLPPType) -> Int {
        switch type {
        case .gps: 9
        case .accelerometer, .gyrometer: 6
        case .generic, .frequency, .distance, .energy, .unixTime: 4
        case .colour: 3
        case .analogInput, .analogOutput, .illuminance, .temperature, .concentration, .barometer, .humidity, .altitude,
             .voltage, .current, .direction, .power: 2
        default: 1
        }
    }

    static func multiplier(_ type: MeshLPPType) -> Double {
        switch type {
        case .current, .distance, .energy: 1000
        case .voltage, .analogInput, .analogOutput: 100
        case .temperature, .barometer, .humidity: 10
        default: 1
        }
    }

    static func isSigned(_ type: MeshLPPType) -> Bool {
        switch type {
        case .altitude, .temperature, .gyrometer, .analogInput, .analogOutput, .gps, .accelerometer: true
        default: false
        }
    }

    /// One value: a big-endian number of the type's width (at most its last 4 bytes used),
    /// signed where the type is, divided by its multiplier; nil when a wide value's leading
    /// bytes are not zero.
    static func value(_ type: MeshLPPType, _ bytes: Data) -> MeshTelemetry.Value? {
        let raw = Array(bytes)
        let significant = raw.suffix(4)
        guard raw.dropLast(significant.count).allSatisfy({ $0 == 0 }) else { return nil }
        return .number(Double(BigEndianInteger.read(significant, signed: isSigned(type))) / multiplier(type))
    }

    /// The bytes of one value (a value that is not a number writes zeros).
    static func bytes(_ type: MeshLPPType, _ value: MeshTelemetry.Value) -> Data {
        let width = width(type)
        let significant = min(width, 4)
        guard case .number(let number) = value else { return Data(count: width) }
        return Data(count: width - significant) + BigEndianInteger.write(number * multiplier(type), width: significant, signed: isSigned(type))
    }
}
