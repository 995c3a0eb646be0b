import Foundation

/// A sensor's minimum, maximum and average of each reading over a window (the answer to
/// ``MeshBinaryRequest/minMaxAverage(fromSecondsAgo:toSecondsAgo:)``).
///
/// Layout: the sensor's clock (`UInt32`), then records of channel, LPP type and three
/// big-endian values. The sensor firmware writes them with its own widths and scales, not
/// Cayenne LPP's: humidity takes 2 bytes × 10, accelerometer and gyrometer ×1 (Cayenne: 1 byte
/// × 2, ×1000 and ×100), so this decoder does not share ``MeshTelemetry``'s table.
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
            guard channel != 0, let type = MeshLPPType(rawValue: try reader.u8()), reader.remaining >= 3 * Self.width(type) else {
                reader = ByteReader(body, code: reader.code, offset: start)
                break
            }
            let width = Self.width(type)
            let minimum = Self.value(type, try reader.bytes(width))
            let maximum = Self.value(type, try reader.bytes(width))
            let average = Self.value(type, try reader.bytes(width))
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

    static func value(_ type: MeshLPPType, _ bytes: Data) -> MeshTelemetry.Value {
        let raw = Array(bytes)
        func integer(_ slice: ArraySlice<UInt8>, signed: Bool) -> Double {
            var value: Int64 = 0
            for byte in slice { value = value << 8 | Int64(byte) }
            let bits = Int64(slice.count * 8)
            if signed, bits > 0, value & (1 << (bits - 1)) != 0 { value -= 1 << bits }
            return Double(value)
        }
        switch type {
        case .accelerometer, .gyrometer:
            let axes = (0..<3).map { integer(raw[$0 * 2..<$0 * 2 + 2], signed: true) }
            return .vector(x: axes[0], y: axes[1], z: axes[2])
        case .gps:
            let parts = (0..<3).map { integer(raw[$0 * 3..<$0 * 3 + 3], signed: true) }
            return .location(latitude: parts[0] / 10_000, longitude: parts[1] / 10_000, altitude: parts[2] / 100)
        case .colour:
            return .colour(red: raw[0], green: raw[1], blue: raw[2])
        default:
            return .number(integer(raw[...], signed: isSigned(type)) / multiplier(type))
        }
    }

    static func bytes(_ type: MeshLPPType, _ value: MeshTelemetry.Value) -> Data {
        func encode(_ number: Double, width: Int, signed: Bool) -> Data {
            let bits = Int64(width * 8)
            let lower: Int64 = signed ? -(1 << (bits - 1)) : 0
            let upper: Int64 = signed ? (1 << (bits - 1)) - 1 : (bits >= 63 ? Int64.max : (1 << bits) - 1)
            let clamped = number.isNaN ? 0 : min(max(number.rounded(), Double(lower)), Double(upper))
            let integer = UInt64(bitPattern: Int64(clamped))
            return Data((0..<width).reversed().map { UInt8(truncatingIfNeeded: integer >> (8 * UInt64($0))) })
        }
        switch (type, value) {
        case (.accelerometer, .vector(let x, let y, let z)), (.gyrometer, .vector(let x, let y, let z)):
            return [x, y, z].reduce(into: Data()) { $0.append(encode($1, width: 2, signed: true)) }
        case (.gps, .location(let latitude, let longitude, let altitude)):
            return encode(latitude * 10_000, width: 3, signed: true) + encode(longitude * 10_000, width: 3, signed: true)
                + encode(altitude * 100, width: 3, signed: true)
        case (.colour, .colour(let red, let green, let blue)):
            return Data([red, green, blue])
        case (_, .number(let number)):
            return encode(number * multiplier(type), width: width(type), signed: isSigned(type))
        default:
            return Data(count: width(type))
        }
    }
}
