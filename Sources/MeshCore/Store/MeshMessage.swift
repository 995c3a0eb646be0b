import Foundation

/// A message as the app keeps it: received from the radio's queue, or sent by the app.
public struct MeshMessage: Sendable, Hashable, Codable, Identifiable {
    /// Who sent it.
    public enum Direction: String, Sendable, Hashable, Codable { case incoming, outgoing }
    /// Where it went.
    public enum Kind: String, Sendable, Hashable, Codable { case direct, channel }
    /// How far an outgoing direct message got.
    public enum Status: String, Sendable, Hashable, Codable {
        /// Received (incoming messages).
        case received
        /// Handed to the radio, not yet acknowledged.
        case sent
        /// The recipient acknowledged it.
        case delivered
        /// No acknowledgement after every attempt, or the radio refused it.
        case failed
    }

    /// The store's row id (nil until saved).
    public var id: Int64?
    /// Incoming or outgoing.
    public var direction: Direction
    /// Direct or channel.
    public var kind: Kind
    /// The other party's public key prefix, hex (direct messages).
    public var peer: String?
    /// The channel index (channel messages).
    public var channelIndex: Int?
    /// The sender's name where known (channel messages carry it in their text).
    public var senderName: String?
    /// The message text (for channel messages without the "Name: " prefix).
    public var text: String
    /// The sender's timestamp (epoch seconds).
    public var timestamp: UInt32
    /// How an incoming message came, as the radio encodes it (0xFF direct, else the hops in
    /// bits 0–5: ``ReceivedMeshMessage``), incoming only.
    public var pathLength: Int?
    /// Signal-to-noise ratio in dB (V3 frames), incoming only.
    public var snr: Double?
    /// Delivery state.
    public var status: Status
    /// The acknowledgement code expected for an outgoing direct message.
    public var ack: UInt32?
    /// Round trip of the acknowledgement in milliseconds.
    public var roundTrip: UInt32?
    /// When the app stored it.
    public var storedAt: Date

    /// Creates a message.
    public init(
        id: Int64? = nil, direction: Direction, kind: Kind, peer: String? = nil, channelIndex: Int? = nil,
        senderName: String? = nil, text: String, timestamp: UInt32, pathLength: Int? = nil, snr: Double? = nil,
        status: Status, ack: UInt32? = nil, roundTrip: UInt32? = nil, storedAt: Date = Date()
    ) {
        self.id = id
        self.direction = direction
        self.kind = kind
        self.peer = peer
        self.channelIndex = channelIndex
        self.senderName = senderName
        self.text = text
        self.timestamp = timestamp
        self.pathLength = pathLength
        self.snr = snr
        self.status = status
        self.ack = ack
        self.roundTrip = roundTrip
        self.storedAt = storedAt
    }

    /// An incoming direct message.
    public init(_ message: ContactMessage, storedAt: Date = Date()) {
        self.init(direction: .incoming, kind: .direct, peer: message.senderPrefix.hexString, text: message.text,
                  timestamp: message.timestamp, pathLength: Int(message.pathLength), snr: message.snr,
                  status: .received, storedAt: storedAt)
    }

    /// An incoming channel message.
    public init(_ message: ChannelMessage, storedAt: Date = Date()) {
        self.init(direction: .incoming, kind: .channel, channelIndex: Int(message.channelIndex), senderName: message.senderName,
                  text: message.body, timestamp: message.timestamp, pathLength: Int(message.pathLength), snr: message.snr,
                  status: .received, storedAt: storedAt)
    }

    /// What makes two copies of one message the same: the radio may hand a message over again
    /// after a link loss, and the app must show it once.
    public var deduplicationKey: String {
        switch kind {
        case .direct: "\(direction.rawValue)|d|\(peer ?? "")|\(timestamp)|\(text)"
        case .channel: "\(direction.rawValue)|c|\(channelIndex ?? -1)|\(senderName ?? "")|\(timestamp)|\(text)"
        }
    }
}
