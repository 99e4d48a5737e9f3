import ArgumentParser
import Engine
import FiefObjects

/// The file a `fief db` command works on, and the key that opens it when it is encrypted.
struct DatabaseFileArguments: ParsableArguments {
    @Argument(help: "Database file.") var path: String
    @OptionGroup var encryption: KeyFileOption

    /// The file opened as every command but `put` opens it (`openForInspection`).
    func inspect() throws -> Database { try openForInspection(path, encryptionKey: try encryption.key()) }

    /// The file's object layer, read-only (`openObjectStore`).
    func objectStore() throws -> ObjectStore { try openObjectStore(path, encryptionKey: try encryption.key()) }
}
