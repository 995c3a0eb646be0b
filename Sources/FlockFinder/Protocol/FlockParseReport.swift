/// One result of `tether flock parse --json`: what a raw payload decodes to.
///
/// - a ``DetectionRecord`` (`{"type":"detection",…}`, the schema `watch`, `history` and the
///   export share; a parsed payload has no `id`, `receivedAt` or location, so they are `null`).
/// - `{"type":"stream","evt":…,"deviceUptimeMs":…}` plus the event's firmware fields:
///   `wifi_scan` has `ssid`, `mac`, `rssi`, `ch`, `frameType` (the firmware's `type`);
///   `ble_scan` has `name`, `mac`, `rssi`, `svc`; `status` has `msg`; `channel` has `ch`.
/// - `{"type":"invalid","input":…,"reason":…}`.
public struct FlockParseReport: Encodable, Sendable, Hashable {
    /// The message being described.
    public let message: FlockMessage

    /// Describes a decoded (or rejected) payload.
    public init(_ message: FlockMessage) {
        self.message = message
    }

    /// The record's type: `detection`, `stream` or `invalid`.
    public var type: String {
        switch message {
        case .detection: "detection"
        case .stream: "stream"
        case .invalid: "invalid"
        }
    }

    private enum Key: String, CodingKey {
        case type, rssi, mac, ssid, deviceUptimeMs
        case evt, ch, name, svc, msg, frameType
        case input, reason
    }

    /// Encodes the shapes above.
    public func encode(to encoder: any Encoder) throws {
        if case .detection(let detection) = message {
            try DetectionRecord(detection).encode(to: encoder)
            return
        }
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(type, forKey: .type)
        switch message {
        case .detection:
            break
        case .stream(let event):
            try container.encode(event.evt, forKey: .evt)
            switch event {
            case let .wifiScan(ssid, mac, rssi, channel, frameType, _):
                try container.encode(ssid, forKey: .ssid)
                try container.encode(mac, forKey: .mac)
                try container.encode(rssi, forKey: .rssi)
                try container.encode(channel, forKey: .ch)
                try container.encode(frameType, forKey: .frameType)
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
            try container.encode(event.ts, forKey: .deviceUptimeMs)
        case let .invalid(raw, reason):
            try container.encode(raw, forKey: .input)
            try container.encode(reason.description, forKey: .reason)
        }
    }
}
