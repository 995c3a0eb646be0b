import Foundation
import GRDB
import TetherStorage
import TetherCore
import MeshCore

/// Contacts, channels and messages of one radio, kept in SQLite (through GRDB).
///
/// Schema (migrations `meshcore.v1`, `meshcore.v2`): `meshContact` keyed by public key (hex);
/// `meshMessage` with a unique deduplication key, so a message the radio hands over twice is
/// stored (and reported) once, and `storedAt` in Unix seconds (REAL, as in every Tether store:
/// `StoredRecord`); `meshChannel` keyed by index.
public final class MeshStore: MeshMessageStore {
    private let dbQueue: DatabaseQueue

    /// Opens the database at `path` (`TetherDatabase/open(path:access:)`: shared safely with
    /// other processes). Read-write creates it and its folder if needed and brings its schema up
    /// to date; read-only needs an existing MeshCore database.
    public convenience init(path: String, access: TetherDatabase.Access = .readWrite) throws {
        try self.init(storedAt: path, access: access)
    }

    private init(storedAt path: String?, access: TetherDatabase.Access = .readWrite) throws {
        dbQueue = try TetherDatabase.openStore(path: path, access: access, migrator: Self.migrator,
                                               table: ContactRow.databaseTableName, holding: "MeshCore contacts and messages")
    }

