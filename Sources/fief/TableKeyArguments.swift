import ArgumentParser
import Engine
import Foundation

/// What `db get` and `db del` take: one key of one table in a file, and how it is written.
struct TableKeyArguments: ParsableArguments {
    @Argument(help: "Database file.") var path: String
    @OptionGroup var encryption: KeyFileOption
    @Argument var table: String
    @Argument var key: String
    @OptionGroup var formats: KeyValueOptions

    func open() throws -> Database { try openForInspection(path, encryptionKey: try encryption.key()) }

    /// The table's kinds and the key encoded for them; a missing table is an error.
    func encodedKey(in tx: Transaction) throws -> (info: TableInfo, key: [UInt8]) {
        guard let info = try tx.tableInfo(table) else { throw EngineError.tableNotFound(table) }
        return (info, try Codec.encode(key, as: formats.keyFormat, kind: info.keyKind, what: "key"))
    }

    /// Says the key is absent and gives the exit code that tells a script so.
    func absent() -> ExitCode {
        FileHandle.standardError.write(Data("fief: no key '\(key)' in table '\(table)'\n".utf8))
        return ExitCode(1)
    }
}
