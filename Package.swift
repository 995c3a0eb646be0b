// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Tether",
    // The floors where CoreBluetooth has what the driver uses (the disconnection callback with
    // `isReconnecting` and auto-reconnect: iOS 17, macOS 14, tvOS 17, watchOS 10, visionOS 1).
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    products: [
        .library(name: "TetherCore", targets: ["TetherCore"]),
        .library(name: "TetherStorage", targets: ["TetherStorage"]),
        .library(name: "TetherSimulator", targets: ["TetherSimulator"]),
        .library(name: "GripFit", targets: ["GripFit"]),
        .library(name: "GripFitEmulator", targets: ["GripFitEmulator"]),
        .library(name: "GripFitStorage", targets: ["GripFitStorage"]),
        .library(name: "Kiro", targets: ["Kiro"]),
        .library(name: "KiroEmulator", targets: ["KiroEmulator"]),
        .library(name: "KiroStorage", targets: ["KiroStorage"]),
        .library(name: "Tybe", targets: ["Tybe"]),
        .library(name: "TybeEmulator", targets: ["TybeEmulator"]),
        .library(name: "FlockFinder", targets: ["FlockFinder"]),
        .library(name: "FlockFinderEmulator", targets: ["FlockFinderEmulator"]),
        .library(name: "FlockFinderStorage", targets: ["FlockFinderStorage"]),
        .library(name: "MeshCore", targets: ["MeshCore"]),
        .library(name: "MeshCoreEmulator", targets: ["MeshCoreEmulator"]),
        .library(name: "MeshCoreStorage", targets: ["MeshCoreStorage"]),
        .library(name: "TetherCoreBluetooth", targets: ["TetherCoreBluetooth"]),
        .library(name: "TetherWorld", targets: ["TetherWorld"]),
        .library(name: "TetherDBus", targets: ["TetherDBus"]),
        .library(name: "TetherBlueZ", targets: ["TetherBlueZ"]),
        .library(name: "TetherBlueZPeripheral", targets: ["TetherBlueZPeripheral"]),
        .executable(name: "tether", targets: ["tether"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.0"),
        .package(url: "https://github.com/pointfreeco/swift-clocks", from: "1.0.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.70.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.0"..<"5.0.0"),
        // Tether Studio's web server (HTTP and WebSocket); traits off: no swift-configuration.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        // `swift package generate-documentation` (scripts/docs); a plugin, not linked into anything.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // Platform-neutral core: UUIDs, GATT model, driver protocol, connection state machine,
        // transports and framers.
        .target(
            name: "TetherCore",
            dependencies: [.product(name: "Logging", package: "swift-log")]
        ),
        // How every store opens SQLite (WAL, busy timeout, read-only opens, named migrations).
        .target(
            name: "TetherStorage",
            dependencies: ["TetherCore", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        // The embedded default driver: a virtual radio hosting virtual peripherals.
        .target(
            name: "TetherSimulator",
            dependencies: [
                "TetherCore",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // GripFit dynamometer: protocol codecs, BLEManager, calibration, sessions.
        // No simulator and no SQLite: what an app ships.
        .target(
            name: "GripFit",
            dependencies: [
                "TetherCore",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // GripFit's emulator: the GripFit firmware as a virtual peripheral.
        .target(
            name: "GripFitEmulator",
            dependencies: [
                "GripFit",
                "TetherCore",
                "TetherSimulator",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // GripFit's SQLite store (SQLiteGripSessionStore), on TetherStorage.
        .target(
            name: "GripFitStorage",
            dependencies: [
                "GripFit",
                "TetherCore",
                "TetherStorage",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // Kiro E-ink desk companion: protocol codecs, session, connector, focus time.
        // No simulator and no SQLite: what an app ships.
        .target(
            name: "Kiro",
            dependencies: [
                "TetherCore",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Kiro's emulator: the Kiro firmware (and its page renderer).
        .target(
            name: "KiroEmulator",
            dependencies: [
                "Kiro",
                "TetherCore",
                "TetherSimulator",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Kiro's SQLite store (SQLiteFocusSessionStore), on TetherStorage.
        .target(
            name: "KiroStorage",
            dependencies: [
                "Kiro",
                "TetherCore",
                "TetherStorage",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // Tybe phone-as-keyboard: planner, frames, status, client, view model.
        // No simulator and no SQLite: what an app ships.
        .target(
            name: "Tybe",
            dependencies: [
                "TetherCore",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Tybe's emulator: the bridge, its dongle and the host it types on.
        .target(
            name: "TybeEmulator",
            dependencies: [
                "Tybe",
                "TetherCore",
                "TetherSimulator",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // FlockFinder surveillance-camera detector: JSON codecs, client.
        // No simulator and no SQLite: what an app ships.
        .target(
            name: "FlockFinder",
            dependencies: [
                "TetherCore",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // FlockFinder's emulator: the ESP32 detector's firmware.
        .target(
            name: "FlockFinderEmulator",
            dependencies: [
                "FlockFinder",
                "TetherCore",
                "TetherSimulator",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // FlockFinder's SQLite store (DetectionStore), on TetherStorage.
        .target(
            name: "FlockFinderStorage",
            dependencies: [
                "FlockFinder",
                "TetherCore",
                "TetherStorage",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // MeshCore companion radio: PocketMesh's transport (BLE, TCP, serial), the companion
        // protocol session and the connection manager.
        // No simulator and no SQLite: what an app ships.
        .target(
            name: "MeshCore",
            dependencies: [
                "TetherCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                // SHA-256 for hashtag channel secrets (CryptoKit underneath on Apple platforms).
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // MeshCore's emulator: a companion radio and the mesh around it (BLE, TCP, serial and pty hosts).
        .target(
            name: "MeshCoreEmulator",
            dependencies: [
                "MeshCore",
                "TetherCore",
                "TetherSimulator",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                // Ed25519 identities: signed adverts, contact cards, SIGN_*.
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // MeshCore's SQLite store (MeshStore), on TetherStorage.
        .target(
            name: "MeshCoreStorage",
            dependencies: [
                "MeshCore",
                "TetherCore",
                "TetherStorage",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // A reproduction of the CoreBluetooth API on the simulator's virtual radio, so the
        // CoreBluetooth driver compiles and is tested on Linux.
        .target(
            name: "CoreBluetoothLookalike",
            dependencies: [
                "TetherCore",
                "TetherSimulator",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The CoreBluetooth driver: real CoreBluetooth on Apple platforms, the look-alike on Linux.
        .target(
            name: "TetherCoreBluetooth",
            dependencies: [
                "TetherCore",
                .target(name: "CoreBluetoothLookalike", condition: .when(platforms: [.linux])),
                .target(name: "TetherSimulator", condition: .when(platforms: [.linux])),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // D-Bus in Swift: the wire protocol (marshalling, messages) and a connection over a Unix
        // socket (EXTERNAL auth, fd passing) or TCP (ANONYMOUS). No system library is needed.
        .target(
            name: "TetherDBus",
            dependencies: [.product(name: "Logging", package: "swift-log")]
        ),
        // The BlueZ driver (Linux): BLEDriver over bluetoothd's D-Bus API.
        .target(
            name: "TetherBlueZ",
            dependencies: [
                "TetherCore",
                "TetherDBus",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The other role: any virtual peripheral (every device emulator) served over the air as a
        // GATT application and an LE advertisement through bluetoothd.
        .target(
            name: "TetherBlueZPeripheral",
            dependencies: [
                "TetherCore",
                "TetherDBus",
                "TetherBlueZ",
                "TetherSimulator",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The default simulated world: every device emulator on one virtual radio.
        .target(
            name: "TetherWorld",
            dependencies: [
                "TetherCore", "TetherSimulator",
                "GripFit", "GripFitEmulator", "Kiro", "KiroEmulator", "Tybe", "TybeEmulator",
                "FlockFinder", "FlockFinderEmulator", "MeshCore", "MeshCoreEmulator",
            ]
        ),
        // Tether Studio: the devices' app screens in a browser (a web server with one WebSocket).
        // In no product: the CLI serves it (`tether studio`); Hummingbird has no watchOS.
        .target(
            name: "TetherStudio",
            dependencies: [
                "TetherCore", "TetherWorld",
                "GripFit", "GripFitEmulator", "FlockFinder", "FlockFinderEmulator", "FlockFinderStorage",
                "Tybe", "TybeEmulator", "MeshCore", "MeshCoreEmulator", "Kiro", "KiroEmulator", "TetherSimulator",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(platforms: [.macOS, .linux])),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket", condition: .when(platforms: [.macOS, .linux])),
            ],
            resources: [.copy("Web")]
        ),
        .executableTarget(
            name: "tether",
            dependencies: [
                "TetherCore",
                "TetherSimulator",
                "TetherWorld",
                .target(name: "TetherStudio", condition: .when(platforms: [.macOS, .linux])),
                "GripFit", "GripFitEmulator", "GripFitStorage",
                "Kiro", "KiroEmulator", "KiroStorage",
                "Tybe", "TybeEmulator",
                "FlockFinder", "FlockFinderEmulator", "FlockFinderStorage",
                "MeshCore", "MeshCoreEmulator", "MeshCoreStorage",
                "TetherCoreBluetooth",
                "TetherDBus",
                .target(name: "TetherBlueZ", condition: .when(platforms: [.linux])),
                .target(name: "TetherBlueZPeripheral", condition: .when(platforms: [.linux])),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Clocks", package: "swift-clocks"),
                .product(name: "Logging", package: "swift-log"),
                // The hostile peers of `bench --hostile-streams`.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            exclude: ["Info.plist"],
            linkerSettings: [
                // macOS kills an unbundled tool that creates a CBCentralManager without
                // NSBluetoothAlwaysUsageDescription (TCC): the binary carries its Info.plist.
                // Unsafe flags keep a product from being a dependency: this one is an executable
                // nobody depends on, and the libraries stay clean.
                .unsafeFlags([
                    "-Xlinker", "-sectcreate", "-Xlinker", "__TEXT", "-Xlinker", "__info_plist",
                    "-Xlinker", "\(Context.packageDirectory)/Sources/tether/Info.plist",
                ], .when(platforms: [.macOS])),
            ]
        ),
        // Run inside the BlueZ test guest (a static build shared over 9p) for what the forwarded
        // bus cannot carry: the Unix-socket bus, acquired sockets, pairing. RealStackTests drive it.
        .executableTarget(
            name: "BlueZGuestProbe",
            dependencies: [
                "TetherCore",
                "TetherDBus",
                .target(name: "TetherBlueZ", condition: .when(platforms: [.linux])),
                .target(name: "TetherBlueZPeripheral", condition: .when(platforms: [.linux])),
                "TetherSimulator",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/BlueZGuestProbe"
        ),
        // What the test suites share: the driver a harness runs on (TETHER_TEST_DRIVER).
        .target(
            name: "TetherTesting",
            dependencies: ["TetherCore", "TetherSimulator", "TetherCoreBluetooth", "TetherStorage", "TetherTestingStartup"],
            path: "Tests/TetherTesting"
        ),
        // Starts TetherTesting's scheduler before the first test when TETHER_TEST_SCHEDULER=1.
        .target(name: "TetherTestingStartup", path: "Tests/TetherTestingStartup"),
        .testTarget(
            name: "TetherCoreTests",
            dependencies: [
                "TetherCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "GripFitTests",
            dependencies: [
                "GripFit",
                "GripFitEmulator",
                "GripFitStorage",
                "TetherCore",
                "TetherSimulator",
                "TetherTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "KiroTests",
            dependencies: [
                "Kiro",
                "KiroEmulator",
                "KiroStorage",
                "TetherCore",
                "TetherSimulator",
                "TetherTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "TybeTests",
            dependencies: [
                "Tybe",
                "TybeEmulator",
                "TetherCore",
                "TetherSimulator",
                "TetherTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "FlockFinderTests",
            dependencies: [
                "FlockFinder",
                "FlockFinderEmulator",
                "FlockFinderStorage",
                "TetherCore",
                "TetherSimulator",
                "TetherTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "MeshCoreTests",
            dependencies: [
                "MeshCore",
                "MeshCoreEmulator",
                "MeshCoreStorage",
                "TetherCore",
                "TetherSimulator",
                "TetherTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            // The Python interop peer is run by InteropTests, not compiled.
            exclude: ["Interop"]
        ),
        // What every device module shares: profiles on both sides.
        .testTarget(
            name: "DeviceKitTests",
            dependencies: [
                "TetherCore", "TetherSimulator", "TetherWorld",
                "GripFit", "GripFitEmulator", "Kiro", "KiroEmulator", "Tybe", "TybeEmulator",
                "FlockFinder", "FlockFinderEmulator", "MeshCore", "MeshCoreEmulator", "TetherTesting",
            ]
        ),
        .testTarget(
            name: "TetherDBusTests",
            dependencies: [
                "TetherDBus",
                "TetherTesting",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "TetherBlueZTests",
            dependencies: [
                "TetherDBus",
                "TetherBlueZ",
                "TetherBlueZPeripheral",
                "TetherCore",
                "TetherSimulator",
                "GripFit", "GripFitEmulator", "GripFitStorage",
                "Kiro", "KiroEmulator",
                "Tybe", "TybeEmulator",
                "FlockFinder", "FlockFinderEmulator", "FlockFinderStorage",
                "MeshCore", "MeshCoreEmulator", "MeshCoreStorage",
                "TetherTesting",
                // The studio's screens on the BlueZ driver.
                .target(name: "TetherStudio", condition: .when(platforms: [.macOS, .linux])),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The bluezoo launcher is Python, run by the rig.
            exclude: ["Rig"]
        ),
        .testTarget(
            name: "TetherStorageTests",
            dependencies: [
                "TetherStorage", "GripFit", "GripFitStorage", "Kiro", "KiroStorage", "FlockFinder", "FlockFinderStorage", "MeshCore", "MeshCoreStorage",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // The CLI's own rules (option validation), through @testable import of the executable.
        .testTarget(
            name: "TetherCLITests",
            dependencies: [
                "tether",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "TetherStudioTests",
            dependencies: [
                "TetherStudio", "TetherCore", "TetherSimulator", "TetherWorld", "TetherTesting",
                "GripFit", "GripFitEmulator", "FlockFinder", "FlockFinderEmulator", "FlockFinderStorage",
                "Tybe", "TybeEmulator", "MeshCore", "MeshCoreEmulator", "Kiro", "KiroEmulator",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(platforms: [.macOS, .linux])),
                .product(name: "HummingbirdTesting", package: "hummingbird", condition: .when(platforms: [.macOS, .linux])),
                .product(name: "HummingbirdWSTesting", package: "hummingbird-websocket", condition: .when(platforms: [.macOS, .linux])),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket", condition: .when(platforms: [.macOS, .linux])),
            ],
            // The browser test's selenium script is run by StudioBrowserTests, not compiled.
            exclude: ["Browser"]
        ),
        .testTarget(
            name: "TetherSimulatorTests",
            dependencies: [
                "TetherCore",
                "TetherSimulator",
                "TetherCoreBluetooth",
                "TetherTesting",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
