import Foundation

/// Decodes notification payloads (one complete JSON object each) into detections and stream
/// events.
///
/// Pure and BLE-free. Input is untrusted: payloads over
/// ``FlockFinderBLEConstants/maxPayloadBytes``, truncated JSON (the BLE stack cuts payloads at
/// MTU − 3), invalid UTF-8, non-objects and wrong field types are all reported as
/// ``FlockParseError``; nothing here traps.
///
/// Detections need `type` (a non-empty string), `rssi` (an integer) and `confidence` (a number
/// in 0…1); `mac`, `ssid` and `ts` are optional (`null` means absent, and so does `""` for
/// `mac` and `ssid`). The MAC is kept as sent: the firmware sends lower case, the spec's
/// examples upper case. Stream events need every field the firmware sends. Integer fields accept integral
/// floats (`-55.0`); unknown keys are ignored. Syntax is Foundation's `JSONDecoder`'s (which
/// also tolerates a trailing comma); a nested extra field deeper than 16 levels is rejected.
public struct FlockMessageParser: Sendable {
    /// How deeply nested an (ignored) extra field may be before the payload is rejected.
    static let maxNestingDepth = 16

    /// Creates a parser.
    public init() {}

    /// Decodes any payload: one with an `evt` key is a stream event, anything else a
    /// detection; a rejected payload is ``FlockMessage/invalid(raw:reason:)`` (callers decide
    /// whether to log it).
    public func decode(_ data: Data) -> FlockMessage {
        let result: Result<FlockMessage, FlockParseError> = decodeObject(data).flatMap { object in
            if object["evt"] != nil {
                Self.streamEvent(from: object).map(FlockMessage.stream)
            } else {
                Self.detection(from: object).map(FlockMessage.detection)
            }
        }
        switch result {
        case .success(let message):
            return message
        case .failure(let reason):
            return .invalid(raw: Self.rawText(data), reason: reason)
        }
    }

    /// Decodes a detection-characteristic payload.
    public func decodeDetection(_ data: Data) throws(FlockParseError) -> Detection {
        try decodeObject(data).flatMap(Self.detection(from:)).get()
    }

    /// Decodes a stream-characteristic payload.
    public func decodeStream(_ data: Data) throws(FlockParseError) -> StreamEvent {
        try decodeObject(data).flatMap(Self.streamEvent(from:)).get()
    }

    /// A payload's text for reports: invalid UTF-8 repaired, capped at the payload bound.
    static func rawText(_ data: Data) -> String {
        String(decoding: data.prefix(FlockFinderBLEConstants.maxPayloadBytes), as: UTF8.self)
    }

    // MARK: - Decoding

    private func decodeObject(_ data: Data) -> Result<FlatJSONObject.Fields, FlockParseError> {
        guard data.count <= FlockFinderBLEConstants.maxPayloadBytes else {
            return .failure(.tooLarge(data.count))
        }
        guard !data.isEmpty else { return .failure(.notJSON("empty payload")) }
        // Validate UTF-8 ourselves rather than rely on the decoder's encoding sniffing, which
        // would accept UTF-16 input the firmware never sends.
        guard String(data: data, encoding: .utf8) != nil else {
            return .failure(.notJSON("invalid UTF-8"))
        }
        guard Self.nestingDepth(of: data) <= Self.maxNestingDepth else {
            return .failure(.notJSON("nested deeper than \(Self.maxNestingDepth) levels"))
        }
        do {
            return .success(try JSONDecoder().decode(FlatJSONObject.self, from: data).fields)
        } catch DecodingError.typeMismatch {
            return .failure(.notJSON("top level is not an object"))
        } catch {
            return .failure(.notJSON("malformed or truncated JSON"))
        }
    }

    /// The deepest bracket nesting outside string literals; a cheap guard so that the
    /// decoder never recurses deeply on hostile input.
    static func nestingDepth(of data: Data) -> Int {
        var depth = 0
        var deepest = 0
        var inString = false
        var escaped = false
        for byte in data {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                deepest = max(deepest, depth)
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
            default: break
            }
        }
        return deepest
    }

    static func detection(from object: FlatJSONObject.Fields) -> Result<Detection, FlockParseError> {
        Result { () throws(FlockParseError) -> Detection in
            let reader = FieldReader(object)
            let typeName = try reader.string("type")
            guard !typeName.isEmpty else { throw FlockParseError.invalidField("type") }
            let rssi = try reader.int("rssi")
            let confidence = try reader.double("confidence")
            guard (0...1).contains(confidence) else { throw FlockParseError.invalidField("confidence") }
            return Detection(
                type: DetectionType(name: typeName),
                rssi: rssi,
                confidence: confidence,
                mac: try reader.optionalString("mac").flatMap { $0.isEmpty ? nil : $0 },
                ssid: try reader.optionalString("ssid").flatMap { $0.isEmpty ? nil : $0 },
                deviceUptimeMs: try reader.optionalUInt64("ts")
            )
        }
    }

    static func streamEvent(from object: FlatJSONObject.Fields) -> Result<StreamEvent, FlockParseError> {
        Result { () throws(FlockParseError) -> StreamEvent in
            let reader = FieldReader(object)
            let evt = try reader.string("evt")
            switch evt {
            case "wifi_scan":
                let frameName = try reader.string("type")
                guard let frameType = WiFiFrameType(rawValue: frameName) else {
                    throw FlockParseError.invalidField("type")
                }
                return .wifiScan(
                    ssid: try reader.string("ssid"), mac: try reader.string("mac"),
                    rssi: try reader.int("rssi"), channel: try reader.int("ch"),
                    frameType: frameType, ts: try reader.uint64("ts")
                )
            case "ble_scan":
                return .bleScan(
                    name: try reader.string("name"), mac: try reader.string("mac"),
                    rssi: try reader.int("rssi"), advertisesService: try reader.bool("svc"),
                    ts: try reader.uint64("ts")
                )
            case "status":
                return .status(message: try reader.string("msg"), ts: try reader.uint64("ts"))
            case "channel":
                return .channel(try reader.int("ch"), ts: try reader.uint64("ts"))
            default:
                throw FlockParseError.unknownEvent(evt)
            }
        }
    }
}

