import Engine
import Foundation
import SeededRandomness

/// A reader process: pins a snapshot, fingerprints what it sees, announces itself in a
/// ready file, then keeps re-reading the same snapshot while others write. Its view must
/// never change.
public struct SnapshotHolder {
    public let dbPath: String
    public let readyPath: String
    public let seconds: Double

    /// Returns false when the snapshot changed under the reader.
    public func run() throws -> Bool {
        let db = try Database(path: dbPath, options: TortureEncryption.options(create: false))
        let tx = try db.beginRead()
        defer { tx.end() }
        let first = try Fingerprint.of(tx)
        let ready = "ready \(tx.version) \(first)\n"
        let tmp = readyPath + ".tmp"
        guard FileManager.default.createFile(atPath: tmp, contents: Data(ready.utf8)) else {
            throw TortureError.io("write \(tmp)", errno)
        }
        rename(tmp, readyPath)
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if try Fingerprint.of(tx) != first { return false }
            usleep(20_000)
        }
        return true
    }
}

/// A digest of every table in a snapshot (FNV-1a over names, keys and values, in order).
public enum Fingerprint {
    public static func of(_ tx: Transaction) throws -> UInt64 {
        var h = FNV1a()
        func mix(_ b: UnsafeRawBufferPointer) {
            h.add(b)
            h.add(0xFF)
        }
        for name in try tx.tableNames() {
            Array(name.utf8).withUnsafeBytes { mix($0) }
            try tx.scan(table: name) { k, v in
                mix(k)
                mix(v)
                return true
            }
        }
        return h.value
    }
}