    /// A store in a private in-memory database.
    public static func inMemory() throws -> MeshStore {
        try MeshStore(storedAt: nil)
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        TetherDatabase.registerFirstMigration(&migrator, store: "meshcore", table: ContactRow.databaseTableName) { db in
            try db.create(table: ContactRow.databaseTableName) { t in
                t.primaryKey("publicKey", .text)
                t.column("name", .text).notNull()
                t.column("type", .integer).notNull()
                t.column("flags", .integer).notNull()
                t.column("outPath", .blob)
                t.column("lastAdvert", .integer).notNull()
                t.column("latitude", .double).notNull()
                t.column("longitude", .double).notNull()
                t.column("lastModified", .integer).notNull()
            }
            try db.create(table: ChannelRow.databaseTableName) { t in
                t.primaryKey("channelIndex", .integer)
                t.column("name", .text).notNull()
                t.column("secret", .blob).notNull()
            }
            try createMessageTable(db, named: MessageRow.databaseTableName, storedAtType: .datetime)
        }
        // v2: `storedAt` in Unix seconds (REAL), the encoding every store shares
        // (`StoredRecord`); v1 wrote GRDB's date text. The table is rebuilt as SQLite recommends.
        // Contacts keep their path's hop hash size (1 for the paths v1 kept).
        migrator.registerMigration("meshcore.v2") { db in
            try db.alter(table: "meshContact") { t in
                t.add(column: "outPathHashSize", .integer).notNull().defaults(to: 1)
            }
            try createMessageTable(db, named: "meshMessage_v2", storedAtType: .double)
            let kept = "id, dedupKey, direction, kind, peer, channelIndex, senderName, text, timestamp, pathLength, snr, status, ack, roundTrip"
            try db.execute(sql: """
                INSERT INTO meshMessage_v2 (\(kept), storedAt)
                SELECT \(kept), \(TetherDatabase.unixSeconds(fromDateText: "storedAt")) FROM meshMessage
                """)
            // AUTOINCREMENT's high-water mark goes with the old table: carried over, so ids of
            // deleted newest rows are not handed out again.
            let highWater = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'meshMessage'") ?? 0
            try db.drop(table: "meshMessage")
            try db.rename(table: "meshMessage_v2", to: "meshMessage")
            if try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'meshMessage'") == nil {
                try db.execute(sql: "INSERT INTO sqlite_sequence (name, seq) VALUES ('meshMessage', ?)", arguments: [highWater])
            } else {
                try db.execute(sql: "UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'meshMessage'", arguments: [highWater])
            }
        }
        return migrator
    }

    /// The messages table as each migration made it (v1 kept `storedAt` as date text). Frozen:
    /// both migrations run it, so a change of schema is a new migration, never an edit here.
    private static func createMessageTable(_ db: Database, named name: String, storedAtType: Database.ColumnType) throws {
        try db.create(table: name) { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("dedupKey", .text).notNull().unique()
            t.column("direction", .text).notNull()
            t.column("kind", .text).notNull()
            t.column("peer", .text)
            t.column("channelIndex", .integer)
            t.column("senderName", .text)
            t.column("text", .text).notNull()
            t.column("timestamp", .integer).notNull()
            t.column("pathLength", .integer)
            t.column("snr", .double)
            t.column("status", .text).notNull()
            t.column("ack", .integer)
            t.column("roundTrip", .integer)
            t.column("storedAt", storedAtType).notNull()
        }
    }

    // MARK: Contacts

    /// Inserts or updates contacts (by public key).
    public func saveContacts(_ contacts: [MeshContact]) async throws {
        try await dbQueue.countedWrite { db in
            for contact in contacts { try ContactRow(contact).save(db) }
        }
    }

    /// Replaces the whole contact table (after a full listing).
    public func replaceContacts(_ contacts: [MeshContact]) async throws {
        try await dbQueue.countedWrite { db in
            try ContactRow.deleteAll(db)
            for contact in contacts { try ContactRow(contact).insert(db) }
        }
    }

    /// Removes a contact.
    public func removeContact(publicKey: Data) async throws {
        _ = try await dbQueue.countedWrite { db in try ContactRow.deleteOne(db, key: publicKey.hexString) }
    }

    /// Every contact, by name.
    public func contacts() async throws -> [MeshContact] {
        try await dbQueue.countedRead { db in try ContactRow.order(Column("name")).fetchAll(db).map(\.contact) }
    }

    /// The newest `lastModified` among stored contacts (0 when none), for `contacts(since:)`.
    public func contactsLastModified() async throws -> UInt32 {
        try await dbQueue.countedRead { db in
            UInt32(clamping: try Int.fetchOne(db, sql: "SELECT MAX(lastModified) FROM meshContact") ?? 0)
        }
    }

    // MARK: Channels

    /// Stores the radio's channels, replacing the previous set.
    public func replaceChannels(_ channels: [ChannelInfo]) async throws {
        try await dbQueue.countedWrite { db in
            try ChannelRow.deleteAll(db)
            for channel in channels { try ChannelRow(channel).insert(db) }
        }
    }

    /// Stored channels by index.
    public func channels() async throws -> [ChannelInfo] {
        try await dbQueue.countedRead { db in try ChannelRow.order(Column("channelIndex")).fetchAll(db).map(\.channel) }
    }

    // MARK: Messages

    /// Stores a message unless an identical one is already stored; returns it with its row id,
    /// or nil when it was a duplicate.
    public func insertMessage(_ message: MeshMessage) async throws -> MeshMessage? {
        try await dbQueue.countedWrite { db in
            let key = message.deduplicationKey
            if try MessageRow.filter(Column("dedupKey") == key).fetchCount(db) > 0 { return nil }
            var row = MessageRow(message)
            try row.insert(db)
            var stored = message
            stored.id = row.id
            return stored
        }
    }

    /// Updates an outgoing message's delivery state.
    public func updateDelivery(id: Int64, status: MeshMessage.Status, ack: UInt32? = nil, roundTrip: UInt32? = nil) async throws {
        try await dbQueue.countedWrite { db in
            guard var row = try MessageRow.fetchOne(db, key: id) else { return }
            row.status = status.rawValue
            if let ack { row.ack = Int64(ack) }
            if let roundTrip { row.roundTrip = Int64(roundTrip) }
            try row.update(db)
        }
    }

    /// The newest stored message's row id (0 when there is none): with
    /// ``incomingMessageCount(after:)``, how many messages arrived meanwhile.
    public func newestMessageID() async throws -> Int64 {
        try await dbQueue.countedRead { db in try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM \(MessageRow.databaseTableName)") ?? 0 }
    }

    /// How many incoming messages were stored after the row `id`.
    public func incomingMessageCount(after id: Int64) async throws -> Int {
        try await dbQueue.countedRead { db in
            try MessageRow.filter(Column("id") > id && Column("direction") == MeshMessage.Direction.incoming.rawValue).fetchCount(db)
        }
    }

    /// Stored messages, oldest first (`limit`: the newest n); only the direct messages with the
    /// contact whose public key starts with `peer` (hex), or only channel `channel`'s, if given.
    public func messages(peer: String? = nil, channel: Int? = nil, limit: Int? = nil) async throws -> [MeshMessage] {
        try await dbQueue.countedRead { db in
            var request = MessageRow.order(Column("id").desc)
            if let peer {
                // Stored peers are key prefixes; a full key matches its prefix and vice versa.
                let key = peer.lowercased()
                // Prefix equality by substr (LIKE would take `%` and `_` in a key as wildcards).
                request = request.filter(Column("kind") == MeshMessage.Kind.direct.rawValue)
                    .filter(sql: "length(peer) > 0 AND length(?) > 0 AND (substr(?, 1, length(peer)) = peer OR substr(peer, 1, length(?)) = ?)",
                            arguments: [key, key, key, key])
            }
            if let channel {
                request = request.filter(Column("kind") == MeshMessage.Kind.channel.rawValue && Column("channelIndex") == channel)
            }
            if let limit { request = request.limit(limit) }
            return try request.fetchAll(db).reversed().map(\.message)
        }
    }
}

