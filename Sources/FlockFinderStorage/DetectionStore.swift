import Foundation
import TetherCore
import GRDB
import TetherStorage
import FlockFinder

/// Keeps FlockFinder detections: filters them by confidence, stamps them with the receipt time
/// and the phone's location, persists them in SQLite (through GRDB), keeps the most recent in
/// memory, and exports CSV and JSON.
///
/// Schema (migrations `flockfinder.v1`, `flockfinder.v2`): one `flockDetection` row per kept
/// detection. `receivedAt` is Unix seconds (REAL), as in every Tether store (`StoredRecord`),
/// so it sorts and filters numerically; `type` is the `DetectionType/name`; `deviceUptimeMs` holds the
/// UInt64's bit pattern as INTEGER; the location columns are NULL when it was unknown.
public actor DetectionStore: DetectionRecorder {
    /// How many detections ``recent`` holds.
    public static let recentLimit = 10

    private let dbQueue: DatabaseQueue
    private let locationProvider: (any LocationProvider)?

    /// Detections below this confidence are not kept (default 0.5, always within 0…1).
    public private(set) var minimumConfidence: Double
    /// The ``recentLimit`` most recently received detections, newest first; loaded from the
    /// database when the store opens.
    public private(set) var recent: [StoredDetection] = []

    /// Opens the database at `path` (read-write: creating it and its folder if needed and
    /// bringing its schema up to date) and loads ``recent``.
    ///
    /// - Parameters:
    ///   - path: the SQLite file (``defaultPath(environment:homeDirectory:)`` for the shared data directory).
    ///   - minimumConfidence: the threshold below which ``record(_:receivedAt:)`` drops
    ///     detections, clamped to 0…1.
    ///   - locationProvider: asked for the phone's location as each detection is kept.
    ///   - access: read-only (`TetherDatabase/Access/readOnly`) needs an existing
    ///     detection database and creates nothing; the file is shared safely with other
    ///     processes either way (`TetherDatabase/open(path:access:)`).
    public init(
        path: String,
        minimumConfidence: Double = 0.5,
        locationProvider: (any LocationProvider)? = nil,
        access: TetherDatabase.Access = .readWrite
    ) throws {
        try self.init(storedAt: path, access: access, minimumConfidence: minimumConfidence, locationProvider: locationProvider)
    }

    private init(
        storedAt path: String?,
        access: TetherDatabase.Access = .readWrite,
        minimumConfidence: Double,
        locationProvider: (any LocationProvider)?
    ) throws {
        self.dbQueue = try TetherDatabase.openStore(path: path, access: access, migrator: Self.migrator,
                                                    table: DetectionRow.databaseTableName, holding: "FlockFinder detections")
        self.locationProvider = locationProvider
        self.minimumConfidence = Self.clampedConfidence(minimumConfidence) ?? 0.5
        recent = try dbQueue.read { db in
            try DetectionRow.newestFirst()
                .limit(Self.recentLimit)
                .fetchAll(db)
                .map(\.stored)
        }
    }

    /// A store in a fresh private in-memory database, gone when the store is released.
    public static func inMemory(
        minimumConfidence: Double = 0.5,
        locationProvider: (any LocationProvider)? = nil
    ) throws -> DetectionStore {
        try DetectionStore(storedAt: nil, minimumConfidence: minimumConfidence, locationProvider: locationProvider)
    }

    // MARK: - Recording

    /// Changes the confidence threshold for later detections (clamped to 0…1; NaN is
    /// ignored). Already stored detections are kept.
    public func setMinimumConfidence(_ value: Double) {
        if let clamped = Self.clampedConfidence(value) {
            minimumConfidence = clamped
        }
    }

    /// Keeps a detection if its confidence is at least ``minimumConfidence``: asks the
    /// location provider where the phone is, stores the row and updates ``recent``.
    ///
    /// - Returns: the stored detection, or nil when it was dropped for low confidence.
    @discardableResult
    public func record(_ detection: Detection, receivedAt: Date = Date()) async throws -> StoredDetection? {
        // Judged against the threshold in force when the detection arrived, before the
        // suspension below lets a concurrent setMinimumConfidence run.
        guard detection.confidence >= minimumConfidence else { return nil }
        let location = await locationProvider?.currentLocation()
        let row = DetectionRow(detection: detection, receivedAt: receivedAt, location: location)
        let stored = try await insert(row)
        // Concurrent records can finish out of receipt order, so sort rather than prepend.
        recent.append(stored)
        recent.sort(by: Self.isNewer)
        if recent.count > Self.recentLimit {
            recent.removeLast(recent.count - Self.recentLimit)
        }
        return stored
    }

    /// Inserts off the actor (GRDB's async write: no cooperative thread waits on the disk);
    /// ``recent`` is sorted after, so records that finish out of order stay ordered.
    private func insert(_ row: DetectionRow) async throws -> StoredDetection {
        try await dbQueue.countedWrite { db in
            var row = row
            try row.insert(db)
            return row.stored
        }
    }

    // MARK: - Queries

    /// How many stored detections there are of each type (types with none are absent).
    public func countsByType() async throws -> [DetectionType: Int] {
        // Plain values out of the closure: GRDB's async read hands back only Sendable ones.
        let rows = try await dbQueue.countedRead { db in
            try Row.fetchAll(
                db,
                sql: "SELECT type, COUNT(*) AS n FROM \(DetectionRow.databaseTableName) GROUP BY type"
            ).map { row -> (String, Int) in (row["type"], row["n"]) }
        }
        var counts: [DetectionType: Int] = [:]
        for (name, count) in rows {
            // Merge rather than assign: differently cased names map to the same known type.
            counts[DetectionType(name: name), default: 0] += count
        }
        return counts
    }

    /// Stored detections, newest first, optionally only of one type and/or received at or
    /// after a date, and at most `limit` of them (nil: all).
    public func detections(type: DetectionType? = nil, since: Date? = nil, limit: Int? = nil) async throws -> [StoredDetection] {
        try await dbQueue.countedRead { db in
            var request = DetectionRow.newestFirst()
            if let type {
                request = request.filter(DetectionRow.Columns.type == type.name)
            }
            if let since {
                request = request.filter(DetectionRow.Columns.receivedAt >= since.timeIntervalSince1970)
            }
            if let limit { request = request.limit(max(0, limit)) }
            return try request.fetchAll(db).map(\.stored)
        }
    }

    /// All stored detections in receipt order (oldest first), the order of the exports.
    private func chronological() async throws -> [StoredDetection] {
        try await dbQueue.countedRead { db in
            try DetectionRow
                .order(DetectionRow.Columns.receivedAt.asc, DetectionRow.Columns.id.asc)
                .fetchAll(db)
                .map(\.stored)
        }
    }

    // MARK: - Export

    /// The CSV export's columns.
    public static let csvHeader = [
        "receivedAt", "type", "rssi", "confidence", "proximity", "mac", "ssid", "deviceUptimeMs",
        "latitude", "longitude",
    ]

    /// All stored detections as CSV (RFC 4180), oldest first.
    ///
    /// The first line is ``csvHeader``; lines end in CRLF. Fields containing a comma, double
    /// quote, CR or LF are double-quoted with inner quotes doubled; text from the air that a
    /// spreadsheet would take for a formula starts with `'` (`csvText(_:)`). `receivedAt` is
    /// ISO 8601 UTC with milliseconds; absent values are empty fields.
    public func exportCSV() async throws -> String {
        var lines = [Self.csvHeader.joined(separator: ",")]
        for stored in try await chronological() {
            let detection = stored.detection
            let fields = [
                Timestamp.string(from: stored.receivedAt),
                Self.csvText(detection.type.name),
                String(detection.rssi),
                FirmwareJSONWriter.formatNumber(detection.confidence),
                detection.proximity.rawValue,
                Self.csvText(detection.mac ?? ""),
                Self.csvText(detection.ssid ?? ""),
                detection.deviceUptimeMs.map { String($0) } ?? "",
                stored.location.map { $0.latitude.description } ?? "",
                stored.location.map { $0.longitude.description } ?? "",
            ]
            lines.append(fields.map(Self.csvField).joined(separator: ","))
        }
        return lines.map { $0 + "\r\n" }.joined()
    }

    /// Text from the air (an SSID, a MAC, a type name) as a CSV cell a spreadsheet will not run:
    /// a cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return is a formula to
    /// Excel, LibreOffice and Sheets, so it gets a leading `'` (shown as text, not computed).
    /// Numbers are written by Tether and left alone.
    static func csvText(_ text: String) -> String {
        guard let first = text.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) else { return text }
        return "'" + text
    }

    /// Quotes a CSV field when RFC 4180 requires it.
    static func csvField(_ field: String) -> String {
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) else {
            return field
        }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// All stored detections as a pretty-printed JSON array, oldest first, with sorted keys.
    ///
    /// Each element is a `DetectionRecord` (`"type":"detection"`, the schema `tether flock
    /// watch`, `history` and `parse` print), with its `id`, `receivedAt` and location. Read it
    /// back with ``decodeJSONExport(_:)`` (exports of earlier versions, whose `type` was the
    /// detection type, read too).
    public func exportJSON() async throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(try await chronological().map { DetectionRecord($0) })
    }

    /// Reads an ``exportJSON()`` document back (receipt times to the millisecond).
    public static func decodeJSONExport(_ data: Data) throws -> [StoredDetection] {
        try JSONDecoder().decode([DetectionRecord].self, from: data).map { try $0.storedDetection() }
    }

    // MARK: - Helpers

    private static func isNewer(_ lhs: StoredDetection, _ rhs: StoredDetection) -> Bool {
        lhs.receivedAt != rhs.receivedAt ? lhs.receivedAt > rhs.receivedAt : lhs.id > rhs.id
    }

    private static func clampedConfidence(_ value: Double) -> Double? {
        value.isNaN ? nil : min(max(value, 0), 1)
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        TetherDatabase.registerFirstMigration(&migrator, store: "flockfinder", table: DetectionRow.databaseTableName) { db in
            try db.create(table: DetectionRow.databaseTableName) { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("receivedAt", .double).notNull().indexed()
                t.column("type", .text).notNull().indexed()
                t.column("rssi", .integer).notNull()
                t.column("confidence", .double).notNull()
                t.column("mac", .text)
                t.column("ssid", .text)
                t.column("deviceUptimeMs", .integer)
                t.column("latitude", .double)
                t.column("longitude", .double)
                t.column("horizontalAccuracy", .double)
            }
        }
        // v2: `receivedAt` in Unix seconds, the epoch every store shares (`StoredRecord`); v1
        // counted from 2001.
        migrator.registerMigration("flockfinder.v2") { db in
            try db.execute(sql: """
                UPDATE flockDetection SET receivedAt = \(TetherDatabase.unixSeconds(fromReferenceDateSeconds: "receivedAt"))
                """)
        }
        return migrator
    }
}

