// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Fief",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "Engine", targets: ["Engine"]),
        .executable(name: "fief", targets: ["fief"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.1.0"),
    ],
    targets: [
        .target(
            name: "Engine",
            dependencies: [.product(name: "SystemPackage", package: "swift-system")],
            // Broken engine variants for the torture suite's self-test; never in release builds.
            swiftSettings: [.define("FIEF_BROKEN_VARIANTS", .when(configuration: .debug))]
        ),
        // One seeded generator for the suite, FaultFS and the benchmarks: one printed seed drives all.
        .target(name: "SeededRandomness"),
        .systemLibrary(
            name: "CFuse3",
            pkgConfig: "fuse3",
            providers: [.apt(["libfuse3-dev"])]
        ),
        .target(
            name: "FaultFS",
            dependencies: ["CFuse3", "SeededRandomness", .product(name: "SystemPackage", package: "swift-system")]
        ),
        // Peers for `fief bench` and torture targets, through their C libraries.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLMDB", providers: [.apt(["liblmdb-dev"])]),
        .target(name: "Torture", dependencies: ["Engine", "FaultFS", "SeededRandomness", "CSQLite", "CLMDB"]),
        .target(
            name: "Reports",
            dependencies: [
                "Engine", "CSQLite", "CLMDB", "SeededRandomness",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        .executableTarget(
            name: "fief",
            dependencies: [
                "Engine", "FaultFS", "Torture", "Reports",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "EngineTests", dependencies: ["Engine", "SeededRandomness"]),
        .testTarget(name: "FaultFSTests", dependencies: ["FaultFS", "Torture", "SeededRandomness"]),
        .testTarget(name: "TortureTests", dependencies: ["Torture", "Engine", "SeededRandomness", "CSQLite"]),
        .testTarget(name: "ReportsTests", dependencies: ["Reports", "Engine"]),
    ],
    swiftLanguageModes: [.v5]
)
