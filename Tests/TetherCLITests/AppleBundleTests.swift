import Foundation
import Testing

/// What the `tether` executable needs to run on a Mac: macOS kills an unbundled tool that
/// creates a `CBCentralManager` without `NSBluetoothAlwaysUsageDescription`, so the binary
/// carries an Info.plist in its `__TEXT,__info_plist` section (Package.swift's linker settings).
@Suite("The tether executable on Apple platforms")
struct AppleBundleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func theEmbeddedInfoPlistExplainsBluetoothUse() throws {
        let data = try Data(contentsOf: Self.root.appendingPathComponent("Sources/tether/Info.plist"))
        let plist = try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        let reason = try #require(plist["NSBluetoothAlwaysUsageDescription"] as? String)
        #expect(reason.count > 20)
        #expect(plist["CFBundleIdentifier"] as? String == "dev.tether.cli")
    }

    @Test func theManifestLinksItIntoTheExecutableOnMacOSOnly() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let flags = ["\"-sectcreate\"", "\"__TEXT\"", "\"__info_plist\"", "/Sources/tether/Info.plist\""]
        for flag in flags { #expect(manifest.contains(flag), "Package.swift lacks \(flag)") }
        #expect(manifest.contains(".when(platforms: [.macOS])"))
        #expect(manifest.contains("exclude: [\"Info.plist\"]"))
    }
}
