import Foundation

/// Telemetry in Cayenne LPP, as MeshCore nodes send it (`TELEMETRY_RESPONSE`, and the
/// telemetry binary request): a sequence of channel, type and a big-endian value.
///
/// Channel 1 is the node itself (its battery voltage first). Decoding stops at a channel byte
/// of 0 (padding), and at a type it does not know (its width is unknown): ``unparsed`` then
/// keeps the bytes left.
public struct MeshTelemetry: Sendable, Hashable {
    /// The readings, in the order sent.
    public var readings: [Reading]
    /// Bytes after the last reading that could not be read (padding, an unknown type, or a
    /// value cut short), kept so the telemetry encodes back to what was received.
    public var unparsed: Data

    /// How many of the ``unparsed`` bytes are not zero padding (0 when everything was read).
    public var unparsedByteCount: Int { unparsed.allSatisfy { $0 == 0 } ? 0 : unparsed.count }

    /// One value of one sensor channel.
    public struct Reading: Sendable, Hashable {
        /// The sensor channel (1 = the node itself).
        public var channel: UInt8
        /// The LPP type.
        public var type: MeshLPPType
        /// The value, scaled to its unit.
        public var value: Value

        /// Creates a reading.
        public init(channel: UInt8, type: MeshLPPType, value: Value) {
            self.channel = channel
            self.type = type
            self.value = value
        }
    }

    /// A reading's value.
    public enum Value: Sendable, Hashable {
        /// One number in the type's unit (volts, °C, %, hPa, …).
        case number(Double)
        /// Three axes (accelerometer in g, gyrometer in °/s).
        case vector(x: Double, y: Double, z: Double)
        /// A GPS fix: degrees and metres.
        case location(latitude: Double, longitude: Double, altitude: Double)
        /// A colour.
        case colour(red: UInt8, green: UInt8, blue: UInt8)
    }

    /// Creates telemetry from readings.
    public init(readings: [Reading], unparsed: Data = Data()) {
        self.readings = readings
        self.unparsed = unparsed
    }

    /// Decodes LPP bytes; never throws, never traps (see the type's note on where it stops).
    public init(lpp bytes: Data) {
        var readings: [Reading] = []
        var index = bytes.startIndex
        while index + 1 < bytes.endIndex {
            let channel = bytes[index]
            guard channel != 0, let type = MeshLPPType(rawValue: bytes[index + 1]) else { break }
            let start = index + 2
            guard start + type.size <= bytes.endIndex else { break }
            readings.append(Reading(channel: channel, type: type, value: type.value(of: bytes[start..<(start + type.size)])))
            index = start + type.size
        }
        self.init(readings: readings, unparsed: Data(bytes[index...]))
    }

    /// The LPP bytes (values rounded to the type's resolution and clamped to its range).
    public var lpp: Data {
        var data = Data()
        for reading in readings {
            data.append(reading.channel)
            data.append(reading.type.rawValue)
            data.append(reading.type.bytes(of: reading.value))
        }
        data.append(unparsed)
        return data
    }

    /// The first reading of `type`, on `channel` if given.
    public func first(_ type: MeshLPPType, channel: UInt8? = nil) -> Value? {
        readings.first { $0.type == type && (channel == nil || $0.channel == channel) }?.value
    }
}

/// The Cayenne LPP types MeshCore nodes send, with their width, scale and signedness.
public enum MeshLPPType: UInt8, Sendable, Hashable, CaseIterable {
    case digitalInput = 0, digitalOutput = 1, analogInput = 2, analogOutput = 3
    case generic = 100, illuminance = 101, presence = 102, temperature = 103, humidity = 104
    case accelerometer = 113, barometer = 115, voltage = 116, current = 117, frequency = 118
    case percentage = 120, altitude = 121, load = 122, concentration = 125, power = 128
    case distance = 130, energy = 131, direction = 132, unixTime = 133, gyrometer = 134
    case colour = 135, gps = 136, `switch` = 142

    /// The value's width in bytes.
    public var size: Int {
        switch self {
        case .digitalInput, .digitalOutput, .presence, .humidity, .percentage, .switch: 1
        case .analogInput, .analogOutput, .illuminance, .temperature, .barometer, .voltage, .current, .altitude,
             .concentration, .power, .direction: 2
        case .load, .colour: 3
        case .generic, .frequency, .distance, .energy, .unixTime: 4
        case .accelerometer, .gyrometer: 6
        case .gps: 9
        }
    }

    /// What one unit on the wire is worth: the value is the integer divided by this.
    var divisor: Double {
        switch self {
        case .analogInput, .analogOutput, .voltage, .gyrometer: 100
        case .temperature, .barometer: 10
        case .humidity: 2
        case .accelerometer, .current, .load, .distance, .energy: 1000
        default: 1
        }
    }

    /// Whether the integer is two's complement.
    var isSigned: Bool {
        switch self {
        case .analogInput, .analogOutput, .temperature, .accelerometer, .altitude, .load, .gyrometer, .gps: true
        default: false
        }
    }

    func value(of bytes: Data.SubSequence) -> MeshTelemetry.Value {
        let raw = Array(bytes)
        switch self {
        case .accelerometer, .gyrometer:
            let axes = (0..<3).map { Double(BigEndianInteger.read(raw[$0 * 2..<$0 * 2 + 2], signed: true)) / divisor }
            return .vector(x: axes[0], y: axes[1], z: axes[2])
        case .gps:
            let parts = (0..<3).map { Double(BigEndianInteger.read(raw[$0 * 3..<$0 * 3 + 3], signed: true)) }
            return .location(latitude: parts[0] / 10_000, longitude: parts[1] / 10_000, altitude: parts[2] / 100)
        case .colour:
            return .colour(red: raw[0], green: raw[1], blue: raw[2])
        default:
            return .number(Double(BigEndianInteger.read(raw[...], signed: isSigned)) / divisor)
        }
    }

    func bytes(of value: MeshTelemetry.Value) -> Data {
        switch (self, value) {
        case (.accelerometer, .vector(let x, let y, let z)), (.gyrometer, .vector(let x, let y, let z)):
            return [x, y, z].reduce(into: Data()) { $0.append(BigEndianInteger.write($1 * divisor, width: 2, signed: true)) }
        case (.gps, .location(let latitude, let longitude, let altitude)):
            return BigEndianInteger.write(latitude * 10_000, width: 3, signed: true)
                + BigEndianInteger.write(longitude * 10_000, width: 3, signed: true)
                + BigEndianInteger.write(altitude * 100, width: 3, signed: true)
        case (.colour, .colour(let red, let green, let blue)):
            return Data([red, green, blue])
        case (_, .number(let number)):
            return BigEndianInteger.write(number * divisor, width: size, signed: isSigned)
        default:
            // A value of another shape than the type holds: zeros of the type's width.
            return Data(count: size)
        }
    }
}
