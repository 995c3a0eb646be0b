import Foundation

/// The kind of WiFi frame a `wifi_scan` stream event saw.
public enum WiFiFrameType: String, Sendable, Hashable, Codable {
    /// A probe request.
    case probe
    /// A beacon.
    case beacon
}

/// One event of the live scan stream (the stream characteristic), a debugging view of what the
/// firmware is scanning. Each is one JSON object with an `evt` key.
public enum StreamEvent: Sendable, Hashable {
    /// `{"evt":"wifi_scan","ssid","mac","rssi","ch","type":"probe"|"beacon","ts"}`.
    case wifiScan(ssid: String, mac: String, rssi: Int, channel: Int, frameType: WiFiFrameType, ts: UInt64)
    /// `{"evt":"ble_scan","name","mac","rssi","svc":bool,"ts"}`; `svc` says whether the
    /// device advertised service UUIDs.
    case bleScan(name: String, mac: String, rssi: Int, advertisesService: Bool, ts: UInt64)
    /// `{"evt":"status","msg","ts"}`.
    case status(message: String, ts: UInt64)
    /// `{"evt":"channel","ch","ts"}`: the WiFi sniffer hopped to a channel.
    case channel(Int, ts: UInt64)

    /// The wire name of the event: `wifi_scan`, `ble_scan`, `status` or `channel`.
    public var evt: String {
        switch self {
        case .wifiScan: "wifi_scan"
        case .bleScan: "ble_scan"
        case .status: "status"
        case .channel: "channel"
        }
    }

    /// The firmware's device uptime in milliseconds when the event happened.
    public var ts: UInt64 {
        switch self {
        case .wifiScan(_, _, _, _, _, let ts), .bleScan(_, _, _, _, let ts),
            .status(_, let ts), .channel(_, let ts):
            ts
        }
    }

    /// The event exactly as the firmware notifies it, keys in the firmware's order.
    public func firmwareJSON() -> Data {
        switch self {
        case let .wifiScan(ssid, mac, rssi, channel, frameType, ts):
            FirmwareJSONWriter.object([
                "evt": .string(evt), "ssid": .string(ssid), "mac": .string(mac), "rssi": .int(rssi),
                "ch": .int(channel), "type": .string(frameType.rawValue), "ts": .uint(ts),
            ])
        case let .bleScan(name, mac, rssi, advertisesService, ts):
            FirmwareJSONWriter.object([
                "evt": .string(evt), "name": .string(name), "mac": .string(mac), "rssi": .int(rssi),
                "svc": .bool(advertisesService), "ts": .uint(ts),
            ])
        case let .status(message, ts):
            FirmwareJSONWriter.object(["evt": .string(evt), "msg": .string(message), "ts": .uint(ts)])
        case let .channel(channel, ts):
            FirmwareJSONWriter.object(["evt": .string(evt), "ch": .int(channel), "ts": .uint(ts)])
        }
    }
}
