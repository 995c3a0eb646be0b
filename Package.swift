// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Tether",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "TetherCore", targets: ["TetherCore"]),
        .library(name: "TetherSimulator", targets: ["TetherSimulator"]),
        .library(name: "GripFit", targets: ["GripFit"]),
        .library(name: "Kiro", targets: ["Kiro"]),
        .library(name: "Tybe", targets: ["Tybe"]),
        .library(name: "FlockFinder", targets: ["FlockFinder"]),
        .library(name: "TetherWorld", targets: ["TetherWorld"]),
        .executable(name: "tether", targets: ["tether"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/pointfreeco/swift-clocks", from: "1.0.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
    ],
    targets: [
        // Platform-neutral core: UUIDs, GATT model, driver protocol, connection state machine,
        // transports and framers.
        .target(
            name: "TetherCore",
            dependencies: [.product(name: "Logging", package: "swift-log")]
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
            ]
        ),
        // The default simulated world: every device emulator on one virtual radio.
        .target(
            name: "TetherWorld",
            dependencies: ["TetherCore", "TetherSimulator", "GripFit", "Kiro", "Tybe", "FlockFinder"]
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
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Clocks", package: "swift-clocks"),
                .product(name: "Logging", package: "swift-log"),
            ]
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
                .product(name: "Clocks", package: "swift-clocks"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "TetherSimulatorTests",
            dependencies: [
                "TetherCore",
                "TetherSimulator",
                .product(name: "Clocks", package: "swift-clocks"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