// MARK: - Rows

/// A `flockDetection` row.
private struct DetectionRow: Codable, StoredRecord {
    static let databaseTableName = "flockDetection"

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let receivedAt = Column(CodingKeys.receivedAt)
        static let type = Column(CodingKeys.type)
    }

    var id: Int64?
    /// Unix seconds (a number, not a `Date`: range filters compare it with numbers).
    var receivedAt: Double
    var type: String
    var rssi: Int
    var confidence: Double
    var mac: String?
    var ssid: String?
    var deviceUptimeMs: Int64?
    var latitude: Double?
    var longitude: Double?
    var horizontalAccuracy: Double?

    init(detection: Detection, receivedAt: Date, location: Location?) {
        self.receivedAt = receivedAt.timeIntervalSince1970
        type = detection.type.name
        rssi = detection.rssi
        confidence = detection.confidence
        mac = detection.mac
        ssid = detection.ssid
        // SQLite integers are signed 64-bit; the bit pattern keeps any UInt64 exactly.
        deviceUptimeMs = detection.deviceUptimeMs.map { Int64(bitPattern: $0) }
        latitude = location?.latitude
        longitude = location?.longitude
        horizontalAccuracy = location?.horizontalAccuracy
    }

    static func newestFirst() -> QueryInterfaceRequest<DetectionRow> {
        order(Columns.receivedAt.desc, Columns.id.desc)
    }

    mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }

    var stored: StoredDetection {
        let location: Location? =
            if let latitude, let longitude {
                Location(latitude: latitude, longitude: longitude, horizontalAccuracy: horizontalAccuracy)
            } else {
                nil
            }
        return StoredDetection(
            id: id ?? 0,
            detection: Detection(
                type: DetectionType(name: type),
                rssi: rssi,
                confidence: confidence,
                mac: mac,
                ssid: ssid,
                deviceUptimeMs: deviceUptimeMs.map { UInt64(bitPattern: $0) }
            ),
            receivedAt: Date(timeIntervalSince1970: receivedAt),
            location: location
        )
    }
}

extension DetectionStore: DataDirectoryStore {
    /// The file that keeps the detection database in the data directory.
    public static let dataFileName = "flockfinder.sqlite"
}