// MARK: Rows

private struct ContactRow: Codable, StoredRecord, PersistableRecord {
    static let databaseTableName = "meshContact"
    var publicKey: String
    var name: String
    var type: Int
    var flags: Int
    var outPath: Data?
    var outPathHashSize: Int
    var lastAdvert: Int64
    var latitude: Double
    var longitude: Double
    var lastModified: Int64

    init(_ contact: MeshContact) {
        publicKey = contact.publicKey.hexString
        name = contact.name
        type = Int(contact.type.rawValue)
        flags = Int(contact.flags)
        outPath = contact.outPath
        outPathHashSize = contact.outPathHashSize
        lastAdvert = Int64(contact.lastAdvert)
        latitude = contact.latitude
        longitude = contact.longitude
        lastModified = Int64(contact.lastModified)
    }

    var contact: MeshContact {
        MeshContact(
            publicKey: Data(hexString: publicKey) ?? Data(), type: MeshContactType(rawValue: UInt8(clamping: type)),
            flags: UInt8(clamping: flags), outPath: outPath, outPathHashSize: outPathHashSize, name: name, lastAdvert: UInt32(clamping: lastAdvert),
            latitude: latitude, longitude: longitude, lastModified: UInt32(clamping: lastModified))
    }
}

private struct ChannelRow: Codable, StoredRecord, PersistableRecord {
    static let databaseTableName = "meshChannel"
    var channelIndex: Int
    var name: String
    var secret: Data

    init(_ channel: ChannelInfo) {
        channelIndex = Int(channel.index)
        name = channel.name
        secret = channel.secret
    }

    var channel: ChannelInfo { ChannelInfo(index: UInt8(clamping: channelIndex), name: name, secret: secret) }
}

private struct MessageRow: Codable, StoredRecord {
    static let databaseTableName = "meshMessage"
    var id: Int64?
    var dedupKey: String
    var direction: String
    var kind: String
    var peer: String?
    var channelIndex: Int?
    var senderName: String?
    var text: String
    var timestamp: Int64
    var pathLength: Int?
    var snr: Double?
    var status: String
    var ack: Int64?
    var roundTrip: Int64?
    var storedAt: Date

    init(_ message: MeshMessage) {
        id = message.id
        dedupKey = message.deduplicationKey
        direction = message.direction.rawValue
        kind = message.kind.rawValue
        peer = message.peer
        channelIndex = message.channelIndex
        senderName = message.senderName
        text = message.text
        timestamp = Int64(message.timestamp)
        pathLength = message.pathLength
        snr = message.snr
        status = message.status.rawValue
        ack = message.ack.map(Int64.init)
        roundTrip = message.roundTrip.map(Int64.init)
        storedAt = message.storedAt
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    var message: MeshMessage {
        MeshMessage(
            id: id, direction: MeshMessage.Direction(rawValue: direction) ?? .incoming,
            kind: MeshMessage.Kind(rawValue: kind) ?? .direct, peer: peer, channelIndex: channelIndex,
            senderName: senderName, text: text, timestamp: UInt32(clamping: timestamp), pathLength: pathLength, snr: snr,
            status: MeshMessage.Status(rawValue: status) ?? .received, ack: ack.map { UInt32(clamping: $0) },
            roundTrip: roundTrip.map { UInt32(clamping: $0) }, storedAt: storedAt)
    }
}

extension MeshStore: DataDirectoryStore {
    /// The file that keeps contacts and messages in the data directory.
    public static let dataFileName = "meshcore.sqlite"
}
