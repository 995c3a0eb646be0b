import Foundation

/// One surveillance-device detection, as notified on the detection characteristic.
///
/// The firmware always sends all six fields; the app treats `mac`, `ssid` and `ts` as optional
/// (the spec allows their absence, and `ssid` is `""` when there is none).
public struct Detection: Sendable, Hashable, Codable {
    /// What was detected.
    public var type: DetectionType
    /// Signal strength in dBm.
    public var rssi: Int
    /// Detection confidence, 0…1 (the firmware sends 0.9 for WiFi, 0.85 for BLE hits).
    public var confidence: Double
    /// The detected device's MAC address, as received (the firmware sends lower case).
    public var mac: String?
    /// The WiFi SSID, if any (the firmware's `""` is nil here).
    public var ssid: String?
    /// The firmware's `ts`: device uptime in milliseconds (the spec wrongly says Unix time).
    public var deviceUptimeMs: UInt64?

    /// The distance band for ``rssi``.
    public var proximity: Proximity { Proximity(rssi: rssi) }

    /// Creates a detection.
    public init(
        type: DetectionType,
        rssi: Int,
        confidence: Double,
        mac: String? = nil,
        ssid: String? = nil,
        deviceUptimeMs: UInt64? = nil
    ) {
        self.type = type
        self.rssi = rssi
        self.confidence = confidence
        self.mac = mac
        self.ssid = ssid
        self.deviceUptimeMs = deviceUptimeMs
    }

    /// The detection exactly as the firmware notifies it:
    /// `{"type":…,"mac":…,"ssid":…,"rssi":…,"confidence":…,"ts":…}`.
    ///
    /// All six fields, in that order, no whitespace: a nil `mac` or `ssid` is `""`, the MAC is
    /// lower-cased, a nil `ts` is `0`. Confidence is the shortest decimal that reads back
    /// exactly, without a trailing `.0` (0.9 → `0.9`, 1 → `1`).
    public func firmwareJSON() -> Data {
        FirmwareJSONWriter.object([
            "type": .string(type.name),
            "mac": .string((mac ?? "").lowercased()),
            "ssid": .string(ssid ?? ""),
            "rssi": .int(rssi),
            "confidence": .double(confidence),
            "ts": .uint(deviceUptimeMs ?? 0),
        ])
    }
}
