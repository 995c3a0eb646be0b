import Foundation
import MeshCore

// What `tether mesh` prints: each report has a text line and a JSON shape.

struct MeshInfoReport: Encodable {
    let name: String
    let publicKey: String
    let frequencyMHz: Double
    let bandwidthKHz: Double
    let spreadingFactor: Int
    let codingRate: Int
    let txPower: Int
    let firmware: String?
    let firmwareVersionCode: Int?
    let maxContacts: Int?
    let maxChannels: Int?
    let contacts: Int
    let channels: [String]

    init(_ info: SelfInfo, _ device: DeviceInfo?, contacts: Int, channels: [String]) {
        name = info.name
        publicKey = info.publicKey.hexString
        frequencyMHz = info.radioFrequency
        bandwidthKHz = info.radioBandwidth
        spreadingFactor = Int(info.spreadingFactor)
        codingRate = Int(info.codingRate)
        txPower = Int(info.txPower)
        firmware = device?.firmwareVersion
        firmwareVersionCode = device.map { Int($0.firmwareVersionCode) }
        maxContacts = device?.maxContacts
        maxChannels = device.map { Int($0.maxChannels) }
        self.contacts = contacts
        self.channels = channels
    }

    var text: String {
        """
        \(terminalSafe(name))  key \(publicKey.prefix(12))…
        radio    \(String(format: "%.3f", frequencyMHz)) MHz, BW \(String(format: "%g", bandwidthKHz)) kHz, SF\(spreadingFactor), CR\(codingRate), \(txPower) dBm
        firmware \(terminalSafe(firmware ?? "?")) (code \(firmwareVersionCode.map(String.init) ?? "?")), up to \(maxContacts.map(String.init) ?? "?") contacts and \(maxChannels.map(String.init) ?? "?") channels
        contacts \(contacts); channels \(channels.isEmpty ? "none" : terminalSafe(channels.joined(separator: ", ")))
        """
    }
}

struct MeshContactRow: Encodable {
    let name: String
    let type: String
    let publicKey: String
    let path: String
    let lastAdvert: UInt32

    init(_ contact: MeshContact) {
        name = contact.name
        type = "\(contact.type)"
        publicKey = contact.publicKey.hexString
        path = contact.outPath.map { $0.isEmpty ? "direct" : "\($0.count) hop(s)" } ?? "flood"
        lastAdvert = contact.lastAdvert
    }

    var text: String { pad(terminalSafe(name), 18) + pad(type, 10) + pad(String(publicKey.prefix(12)), 14) + path }
}

struct MeshMessageRow: Encodable {
    let direction: String
    let kind: String
    let to: String?
    let channel: Int?
    let text: String
    let timestamp: UInt32
    let status: String
    let ack: UInt32?
    let roundTripMs: UInt32?

    init(_ message: MeshMessage, contact: String?) {
        direction = message.direction.rawValue
        kind = message.kind.rawValue
        to = contact
        channel = message.channelIndex
        text = message.text
        timestamp = message.timestamp
        status = message.status.rawValue
        ack = message.ack
        roundTripMs = message.roundTrip
    }
}

struct MeshTimeReport: Encodable {
    let radio: UInt32
    let local: UInt32
    let driftSeconds: Int

    init(radio: UInt32, local: Date) {
        self.radio = radio
        self.local = UInt32(clamping: Int64(local.timeIntervalSince1970))
        driftSeconds = Int(radio) - Int(self.local)
    }

    var text: String {
        let date = Date(timeIntervalSince1970: TimeInterval(radio))
        return "Radio time \(ISO8601DateFormatter().string(from: date)) (\(driftSeconds >= 0 ? "+" : "")\(driftSeconds) s from this computer)"
    }
}

/// A stored message for `tether mesh messages`.
struct MeshStoredMessageLine: Encodable {
    let direction: String
    let kind: String
    let contact: String?
    let channel: Int?
    let sender: String?
    let text: String
    let timestamp: UInt32
    let status: String

    init(_ message: MeshMessage, contact: String?) {
        direction = message.direction.rawValue
        kind = message.kind.rawValue
        self.contact = contact ?? message.peer
        channel = message.channelIndex
        sender = message.senderName
        text = message.text
        timestamp = message.timestamp
        status = message.status.rawValue
    }

    /// The human-readable line (text from the air made safe).
    var line: String {
        let date = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(timestamp)))
        let body = terminalSafe(text)
        switch (kind, direction) {
        case ("channel", _): return "\(date)  [#\(channel ?? 0)] \(terminalSafe(sender ?? (direction == "outgoing" ? "me" : "?"))): \(body)"
        case (_, "outgoing"): return "\(date)  me → \(terminalSafe(contact ?? "?")): \(body)  (\(status))"
        default: return "\(date)  \(terminalSafe(contact ?? "?")) → me: \(body)"
        }
    }
}

/// One `tether mesh listen` line.
struct MeshListenLine: Encodable {
    let event: String
    let from: String?
    let channel: Int?
    let text: String?
    let ack: UInt32?
    let roundTripMs: UInt32?
    let state: String?

    init?(_ event: ConnectionManager.Event, names: [String: String]) {
        switch event {
        case .message(let message) where message.direction == .incoming:
            self.event = message.kind == .direct ? "direct" : "channel"
            from = message.kind == .direct ? (message.peer.flatMap { names[$0] } ?? message.peer) : message.senderName
            channel = message.channelIndex
            text = message.text
            ack = nil; roundTripMs = nil; state = nil
        case .acknowledged(let ack, let roundTrip):
            self.event = "ack"
            self.ack = ack
            roundTripMs = roundTrip
            from = nil; channel = nil; text = nil; state = nil
        case .state(let state):
            self.event = "state"
            self.state = state.rawValue
            from = nil; channel = nil; text = nil; ack = nil; roundTripMs = nil
        case .messageNotStored(let reason):
            self.event = "not_stored"
            text = reason
            from = nil; channel = nil; ack = nil; roundTripMs = nil; state = nil
        default:
            return nil
        }
    }

    /// The human-readable line.
    var line: String {
        switch event {
        case "direct": "\(terminalSafe(from ?? "?")) → me: \(terminalSafe(text ?? ""))"
        case "channel": "[#\(channel ?? 0)] \(terminalSafe(from ?? "?")): \(terminalSafe(text ?? ""))"
        case "ack": "ack \(String(format: "%08x", ack ?? 0)) (round trip \(roundTripMs ?? 0) ms)"
        case "not_stored": "(the message above was not saved: \(terminalSafe(text ?? "?")))"
        default: "(link \(state ?? "?"))"
        }
    }
}
