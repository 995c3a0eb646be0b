import Foundation
import Testing
import FlockFinderStorage
import GripFitStorage
import KiroStorage
import MeshCoreStorage

/// Every store finds its default file by the one data-directory rule, from an environment and a
/// home directory that a caller can give.
@Suite struct DataDirectoryRuleTests {
    typealias PathRule = @Sendable ([String: String], String) -> String

    static let stores: [(String, PathRule)] = [
        ("gripfit.sqlite", { SQLiteGripSessionStore.defaultPath(environment: $0, homeDirectory: $1) }),
        ("kiro.sqlite", { SQLiteFocusSessionStore.defaultPath(environment: $0, homeDirectory: $1) }),
        ("flockfinder.sqlite", { DetectionStore.defaultPath(environment: $0, homeDirectory: $1) }),
        ("meshcore.sqlite", { MeshStore.defaultPath(environment: $0, homeDirectory: $1) }),
    ]

    @Test func everyStoreFollowsTheSameRule() {
        for (file, rule) in Self.stores {
            #expect(rule(["TETHER_DATA_DIR": "/data", "XDG_DATA_HOME": "/xdg"], "/home/u") == "/data/\(file)")
            #expect(rule(["XDG_DATA_HOME": "/xdg"], "/home/u") == "/xdg/tether/\(file)")
            #expect(rule(["XDG_DATA_HOME": "relative"], "/home/u") == "/home/u/.local/share/tether/\(file)")
            #expect(rule([:], "/home/u") == "/home/u/.local/share/tether/\(file)")
        }
    }
}
