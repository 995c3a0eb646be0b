import Foundation
import TetherCore

/// A store kept in one file of Tether's data directory: it names the file, and
/// ``defaultPath(environment:homeDirectory:)`` finds it by `DataDirectory`'s one rule
/// (`$TETHER_DATA_DIR`, else `$XDG_DATA_HOME/tether`, else `~/.local/share/tether`).
public protocol DataDirectoryStore {
    /// The store's file in the data directory (`gripfit.sqlite`).
    static var dataFileName: String { get }
}

extension DataDirectoryStore {
    /// Where the store is kept by default. `environment` and `homeDirectory` are the process's
    /// unless given (tests, and apps with a container of their own, pass theirs).
    public static func defaultPath(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        homeDirectory: String = FileManager.default.homeDirectoryForCurrentUser.path
    ) -> String {
        DataDirectory.path(for: dataFileName, environment: environment, homeDirectory: homeDirectory)
    }
}
