/// One result of `tether flock parse --json`: what a raw payload decodes to.
///
/// - `{"kind":"detection","type":…,"rssi":…,"confidence":…,"mac":…|null,"ssid":…|null,"ts":…|null,"proximity":…}`
///   (`mac`, `ssid` and `ts` are always present, `null` when absent; `proximity` is a
///   ``Proximity`` raw value).
/// - `{"kind":"stream","evt":…}` plus the event's firmware fields: `wifi_scan` has `ssid`,
///   `mac`, `rssi`, `ch`, `type`, `ts`; `ble_scan` has `name`, `mac`, `rssi`, `svc`, `ts`;
///   `status` has `msg`, `ts`; `channel` has `ch`, `ts`.
/// - `{"kind":"invalid","raw":…,"reason":…}`.
public struct FlockParseReport: Encodable, Sendable, Hashable {
    /// The message being described.
    public let message: FlockMessage

    /// Describes a decoded (or rejected) payload.
    public init(_ message: FlockMessage) {
        self.message = message
    }

    /// `detection`, `stream` or `invalid`.
    public var kind: String {
        switch message {
        case .detection: "detection"
        case .stream: "stream"
        case .invalid: "invalid"
        }
    }

    private enum Key: String, CodingKey {
        case kind, type, rssi, confidence, mac, ssid, ts, proximity
        case evt, ch, name, svc, msg
        case raw, reason
    }

    /// Encodes the shapes above; detection nulls are written explicitly so consumers can rely
    /// on every key being present.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(kind, forKey: .kind)
        switch message {
        case .detection(let detection):
            try container.encode(detection.type.name, forKey: .type)
            try container.encode(detection.rssi, forKey: .rssi)
            try container.encode(detection.confidence, forKey: .confidence)
            try container.encode(detection.mac, forKey: .mac)
            try container.encode(detection.ssid, forKey: .ssid)
            try container.encode(detection.deviceUptimeMs, forKey: .ts)
            try container.encode(detection.proximity, forKey: .proximity)
        case .stream(let event):
            try container.encode(event.evt, forKey: .evt)
            switch event {
            case let .wifiScan(ssid, mac, rssi, channel, frameType, _):
                try container.encode(ssid, forKey: .ssid)
                try container.encode(mac, forKey: .mac)
                try container.encode(rssi, forKey: .rssi)
                try container.encode(channel, forKey: .ch)
                try container.encode(frameType, forKey: .type)
            case let .bleScan(name, mac, rssi, advertisesService, _):
                try container.encode(name, forKey: .name)
                try container.encode(mac, forKey: .mac)
                try container.encode(rssi, forKey: .rssi)
                try container.encode(advertisesService, forKey: .svc)
            case let .status(message, _):
                try container.encode(message, forKey: .msg)
            case let .channel(channel, _):
                try container.encode(channel, forKey: .ch)
            }
            try container.encode(event.ts, forKey: .ts)
        case let .invalid(raw, reason):
            try container.encode(raw, forKey: .raw)
            try container.encode(reason.description, forKey: .reason)
        }
    }
}
