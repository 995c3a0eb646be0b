import Foundation
import MeshCore
import TetherCore

// What `tether mesh` prints: each report has a text line and a JSON shape.

/// A `radioInfo` record (`mesh info`).
struct MeshInfoReport: Encodable {
    let type = "radioInfo"
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

/// A `contact` record (`mesh contacts`).
struct MeshContactRow: Encodable {
    let type = "contact"
    let name: String
    let contactType: String
    let publicKey: String
    let path: String
    /// When the contact last advertised, by its clock.
    let lastAdvert: String

    init(_ contact: MeshContact) {
        name = contact.name
        contactType = "\(contact.type)"
        publicKey = contact.publicKey.hexString
        path = contact.outPathHopCount.map { $0 == 0 ? "direct" : "\($0) hop(s)" } ?? "flood"
        lastAdvert = Timestamp.string(unixSeconds: contact.lastAdvert)
    }

    var text: String { pad(terminalSafe(name), 18) + pad(contactType, 10) + pad(String(publicKey.prefix(12)), 14) + path }
}

/// A `time` record (`mesh time`): the radio's clock and this computer's.
struct MeshTimeReport: Encodable {
    let type = "time"
    let radio: String
    let local: String
    let driftSeconds: Int

    init(radio: UInt32, local: Date) {
        let localSeconds = UInt32(clamping: Int64(local.timeIntervalSince1970))
        self.radio = Timestamp.string(unixSeconds: radio)
        self.local = Timestamp.string(unixSeconds: localSeconds)
        driftSeconds = Int(radio) - Int(localSeconds)
    }

    var text: String {
        "Radio time \(radio) (\(driftSeconds >= 0 ? "+" : "")\(driftSeconds) s from this computer)"
    }
}

/// A `message` record: what `mesh send`/`channel` sent, what `mesh messages` keeps and what
/// `mesh listen` hears, in one shape. `contact` is the contact's name (or key prefix when
/// unknown) for direct messages; `sender` is a channel message's sender; `sentAt` is the
/// sender's clock. Every key is always written (`null` when it does not apply).
struct MeshMessageLine: Encodable {
    let type = "message"
    let direction: String
    let messageKind: String
    let contact: String?
    let channel: Int?
    let sender: String?
    let text: String
    let sentAt: String
    let status: String
    let ack: String?
    let roundTripMs: UInt32?

    init(_ message: MeshMessage, contact: String?) {
        direction = message.direction.rawValue
        messageKind = message.kind.rawValue
        self.contact = message.kind == .direct ? (contact ?? message.peer) : nil
        channel = message.channelIndex
        sender = message.senderName
        text = message.text
        sentAt = Timestamp.string(unixSeconds: message.timestamp)
        status = message.status.rawValue
        ack = message.ack.map { String(format: "%08x", $0) }
        roundTripMs = message.roundTrip
    }

    private enum Key: String, CodingKey {
        case type, direction, messageKind, contact, channel, sender, text, sentAt, status, ack, roundTripMs
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(type, forKey: .type)
        try container.encode(direction, forKey: .direction)
        try container.encode(messageKind, forKey: .messageKind)
        try container.encode(contact, forKey: .contact)
        try container.encode(channel, forKey: .channel)
        try container.encode(sender, forKey: .sender)
        try container.encode(text, forKey: .text)
        try container.encode(sentAt, forKey: .sentAt)
        try container.encode(status, forKey: .status)
        try container.encode(ack, forKey: .ack)
        try container.encode(roundTripMs, forKey: .roundTripMs)
    }

    /// The human-readable line (text from the air made safe).
    var line: String {
        let body = terminalSafe(text)
        switch (messageKind, direction) {
        case ("channel", _): return "\(sentAt)  [#\(channel ?? 0)] \(terminalSafe(sender ?? (direction == "outgoing" ? "me" : "?"))): \(body)"
        case (_, "outgoing"): return "\(sentAt)  me → \(terminalSafe(contact ?? "?")): \(body)  (\(status))"
        default: return "\(sentAt)  \(terminalSafe(contact ?? "?")) → me: \(body)"
        }
    }
}

/// One `tether mesh listen` record: a `message`, or an `ack`, a link `state` change or a
/// `notStored` notice.
enum MeshListenLine: Encodable {
    case message(MeshMessageLine)
    case ack(Ack)
    case state(State)
    case notStored(NotStored)

    /// An `ack` record: a sent message was confirmed.
    struct Ack: Encodable {
        let type = "ack"
        let ack: String
        let roundTripMs: UInt32
    }

    /// A `state` record: the link changed.
    struct State: Encodable {
        let type = "state"
        let state: String
    }

    /// A `notStored` record: the message above could not be saved.
    struct NotStored: Encodable {
        let type = "notStored"
        let reason: String
    }

    init?(_ event: ConnectionManager.Event, names: [String: String]) {
        switch event {
        case .message(let message) where message.direction == .incoming:
            self = .message(MeshMessageLine(message, contact: message.peer.flatMap { names[$0] }))
        case .acknowledged(let ack, let roundTrip):
            self = .ack(Ack(ack: String(format: "%08x", ack), roundTripMs: roundTrip))
        case .state(let state):
            self = .state(State(state: state.rawValue))
        case .messageNotStored(let reason):
            self = .notStored(NotStored(reason: reason))
        default:
            return nil
        }
    }

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .message(let line): try line.encode(to: encoder)
        case .ack(let ack): try ack.encode(to: encoder)
        case .state(let state): try state.encode(to: encoder)
        case .notStored(let notice): try notice.encode(to: encoder)
        }
    }

    /// The human-readable line.
    var line: String {
        switch self {
        case .message(let message) where message.messageKind == "direct": "\(terminalSafe(message.contact ?? "?")) → me: \(terminalSafe(message.text))"
        case .message(let message): "[#\(message.channel ?? 0)] \(terminalSafe(message.sender ?? "?")): \(terminalSafe(message.text))"
        case .ack(let ack): "ack \(ack.ack) (round trip \(ack.roundTripMs) ms)"
        case .notStored(let notice): "(the message above was not saved: \(terminalSafe(notice.reason)))"
        case .state(let state): "(link \(state.state))"
        }
    }
}
