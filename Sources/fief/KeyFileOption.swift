import ArgumentParser
import Engine
import Foundation

/// `--key-file PATH` for every command that opens a database: the file holds the 64-byte key
/// as raw bytes, or as 128 hex digits (whitespace ignored), so `head -c 64 /dev/urandom`
/// and `xxd -p` both make one.
struct KeyFileOption: ParsableArguments {
    @Option(help: "File holding the database's 64-byte encryption key (raw, or 128 hex digits).")
    var keyFile: String?

    func key() throws -> [UInt8]? {
        guard let keyFile else { return nil }
        return try KeyFileOption.read(keyFile)
    }

    static func read(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CodecError(message: "key file \(path) cannot be read")
        }
        let raw = [UInt8](data)
        let text = String(decoding: raw, as: UTF8.self).filter { !$0.isWhitespace }
        if raw.count != EncryptionError.keyLength, text.count == 2 * EncryptionError.keyLength,
            let key = HexBytes.decode(text)
        {
            return key
        }
        guard raw.count == EncryptionError.keyLength else { throw EncryptionError.invalidKeyLength(found: raw.count) }
        return raw
    }
}

struct DBCopy: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Write a compacted copy of a database: keep its key, change it, encrypt or decrypt it.")
    @Argument(help: "Database file.") var path: String
    @Argument(help: "Where the copy goes (must not exist).") var destination: String
    @OptionGroup var key: KeyFileOption
    @Option(help: "Encrypt the copy with the key in this file (default: the source's key).") var newKeyFile: String?
    @Flag(help: "Write the copy unencrypted.") var plain = false

    func run() throws {
        try reportingErrors {
            if plain && newKeyFile != nil { throw CodecError(message: "give --plain or --new-key-file, not both") }
            let db = try openForInspection(path, encryptionKey: try key.key())
            let target: [UInt8]? = plain ? nil : try newKeyFile.map(KeyFileOption.read) ?? key.key()
            try db.writeCopy(to: destination, encryptionKey: target)
            print("\(path) -> \(destination) (\(target == nil ? "plain" : "encrypted"))")
        }
    }
}
