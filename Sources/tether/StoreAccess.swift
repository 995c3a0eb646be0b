import Foundation
import TetherStorage

/// How a command that only reads opens a store: read-only, creating nothing. An explicit
/// `--database` that does not exist is an error (a mistyped path printed "0 session(s)"
/// before); the default database not existing yet only means nothing was recorded (nil).
func openForReading<Store>(explicit: String?, defaultPath: String,
                           _ open: (String, TetherDatabase.Access) throws -> Store) throws -> Store? {
    if explicit == nil, !FileManager.default.fileExists(atPath: defaultPath) { return nil }
    return try open(explicit ?? defaultPath, .readOnly)
}
