import ArgumentParser
import Engine
import Foundation

/// What `db get` and `db del` take: one key of one table in a file, and how it is written.
struct TableKeyArguments: ParsableArguments {
    @OptionGroup var file: DatabaseFileArguments
    @Argument var table: String
    @Argument var key: String
    @OptionGroup var formats: KeyValueOptions

    /// Runs `body` on the file, opened for inspection; when it finds no such key (returns
    /// false), says so and exits 1, so a script can tell an absent key from an error.
    func run(_ body: (Database) throws -> Bool) throws {
        var found = true
        try reportingErrors {
            found = try body(try file.inspect())
        }
        if !found {
            FileHandle.standardError.write(Data("fief: no key '\(key)' in table '\(table)'\n".utf8))
            throw ExitCode(1)
        }
    }

    /// The table's kinds and the key encoded for them; a missing table is an error.
    func encodedKey(in tx: Transaction) throws -> (info: TableInfo, key: [UInt8]) {
        guard let info = try tx.tableInfo(table) else { throw EngineError.tableNotFound(table) }
        return (info, try Codec.encode(key, as: formats.keyFormat, kind: info.keyKind, what: "key"))
    }
}
