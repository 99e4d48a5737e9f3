// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Fief",
    products: [
        .library(name: "Engine", targets: ["Engine"]),
        .library(name: "FiefObjects", targets: ["FiefObjects"]),
        .executable(name: "fief", targets: ["fief"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.1.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2")
    ],
    targets: [
        // The system calls and atomics Swift cannot spell: atomic loads, stores and a fence on
        // the lock file's shared reader slots, and the shared futex of its commit doorbell.
        .target(name: "CFiefSys"),
        // /proc/PID/stat, read by the engine (dead readers), FaultFS (its daemon) and Torture.
        .target(name: "ProcFS"),
        .target(
            name: "Engine",
            dependencies: [
                "CFiefSys", "ProcFS", .product(name: "SystemPackage", package: "swift-system"),
                // Page encryption (format 3): HMAC-SHA256 and AES-256-CTR.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto")
            ],
            // Broken engine variants for the torture suite's self-test; never in release builds.
            swiftSettings: [.define("FIEF_BROKEN_VARIANTS", .when(configuration: .debug))]
        ),
        // Realm's object layer: models, links, queries, migrations, all on engine tables.
        .target(
            name: "FiefObjects",
            dependencies: ["Engine"],
            swiftSettings: [
                .swiftLanguageMode(.v6),
                .define("FIEF_BROKEN_VARIANTS", .when(configuration: .debug))
            ]
        ),
        // Swift heap allocations per thread, through the runtime's allocation hook (bench counters).
        .target(name: "CHeapCount"),
        // One seeded generator for the suite, FaultFS and the benchmarks: one printed seed drives all.
        .target(name: "SeededRandomness"),
        .systemLibrary(
            name: "CFuse3",
            pkgConfig: "fuse3",
            providers: [.apt(["libfuse3-dev"])]
        ),
        .target(
            name: "FaultFS",
            dependencies: [
                "CFuse3", "SeededRandomness", "ProcFS", .product(name: "SystemPackage", package: "swift-system")
            ]
        ),
        // Peers for `fief bench` and torture targets, through their C libraries.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLMDB", providers: [.apt(["liblmdb-dev"])]),
        // The torture results (results.json, detection.json): Torture writes them, Reports reads them.
        .target(name: "TortureSchema"),
        .target(
            name: "Torture",
            dependencies: [
                "Engine", "FiefObjects", "FaultFS", "SeededRandomness", "ProcFS", "CSQLite", "CLMDB", "TortureSchema"
            ]),
        .target(
            name: "Reports",
            dependencies: [
                "Engine", "FiefObjects", "CSQLite", "CLMDB", "SeededRandomness", "CHeapCount", "CFiefSys",
                "TortureSchema",
                .product(name: "Histogram", package: "hdrhistogram-swift")
            ]
        ),
        .executableTarget(
            name: "fief",
            dependencies: [
                "Engine", "FiefObjects", "FaultFS", "Torture", "Reports", "ProcFS", "TortureSchema",
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ]
        ),
        // What every test target shares: temporary folders, printed seeds.
        .target(name: "FiefTestSupport", path: "Tests/FiefTestSupport"),
        .testTarget(name: "EngineTests", dependencies: ["Engine", "SeededRandomness", "FiefTestSupport"]),
        .testTarget(
            name: "FiefObjectsTests",
            dependencies: ["FiefObjects", "Engine", "SeededRandomness", "CSQLite", "FiefTestSupport"],
            // Files older versions wrote, read through #filePath (FormatFixtureTests).
            exclude: ["Fixtures"]
        ),
        .testTarget(name: "FaultFSTests", dependencies: ["FaultFS", "Torture", "SeededRandomness", "FiefTestSupport"]),
        .testTarget(
            name: "TortureTests",
            dependencies: [
                "Torture", "Reports", "TortureSchema", "Engine", "FiefObjects", "SeededRandomness", "CSQLite",
                "FiefTestSupport"
            ]),
        .testTarget(
            name: "ReportsTests",
            dependencies: ["Reports", "TortureSchema", "Engine", "ProcFS", "SeededRandomness", "FiefTestSupport"])
    ],
    swiftLanguageModes: [.v5]
)
