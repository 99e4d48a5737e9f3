#if canImport(Glibc)
    import Glibc
#endif
import Engine
import FiefObjects
import SeededRandomness

/// `fief torture run --encrypt`: every database the scenarios make, in this process and in
/// every process it starts, is encrypted with one key drawn from the run's seed (so a
/// failure reproduces from the seed alone). Processes learn the key from the environment.
public enum TortureEncryption {
    static let environmentVariable = "FIEF_TORTURE_KEY"

    /// Encrypts every database opened from now on, here and in child processes.
    public static func activate(seed: UInt64) {
        var rng = SeededRandom.derive(seed, 0xE7C_0DE)
        let key = (0..<EncryptionError.keyLength).map { _ in UInt8.random(in: 0...255, using: &rng) }
        setenv(environmentVariable, HexBytes.encode(key), 1)
    }

    /// Back to plain databases.
    public static func deactivate() { unsetenv(environmentVariable) }

    /// The run's key, nil when the run is not encrypted.
    public static var key: [UInt8]? {
        guard let hex = getenv(environmentVariable).map({ String(cString: $0) }),
            hex.count == 2 * EncryptionError.keyLength
        else { return nil }
        return HexBytes.decode(hex)
    }

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
