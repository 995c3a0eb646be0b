// swift-tools-version: 6.1
import PackageDescription

// The fuzzing harness of Tether's decoders, a package of its own so `swift build` of Tether
// never needs libFuzzer. Build and run it with `scripts/fuzz` (libFuzzer and AddressSanitizer:
// `-sanitize=fuzzer,address`); one binary holds every target, TETHER_FUZZ_TARGET picks one.
let package = Package(
    name: "TetherFuzz",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Tether", path: ".."),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        .executableTarget(
            name: "TetherFuzz",
            dependencies: [
                .product(name: "TetherCore", package: "Tether"),
                .product(name: "GripFit", package: "Tether"),
                .product(name: "Kiro", package: "Tether"),
                .product(name: "Tybe", package: "Tether"),
                .product(name: "FlockFinder", package: "Tether"),
                .product(name: "MeshCore", package: "Tether"),
                .product(name: "TetherDBus", package: "Tether"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
