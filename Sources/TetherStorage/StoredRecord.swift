import Foundation
import GRDB

/// A row of a Tether store: one encoding for every store's dates and ids, so a file shared
/// by several stores reads the same way throughout, and other tools can query it.
///
/// - Dates are Unix seconds as REAL (`1764028800.5`). Device timestamps (whole seconds) and
///   wall-clock times round-trip exactly to the microsecond, `ORDER BY` and range filters work
///   on the number, and `datetime(startedAt, 'unixepoch')` reads it in SQL.
/// - UUIDs are upper-case text (`Foundation`'s `uuidString`), as lookups by id match them.
///
/// Reading keeps GRDB's default, which takes a number as Unix seconds.
public protocol StoredRecord: FetchableRecord, MutablePersistableRecord {}

extension StoredRecord {
    /// Unix seconds.
    public static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy {
        .timeIntervalSince1970
    }

    /// Upper-case text.
    public static func databaseUUIDEncodingStrategy(for column: String) -> DatabaseUUIDEncodingStrategy {
        .uppercaseString
    }
}

extension TetherDatabase {
    /// SQL that reads `column`, a date GRDB wrote with its default encoding (UTC text
    /// `YYYY-MM-DD HH:MM:SS.SSS`), as Unix seconds: for the migration of a store written before
    /// ``StoredRecord``. Rounded to the millisecond, the text's own precision; NULL for text
    /// that is not a date.
    public static func unixSeconds(fromDateText column: String) -> String {
        let quoted = column.quotedDatabaseIdentifier
        return "round((julianday(\(quoted)) - 2440587.5) * 86400000.0) / 1000.0"
    }

    /// SQL that reads `column`, seconds since 2001-01-01 (`timeIntervalSinceReferenceDate`),
    /// as Unix seconds.
    public static func unixSeconds(fromReferenceDateSeconds column: String) -> String {
        "(\(column.quotedDatabaseIdentifier) + 978307200.0)"
    }
}
