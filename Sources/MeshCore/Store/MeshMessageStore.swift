import Foundation

/// Where a ``ConnectionManager`` keeps what it takes off the radio: contacts, channels and
/// messages. `MeshStore` (the MeshCoreStorage product, SQLite) is the persistent one;
/// ``InMemoryMeshMessageStore`` keeps them for a process's life (previews, tests, an app that
/// persists them its own way from the manager's events).
public protocol MeshMessageStore: Sendable {
    /// Stores a message unless an identical one (same ``MeshMessage/deduplicationKey``) is
    /// already stored; returns it with its id, or nil when it was a duplicate.
    func insertMessage(_ message: MeshMessage) async throws -> MeshMessage?
    /// Updates an outgoing message's delivery state.
    func updateDelivery(id: Int64, status: MeshMessage.Status, ack: UInt32?, roundTrip: UInt32?) async throws
    /// Inserts or updates contacts (by public key).
    func saveContacts(_ contacts: [MeshContact]) async throws
    /// Replaces every contact (after a full listing).
    func replaceContacts(_ contacts: [MeshContact]) async throws
    /// Replaces every channel.
    func replaceChannels(_ channels: [ChannelInfo]) async throws
}

/// A ``MeshMessageStore`` in memory, bounded: the oldest messages go beyond `messageLimit`.
public actor InMemoryMeshMessageStore: MeshMessageStore {
    /// The messages kept, oldest first.
    public private(set) var messages: [MeshMessage] = []
    /// The contacts, by public key.
    public private(set) var contacts: [Data: MeshContact] = [:]
    /// The channels.
    public private(set) var channels: [ChannelInfo] = []
    private let messageLimit: Int
    private var keys: Set<String> = []
    private var nextID: Int64 = 1

    /// Creates an empty store keeping at most `messageLimit` messages.
    public init(messageLimit: Int = 10_000) {
        self.messageLimit = max(1, messageLimit)
    }

    /// Keeps `message` unless it is a duplicate; the oldest goes when the limit is passed.
    public func insertMessage(_ message: MeshMessage) async throws -> MeshMessage? {
        guard keys.insert(message.deduplicationKey).inserted else { return nil }
        var stored = message
        stored.id = nextID
        nextID += 1
        messages.append(stored)
        if messages.count > messageLimit {
            let dropped = messages.removeFirst()
            keys.remove(dropped.deduplicationKey)
        }
        return stored
    }

    /// Updates a kept message's delivery state (nothing when it is no longer kept).
    public func updateDelivery(id: Int64, status: MeshMessage.Status, ack: UInt32?, roundTrip: UInt32?) async throws {
        guard let index = messages.firstIndex(where: { $0.id == id }) else { return }
        messages[index].status = status
        if let ack { messages[index].ack = ack }
        if let roundTrip { messages[index].roundTrip = roundTrip }
    }

    /// Inserts or updates contacts by public key.
    public func saveContacts(_ contacts: [MeshContact]) async throws {
        for contact in contacts { self.contacts[contact.publicKey] = contact }
    }

    /// Replaces every contact.
    public func replaceContacts(_ contacts: [MeshContact]) async throws {
        self.contacts = Dictionary(contacts.map { ($0.publicKey, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// Replaces every channel.
    public func replaceChannels(_ channels: [ChannelInfo]) async throws {
        self.channels = channels
    }
}
