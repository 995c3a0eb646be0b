import Foundation
import FlockFinder
import TetherCore

/// The detection rules of the FlockFinder firmware (a flock-you / oui-spy fork), as the
/// emulator applies them to what it hears.
///
/// - WiFi (confidence 0.9): an SSID containing "flock", "FS Ext Battery", "Penguin" or
///   "Pigvision" (case-insensitive), or a MAC whose first three bytes are a Flock WiFi OUI or an
///   FS Ext Battery OUI. Type "Penguin" / "Pigvision" for those SSIDs, otherwise "Flock Safety".
/// - BLE (confidence 0.85): any Raven service UUID → "Raven (Gunshot Detector)"; a Flock or
///   FS Ext Battery OUI → "Flock Safety"; a name with a firmware pattern ("flock",
///   "FS Ext Battery" → "Flock Safety", "Penguin", "Pigvision") or a camera brand word
///   ("Ring Doorbell Pro" → "Ring") → that type.
public enum FlockFirmwareHeuristics {
    /// Confidence the firmware gives WiFi detections.
    public static let wifiConfidence = 0.9
    /// Confidence the firmware gives BLE detections.
    public static let bleConfidence = 0.85
    /// The type name of Raven hits.
    public static let ravenTypeName = "Raven (Gunshot Detector)"

    /// SSID substrings the firmware matches (case-insensitively here).
    public static let ssidPatterns = ["flock", "FS Ext Battery", "Penguin", "Pigvision"]
    /// OUIs of Flock Safety WiFi radios.
    public static let flockWiFiOUIs = [
        "70:c9:4e", "3c:91:80", "d8:f3:bc", "80:30:49", "14:5a:fc", "74:4c:a1", "08:3a:88", "9c:2f:9d",
    ]
    /// OUIs of Flock "FS Ext Battery" packs.
    public static let fsExtBatteryOUIs = [
        "58:8e:81", "cc:cc:cc", "ec:1b:bd", "90:35:ea", "04:0d:84", "f0:82:c0", "1c:34:f1", "38:5b:44",
        "94:34:69", "b4:e3:f9",
    ]
    /// Service UUIDs Raven gunshot detectors advertise; any one of them is a hit.
    public static let ravenServiceUUIDs: [BluetoothUUID] = [0x180A, 0x3100, 0x3200, 0x3300, 0x3400, 0x3500, 0x1809, 0x1819]
        .map { BluetoothUUID(UInt16($0)) }
    /// Camera brands a BLE name can reveal (the app's known types other than Flock Safety).
    public static let cameraBrands = [
        "Verkada", "Lorex", "Reolink", "Axis", "Hikvision", "Dahua", "Ring", "Nest", "Arlo", "Wyze", "Eufy",
    ]

    /// The OUI (first three bytes, lower case) of a MAC written `aa:bb:cc:…` or `aa-bb-cc-…`.
    public static func oui(of mac: String) -> String {
        String(mac.lowercased().replacingOccurrences(of: "-", with: ":").prefix(8))
    }

    /// The detection type of a WiFi frame, or nil when the firmware ignores it.
    public static func wifiType(ssid: String, mac: String) -> DetectionType? {
        let lowered = ssid.lowercased()
        if lowered.contains("penguin") { return DetectionType(name: "Penguin") }
        if lowered.contains("pigvision") { return DetectionType(name: "Pigvision") }
        if lowered.contains("flock") || lowered.contains("fs ext battery") { return .flockSafety }
        if isFlockOUI(mac) { return .flockSafety }
        return nil
    }

    /// The detection type of a BLE advertisement, or nil when the firmware ignores it.
    public static func bleType(name: String, mac: String, serviceUUIDs: [BluetoothUUID]) -> DetectionType? {
        if serviceUUIDs.contains(where: ravenServiceUUIDs.contains) { return DetectionType(name: ravenTypeName) }
        if isFlockOUI(mac) { return .flockSafety }
        let lowered = name.lowercased()
        if lowered.contains("flock") || lowered.contains("fs ext battery") { return .flockSafety }
        if lowered.contains("penguin") { return DetectionType(name: "Penguin") }
        if lowered.contains("pigvision") { return DetectionType(name: "Pigvision") }
        // Whole words only: "Ring" must not fire on "Spring" or "String".
        let words = Set(lowered.split { !$0.isLetter }.map(String.init))
        if let brand = cameraBrands.first(where: { words.contains($0.lowercased()) }) {
            return DetectionType(name: brand)
        }
        return nil
    }

    /// Whether the MAC's OUI is a Flock WiFi or FS Ext Battery OUI.
    public static func isFlockOUI(_ mac: String) -> Bool {
        let prefix = oui(of: mac)
        return flockWiFiOUIs.contains(prefix) || fsExtBatteryOUIs.contains(prefix)
    }
}
