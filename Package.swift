// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Tether",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "TetherCore", targets: ["TetherCore"]),
        .library(name: "TetherStorage", targets: ["TetherStorage"]),
        .library(name: "TetherSimulator", targets: ["TetherSimulator"]),
        .library(name: "GripFit", targets: ["GripFit"]),
        .library(name: "Kiro", targets: ["Kiro"]),
        .library(name: "Tybe", targets: ["Tybe"]),
        .library(name: "FlockFinder", targets: ["FlockFinder"]),
        .library(name: "MeshCore", targets: ["MeshCore"]),
        .library(name: "TetherCoreBluetooth", targets: ["TetherCoreBluetooth"]),
        .library(name: "TetherWorld", targets: ["TetherWorld"]),
        .library(name: "TetherDBus", targets: ["TetherDBus"]),
        .library(name: "TetherBlueZ", targets: ["TetherBlueZ"]),
        .library(name: "TetherBlueZPeripheral", targets: ["TetherBlueZPeripheral"]),
        .executable(name: "tether", targets: ["tether"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/pointfreeco/swift-clocks", from: "1.0.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.70.0"),
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
            dependencies: [.product(name: "GRDB", package: "GRDB.swift")]
        ),
        // The embedded default driver: a virtual radio hosting virtual peripherals.
        .target(
            name: "TetherSimulator",
            dependencies: [
                "TetherCore",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // GripFit dynamometer: protocol codecs, manager, emulator, sessions.
        .target(
            name: "GripFit",
            dependencies: [
                "TetherCore",
                "TetherSimulator",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                "TetherStorage",
            ]
        ),
        // Kiro E-ink desk companion: protocol codecs, session, focus time, emulator.
        .target(
            name: "Kiro",
            dependencies: [
                "TetherCore",
                "TetherSimulator",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                "TetherStorage",
            ]
        ),
        // Tybe phone-as-keyboard: planner, frames, status, client, bridge/dongle/host emulator.
        .target(
            name: "Tybe",
            dependencies: [
                "TetherCore",
                "TetherSimulator",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // FlockFinder surveillance-camera detector: JSON codecs, client, detection store, emulator.
        .target(
            name: "FlockFinder",
            dependencies: [
                "TetherCore",
                "TetherSimulator",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                "TetherStorage",
            ]
        ),
        // MeshCore companion radio: PocketMesh's transport (BLE, TCP, serial), the companion
        // protocol session, persistence and a companion-radio + mesh emulator.
        .target(
            name: "MeshCore",
            dependencies: [
                "TetherCore",
                "TetherSimulator",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                "TetherStorage",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
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
            dependencies: ["TetherCore", "TetherSimulator", "GripFit", "Kiro", "Tybe", "FlockFinder", "MeshCore"]
        ),
        .executableTarget(
            name: "tether",
            dependencies: [
                "TetherCore",
                "TetherSimulator",
                "TetherWorld",
                "GripFit",
                "Kiro",
                "Tybe",
                "FlockFinder",
                "MeshCore",
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
                "TetherCore",
                "TetherSimulator",
                "TetherCoreBluetooth",
                .product(name: "Clocks", package: "swift-clocks"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "KiroTests",
            dependencies: [
                "Kiro",
                "TetherCore",
                "TetherSimulator",
                "TetherCoreBluetooth",
                .product(name: "Clocks", package: "swift-clocks"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "TybeTests",
            dependencies: [
                "Tybe",
                "TetherCore",
                "TetherSimulator",
                "TetherCoreBluetooth",
                .product(name: "Clocks", package: "swift-clocks"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "FlockFinderTests",
            dependencies: [
                "FlockFinder",
                "TetherCore",
                "TetherSimulator",
                "TetherCoreBluetooth",
                .product(name: "Clocks", package: "swift-clocks"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "MeshCoreTests",
            dependencies: [
                "MeshCore",
                "TetherCore",
                "TetherSimulator",
                "TetherCoreBluetooth",
                .product(name: "Clocks", package: "swift-clocks"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            // The Python interop peer is run by InteropTests, not compiled.
            exclude: ["Interop"]
        ),
        .testTarget(
            name: "TetherDBusTests",
            dependencies: [
                "TetherDBus",
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
                "GripFit",
                "Kiro",
                "Tybe",
                "FlockFinder",
                "MeshCore",
                .product(name: "Logging", package: "swift-log"),
            ],
            // The bluezoo launcher is Python, run by the rig.
            exclude: ["Rig"]
        ),
        .testTarget(
            name: "TetherStorageTests",
            dependencies: [
                "TetherStorage", "GripFit", "Kiro", "FlockFinder", "MeshCore",
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
            name: "TetherSimulatorTests",
            dependencies: [
                "TetherCore",
                "TetherSimulator",
                "TetherCoreBluetooth",
                .product(name: "Clocks", package: "swift-clocks"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