extension Result where Failure == FlockParseError {
    /// Runs a throwing body that only throws ``FlockParseError``.
    fileprivate init(_ body: () throws(FlockParseError) -> Success) {
        do {
            self = .success(try body())
        } catch {
            self = .failure(error)
        }
    }
}

// MARK: - Flat JSON

/// A JSON object decoded one level deep: scalars are kept, nested values only noted.
///
/// Decoding just the top level keeps the work bounded and lets each field be type-checked with
/// a precise ``FlockParseError``.
struct FlatJSONObject: Decodable {
    /// One top-level value.
    enum Value: Equatable {
        case null
        case bool(Bool)
        case integer(Int64)
        case unsigned(UInt64)
        case double(Double)
        case string(String)
        /// An array or object; its content is never looked at.
        case composite
    }

    typealias Fields = [String: Value]

    let fields: Fields

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        var fields: Fields = [:]
        for key in container.allKeys {
            // Try the scalar types in an order that cannot confuse them: JSON booleans never
            // decode as numbers and vice versa, and integers are tried before Double so large
            // `ts` values keep full precision.
            if try container.decodeNil(forKey: key) {
                fields[key.stringValue] = .null
            } else if let bool = try? container.decode(Bool.self, forKey: key) {
                fields[key.stringValue] = .bool(bool)
            } else if let int = try? container.decode(Int64.self, forKey: key) {
                fields[key.stringValue] = .integer(int)
            } else if let uint = try? container.decode(UInt64.self, forKey: key) {
                fields[key.stringValue] = .unsigned(uint)
            } else if let double = try? container.decode(Double.self, forKey: key) {
                fields[key.stringValue] = .double(double)
            } else if let string = try? container.decode(String.self, forKey: key) {
                fields[key.stringValue] = .string(string)
            } else {
                fields[key.stringValue] = .composite
            }
        }
        self.fields = fields
    }
}

/// Typed access to a ``FlatJSONObject``'s fields, throwing ``FlockParseError``.
private struct FieldReader {
    let fields: FlatJSONObject.Fields

    init(_ fields: FlatJSONObject.Fields) { self.fields = fields }

    private func value(_ key: String) throws(FlockParseError) -> FlatJSONObject.Value {
        guard let value = fields[key], value != .null else { throw .missingField(key) }
        return value
    }

    private func optionalValue(_ key: String) -> FlatJSONObject.Value? {
        guard let value = fields[key], value != .null else { return nil }
        return value
    }

    func string(_ key: String) throws(FlockParseError) -> String {
        guard case .string(let string) = try value(key) else { throw .invalidField(key) }
        return string
    }

    func optionalString(_ key: String) throws(FlockParseError) -> String? {
        guard let value = optionalValue(key) else { return nil }
        guard case .string(let string) = value else { throw .invalidField(key) }
        return string
    }

    func bool(_ key: String) throws(FlockParseError) -> Bool {
        guard case .bool(let bool) = try value(key) else { throw .invalidField(key) }
        return bool
    }

    func double(_ key: String) throws(FlockParseError) -> Double {
        switch try value(key) {
        case .integer(let int): Double(int)
        case .unsigned(let uint): Double(uint)
        case .double(let double): double
        default: throw .invalidField(key)
        }
    }

    func int(_ key: String) throws(FlockParseError) -> Int {
        let result: Int? =
            switch try value(key) {
            case .integer(let int): Int(exactly: int)
            case .unsigned(let uint): Int(exactly: uint)
            // Integral floats (`-55.0`) are accepted; fractions are not silently rounded.
            case .double(let double): Int(exactly: double)
            default: nil
            }
        guard let result else { throw .invalidField(key) }
        return result
    }

    func uint64(_ key: String) throws(FlockParseError) -> UInt64 {
        guard let result = Self.uint64(try value(key)) else { throw .invalidField(key) }
        return result
    }

    func optionalUInt64(_ key: String) throws(FlockParseError) -> UInt64? {
        guard let value = optionalValue(key) else { return nil }
        guard let result = Self.uint64(value) else { throw .invalidField(key) }
        return result
    }

    private static func uint64(_ value: FlatJSONObject.Value) -> UInt64? {
        switch value {
        case .integer(let int): UInt64(exactly: int)
        case .unsigned(let uint): uint
        case .double(let double): UInt64(exactly: double)
        default: nil
        }
    }
}
