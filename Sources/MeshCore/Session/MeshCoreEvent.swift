import Foundation

/// What the radio tells a session without being asked: pushes, and the messages fetched from
/// its queue.
public enum MeshCoreEvent: Sendable, Hashable {
    /// A direct message fetched from the radio's queue.
    case contactMessage(ContactMessage)
    /// A channel message fetched from the radio's queue.
    case channelMessage(ChannelMessage)
    /// A binary datagram fetched from the radio's queue.
    case channelData(MeshChannelData)
    /// A recipient acknowledged a direct message (matches ``SentResult/expectedAck``).
    case sendConfirmed(SendConfirmation)
    /// The radio has queued messages (MSG_WAITING).
    case messageWaiting
    /// A known contact advertised.
    case advert(publicKey: Data)
    /// The route to a contact changed.
    case pathUpdated(publicKey: Data)
    /// A new node advertised (when the radio does not add contacts by itself).
    case newAdvert(MeshContact)
    /// The radio deleted a contact.
    case contactDeleted(publicKey: Data)
    /// The radio's contact table is full.
    case contactsFull
    /// A push answering a remote request (login, status, telemetry, binary and anonymous
    /// requests, path discovery, trace, node discovery), or raw and logged packets.
    case remote(MeshCoreFrame)
    /// Any other push, raw.
    case push(code: UInt8, payload: Data)
}

/// A direct message that reached its recipient.
public struct MessageDelivery: Sendable, Hashable {
    /// The radio's answer to the send that was acknowledged.
    public let sent: SentResult
    /// The acknowledgement.
    public let confirmation: SendConfirmation
    /// How many sends it took (1 = first try).
    public let attempts: Int
}

/// A contact listing.
public struct ContactList: Sendable, Hashable {
    /// The contacts, in the radio's order.
    public let contacts: [MeshContact]
    /// The most recent modification time among them (pass to a later `contacts(since:)`).
    public let lastModified: UInt32
    /// Contacts the radio sent beyond the session's
    /// ``MeshCoreSession/Configuration/maximumReplyFrames`` and that are not in ``contacts``.
    public let omittedCount: Int

    /// Creates a listing.
    public init(contacts: [MeshContact], lastModified: UInt32, omittedCount: Int = 0) {
        self.contacts = contacts
        self.lastModified = lastModified
        self.omittedCount = omittedCount
    }
}
