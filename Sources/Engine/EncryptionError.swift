/// Every way opening or copying an encrypted database can be refused for its key. Each
/// message names the file and what to do.
public enum EncryptionError: Error, Equatable, CustomStringConvertible {
    /// Keys are 64 bytes: 32 for AES-256, then 32 for HMAC-SHA256.
    case invalidKeyLength(found: Int)
    /// The file is encrypted and no key was given.
    case keyRequired(path: String)
    /// The key is not this file's (told by the header's key check, before any page is read).
    case wrongKey(path: String)
    /// A key was given for a file that is not encrypted.
    case notEncrypted(path: String)

    public static let keyLength = 64

    public var description: String {
        switch self {
        case .invalidKeyLength(let n):
            return "encryption key has \(n) bytes; it must have 64 (32 for AES-256, then 32 for HMAC-SHA256)"
        case .keyRequired(let p): return "\(p): the database is encrypted; open it with its key"
        case .wrongKey(let p): return "\(p): the encryption key is not this database's"
        case .notEncrypted(let p): return "\(p): the database is not encrypted; open it without a key"
        }
    }

    static func validate(_ key: [UInt8]?) throws {
        if let key, key.count != keyLength { throw EncryptionError.invalidKeyLength(found: key.count) }
    }
}

/// The cipher for a file whose header says `record`, with `key`: the checks that a key and
/// a file belong together, in one place for open, compact and copy.
enum FileCipher {
    static func resolve(_ record: EncryptionRecord?, key: [UInt8]?, path: String) throws -> PageCipher? {
        switch (record, key) {
        case (nil, nil): return nil
        case (nil, .some): throw EncryptionError.notEncrypted(path: path)
        case (.some, nil): throw EncryptionError.keyRequired(path: path)
        case (.some(let r), .some(let k)):
            try EncryptionError.validate(k)
            let cipher = AESPageCipher(key: k, fileSalt: r.fileSalt)
            guard cipher.keyCheck() == r.keyCheck else { throw EncryptionError.wrongKey(path: path) }
            return cipher
        }
    }

    /// A cipher for a new file: a fresh random salt, and the record its header stores.
    static func forNewFile(key: [UInt8]) -> (PageCipher, EncryptionRecord) {
        var salt = [UInt8](repeating: 0, count: AESPageCipher.fileSaltLength)
        var rng = SystemRandomNumberGenerator()
        for i in salt.indices { salt[i] = UInt8.random(in: 0...255, using: &rng) }
        let cipher = AESPageCipher(key: key, fileSalt: salt)
        return (cipher, EncryptionRecord(fileSalt: salt, keyCheck: cipher.keyCheck()))
    }
}

/// Keys as text: key files and the torture suite's environment hold them as hex.
package enum HexBytes {
    package static func encode(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }

    /// nil unless `text` is an even number of hex digits.
    package static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: return c - 48
            case 97...102: return c - 87
            case 65...70: return c - 55
            default: return nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 2)
        var i = 0
        while i < chars.count {
            guard let hi = nibble(chars[i]), let lo = nibble(chars[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }
}
