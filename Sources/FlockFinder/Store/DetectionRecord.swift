import Foundation
import TetherCore

/// A detection as one flat JSON object: the one shape every tool prints and exports.
///
/// `tether flock parse --json`, `watch --json`, `history --json` and `DetectionStore`'s JSON
/// export all write it, so a consumer reads one schema:
///
/// ```json
/// {"type":"detection","detectionType":"Flock Safety","rssi":-62,"confidence":0.95,
///  "proximity":"near","mac":"…"|null,"ssid":"…"|null,"deviceUptimeMs":123|null,
///  "id":7|null,"receivedAt":"2026-11-25T16:52:36.123Z"|null,
///  "latitude":…|null,"longitude":…|null,"horizontalAccuracy":…|null}
/// ```
///
/// Every key above is always present (`null` when unknown): a parsed payload has no `id`,
/// `receivedAt` or location; a stored one has all it knows. `detectionType` is the firmware's
/// `type` (the camera or sensor brand); `type` names the record. `watch` adds `stored` (and
/// `storageFailure` when storing failed).
public struct DetectionRecord: Codable, Sendable, Hashable {
    /// The record's type, always `detection`.
    public var type: String { "detection" }
    /// The store's row id, for a stored detection.
    public var id: Int64?
    /// When the phone received it (`Timestamp` format).
    public var receivedAt: String?
    /// The firmware's detection type (``DetectionType/name``).
    public var detectionType: String
    /// Signal strength in dBm.
    public var rssi: Int
    /// The firmware's confidence, 0…1.
    public var confidence: Double
    /// How near the detected device is, from the RSSI.
    public var proximity: Proximity
    /// The device's MAC address, when the firmware sent one.
    public var mac: String?
    /// The Wi-Fi network name, when the firmware sent one.
    public var ssid: String?
    /// The detector's uptime at the detection (the firmware's `ts`).
    public var deviceUptimeMs: UInt64?
    /// Where the phone was, when known.
    public var latitude: Double?
    /// Where the phone was, when known.
    public var longitude: Double?
    /// The location's radius of uncertainty in metres, when known.
    public var horizontalAccuracy: Double?
    /// Whether `watch` stored it (absent elsewhere).
    public var stored: Bool?
    /// Why storing failed (absent unless it did).
    public var storageFailure: String?

    /// A detection, with what is known around it.
    public init(_ detection: Detection, receivedAt: Date? = nil, id: Int64? = nil, location: Location? = nil) {
        self.id = id
        self.receivedAt = receivedAt.map(Timestamp.string(from:))
        detectionType = detection.type.name
        rssi = detection.rssi
        confidence = detection.confidence
        proximity = detection.proximity
        mac = detection.mac
        ssid = detection.ssid
        deviceUptimeMs = detection.deviceUptimeMs
        latitude = location?.latitude
        longitude = location?.longitude
        horizontalAccuracy = location?.horizontalAccuracy
    }

    /// A stored detection.
    public init(_ stored: StoredDetection) {
        self.init(stored.detection, receivedAt: stored.receivedAt, id: stored.id, location: stored.location)
    }

    /// The stored detection this record describes.
    ///
    /// - Throws: ``DetectionRecordError`` when the record has no `id` or `receivedAt` (it was
    ///   never stored) or `receivedAt` is not ISO 8601.
    public func storedDetection() throws(DetectionRecordError) -> StoredDetection {
        guard let id else { throw .missing("id") }
        guard let receivedAt else { throw .missing("receivedAt") }
        guard let date = Timestamp.date(from: receivedAt) else { throw .badTimestamp(receivedAt) }
        let location: Location? =
            if let latitude, let longitude {
                Location(latitude: latitude, longitude: longitude, horizontalAccuracy: horizontalAccuracy)
            } else {
                nil
            }
        let detection = Detection(
            type: DetectionType(name: detectionType), rssi: rssi, confidence: confidence,
            mac: mac, ssid: ssid, deviceUptimeMs: deviceUptimeMs
        )
        return StoredDetection(id: id, detection: detection, receivedAt: date, location: location)
    }

    private enum Key: String, CodingKey {
        case type, id, receivedAt, detectionType, rssi, confidence, proximity, mac, ssid, deviceUptimeMs
        case latitude, longitude, horizontalAccuracy, stored, storageFailure
    }

    /// Writes every key of the schema, `null` when unknown (`stored` and `storageFailure` only
    /// when set).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(type, forKey: .type)
        try container.encode(id, forKey: .id)
        try container.encode(receivedAt, forKey: .receivedAt)
        try container.encode(detectionType, forKey: .detectionType)
        try container.encode(rssi, forKey: .rssi)
        try container.encode(confidence, forKey: .confidence)
        try container.encode(proximity, forKey: .proximity)
        try container.encode(mac, forKey: .mac)
        try container.encode(ssid, forKey: .ssid)
        try container.encode(deviceUptimeMs, forKey: .deviceUptimeMs)
        try container.encode(latitude, forKey: .latitude)
        try container.encode(longitude, forKey: .longitude)
        try container.encode(horizontalAccuracy, forKey: .horizontalAccuracy)
        try container.encodeIfPresent(stored, forKey: .stored)
        try container.encodeIfPresent(storageFailure, forKey: .storageFailure)
    }

    /// Reads the schema; an export written before records carried a `type` (where `type` was
    /// the detection type) reads too.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        if let detectionType = try container.decodeIfPresent(String.self, forKey: .detectionType) {
            let type = try container.decodeIfPresent(String.self, forKey: .type)
            guard type == nil || type == "detection" else {
                throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "not a detection record (type \(type ?? ""))")
            }
            self.detectionType = detectionType
        } else {
            // The earlier schema: `type` was the detection type. A record that names itself a
            // detection but has no `detectionType` is incomplete, not an old one.
            let legacy = try container.decode(String.self, forKey: .type)
            guard legacy != "detection" else {
                throw DecodingError.keyNotFound(Key.detectionType, .init(codingPath: container.codingPath, debugDescription: "a detection record without its detectionType"))
            }
            detectionType = legacy
        }
        id = try container.decodeIfPresent(Int64.self, forKey: .id)
        receivedAt = try container.decodeIfPresent(String.self, forKey: .receivedAt)
        rssi = try container.decode(Int.self, forKey: .rssi)
        confidence = try container.decode(Double.self, forKey: .confidence)
        proximity = try container.decode(Proximity.self, forKey: .proximity)
        mac = try container.decodeIfPresent(String.self, forKey: .mac)
        ssid = try container.decodeIfPresent(String.self, forKey: .ssid)
        deviceUptimeMs = try container.decodeIfPresent(UInt64.self, forKey: .deviceUptimeMs)
        latitude = try container.decodeIfPresent(Double.self, forKey: .latitude)
        longitude = try container.decodeIfPresent(Double.self, forKey: .longitude)
        horizontalAccuracy = try container.decodeIfPresent(Double.self, forKey: .horizontalAccuracy)
        stored = try container.decodeIfPresent(Bool.self, forKey: .stored)
        storageFailure = try container.decodeIfPresent(String.self, forKey: .storageFailure)
    }
}

/// Why a ``DetectionRecord`` does not describe a stored detection.
public enum DetectionRecordError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A key a stored detection needs is null or absent.
    case missing(String)
    /// `receivedAt` is not an ISO 8601 timestamp.
    case badTimestamp(String)

    public var description: String {
        switch self {
        case .missing(let key): "the record has no \(key): it was not stored"
        case .badTimestamp(let text): "receivedAt is not an ISO 8601 timestamp (\(text.prefix(40)))"
        }
    }
}
