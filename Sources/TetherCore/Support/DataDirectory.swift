import Foundation

/// Where Tether's tools keep their files: `$TETHER_DATA_DIR` if set, otherwise
/// `$XDG_DATA_HOME/tether`, falling back to `~/.local/share/tether`.
public enum DataDirectory {
    /// The directory, from explicit inputs (tests pass their own).
    public static func path(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        homeDirectory: String = FileManager.default.homeDirectoryForCurrentUser.path
    ) -> String {
        if let dataDir = environment["TETHER_DATA_DIR"], !dataDir.isEmpty { return dataDir }
        // The XDG spec says to ignore an empty or relative XDG_DATA_HOME.
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return (xdg as NSString).appendingPathComponent("tether")
        }
        return (homeDirectory as NSString).appendingPathComponent(".local/share/tether")
    }

    /// A file in the data directory.
    public static func path(
        for fileName: String,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        homeDirectory: String = FileManager.default.homeDirectoryForCurrentUser.path
    ) -> String {
        (path(environment: environment, homeDirectory: homeDirectory) as NSString).appendingPathComponent(fileName)
    }
}
