import Engine
import FiefObjects
import Foundation
import SeededRandomness

/// `fief torture run --encrypt`: every database the scenarios make, in this process and in
/// every process it starts, is encrypted with one key drawn from the run's seed (so a
/// failure reproduces from the seed alone). Child processes get the key in their request
/// (`ChildRequest`), which takes it from here.
public enum TortureEncryption {
    // Cycles run on several threads at once (`--jobs`); the key changes only between scenarios.
    private static let lock = NSLock()
    nonisolated(unsafe) private static var current: [UInt8]?

    /// Encrypts every database opened from now on, here and in child processes started from now on.
    public static func activate(seed: UInt64) {
        var rng = SeededRandom.derive(seed, 0xE7C_0DE)
        use(key: (0..<EncryptionError.keyLength).map { _ in UInt8.random(in: 0...255, using: &rng) })
    }

    /// Uses `key` (nil: none) from now on: a child process takes its parent's from its request.
    public static func use(key: [UInt8]?) { lock.withLock { current = key } }

    /// Back to plain databases.
    public static func deactivate() { use(key: nil) }

    /// The run's key, nil when the run is not encrypted.
    public static var key: [UInt8]? { lock.withLock { current } }

    public static var isActive: Bool { key != nil }

    /// Options for a database a scenario opens: as given, encrypted when the run is.
    public static func options(durability: Durability = .full, create: Bool = true) -> DatabaseOptions {
        DatabaseOptions(durability: durability, create: create, encryptionKey: key)
    }

    /// An object-store configuration, encrypted when the run is.
    public static func configure(_ configuration: Configuration) -> Configuration {
        var c = configuration
        c.encryptionKey = key
        return c
    }
}
