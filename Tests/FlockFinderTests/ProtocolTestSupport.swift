import Foundation
import Testing

@testable import FlockFinder

/// Shared helpers for the FlockFinder protocol tests.
enum ProtocolFixtures {
    /// The parser the tests share.
    static let quietParser = FlockMessageParser()

    static func data(_ text: String) -> Data { Data(text.utf8) }

    /// The spec's schema example (pretty-printed, as in the document).
    static let specSchemaExample = """
        {
          "type": "Flock Safety",
          "mac": "AA:BB:CC:DD:EE:FF",
          "ssid": "FLOCK-CAM-001",
          "rssi": -55,
          "confidence": 0.95,
          "ts": 123456789
        }
        """
    /// The spec's "Flock Safety ALPR" example.
    static let specFlockExample = """
        {
          "type": "Flock Safety",
          "mac": "3C:71:BF:12:34:56",
          "ssid": "FLOCK-S3-1234",
          "rssi": -62,
          "confidence": 0.98,
          "ts": 1704307200
        }
        """
    /// The spec's "Ring Doorbell" example.
    static let specRingExample = """
        {
          "type": "Ring",
          "mac": "A4:83:E7:AB:CD:EF",
          "ssid": "Ring Doorbell Pro",
          "rssi": -71,
          "confidence": 0.85,
          "ts": 1704307200
        }
        """
    /// The spec's "Unknown Device" example (no ssid).
    static let specUnknownExample = """
        {
          "type": "Unknown",
          "mac": "00:11:22:33:44:55",
          "rssi": -78,
          "confidence": 0.45,
          "ts": 1704307200
        }
        """

    /// Payloads exactly as the firmware's ArduinoJson `serializeJson` writes them.
    static let firmwareWiFiFlock =
        #"{"type":"Flock Safety","mac":"70:c9:4e:12:34:56","ssid":"Flock-A1B2C3","rssi":-67,"confidence":0.9,"ts":734512}"#
    static let firmwareWiFiPenguin =
        #"{"type":"Penguin","mac":"3c:91:80:aa:bb:cc","ssid":"Penguin-1234","rssi":-74,"confidence":0.9,"ts":901234}"#
    static let firmwareWiFiPigvision =
        #"{"type":"Pigvision","mac":"d8:f3:bc:01:02:03","ssid":"PIGVISION_5","rssi":-88,"confidence":0.9,"ts":1000}"#
    static let firmwareBLEFlock =
        #"{"type":"Flock Safety","mac":"58:8e:81:11:22:33","ssid":"FS Ext Battery","rssi":-49,"confidence":0.85,"ts":42}"#
    static let firmwareBLERaven =
        #"{"type":"Raven (Gunshot Detector)","mac":"cc:cc:cc:de:ad:01","ssid":"","rssi":-81,"confidence":0.85,"ts":3600000}"#
    static let firmwareBLENameDerived =
        #"{"type":"Axis","mac":"ec:1b:bd:00:00:07","ssid":"AXIS-M3106","rssi":-95,"confidence":0.85,"ts":4294967295}"#

    static let firmwareDetections = [
        firmwareWiFiFlock, firmwareWiFiPenguin, firmwareWiFiPigvision,
        firmwareBLEFlock, firmwareBLERaven, firmwareBLENameDerived,
    ]

    static let firmwareWiFiScan =
        #"{"evt":"wifi_scan","ssid":"HomeNet","mac":"aa:bb:cc:dd:ee:ff","rssi":-60,"ch":6,"type":"probe","ts":1000}"#
    static let firmwareWiFiBeacon =
        #"{"evt":"wifi_scan","ssid":"","mac":"70:c9:4e:00:00:01","rssi":-40,"ch":11,"type":"beacon","ts":2000}"#
    static let firmwareBLEScan =
        #"{"evt":"ble_scan","name":"FS Ext Battery","mac":"58:8e:81:11:22:33","rssi":-70,"svc":true,"ts":3000}"#
    static let firmwareBLEScanNoName =
        #"{"evt":"ble_scan","name":"","mac":"11:22:33:44:55:66","rssi":-99,"svc":false,"ts":3001}"#
    static let firmwareStatus = #"{"evt":"status","msg":"Scanning started","ts":5}"#
    static let firmwareChannel = #"{"evt":"channel","ch":13,"ts":123456}"#

    static let firmwareStreamEvents = [
        firmwareWiFiScan, firmwareWiFiBeacon, firmwareBLEScan, firmwareBLEScanNoName,
        firmwareStatus, firmwareChannel,
    ]

    /// Decodes encoder output as a JSON object for shape checks.
    static func jsonObject(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}

extension FlockMessageParser {
    /// ``decodeDetection(_:)`` as a value to compare.
    func parseDetection(_ data: Data) -> Result<Detection, FlockParseError> {
        Result { () throws(FlockParseError) in try decodeDetection(data) }
    }

    /// ``decodeStream(_:)`` as a value to compare.
    func parseStream(_ data: Data) -> Result<StreamEvent, FlockParseError> {
        Result { () throws(FlockParseError) in try decodeStream(data) }
    }
}
