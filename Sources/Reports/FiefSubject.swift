import Engine
#if canImport(Glibc)
    import Glibc
#endif

/// Fief's engine, through its public typed API, as a user would call it.
final class FiefSubject: BenchStore {
    static let system = SystemName.fief
    static let table = "kv"
    let db: Database
    let path: String

    init(directory: String, durability: Durability) throws {
        path = directory + "/bench.fief"
        db = try Database(path: path, options: DatabaseOptions(durability: durability))
    }

    var commitCounts: Database.CommitCounts? { db.commitCounts }

    struct Writer: BenchWriter {
        let table: Table<Int64, [UInt8]>
        mutating func put(_ key: Int64, _ value: [UInt8]) throws { try table.put(key, value) }
        mutating func delete(_ key: Int64) throws { try table.delete(key) }
    }

    struct Reader: BenchReader {
        let tx: ReadTransaction
        let table: Table<Int64, [UInt8]>?

        mutating func get(_ key: Int64) throws -> Int {
            guard let table else { return -1 }
            // The value's bytes lent in place, not copied into an array: as LMDB's peer,
            // which returns mdb_get's size without touching the value.
            return try table.withValueBytes(key) { $0?.count ?? -1 }
        }

        mutating func scanAll() throws -> (count: Int, bytes: Int) {
            guard table != nil else { return (0, 0) }
            var n = 0, bytes = 0
            // The untyped scan lends the bytes in place: no copy, as LMDB's cursor.
            try tx.scan(table: FiefSubject.table) { _, v in
                n += 1
                bytes += v.count
                return true
            }
            return (n, bytes)
        }
    }

    func write(_ body: (inout Writer) throws -> Void) throws {
        try db.write { tx in
            var w = Writer(table: try tx.openTable(FiefSubject.table, key: Int64.self, value: [UInt8].self))
            try body(&w)
        }
    }

    /// `batch`: the threads' transactions share commits, and with them syncs.
    func writeAmongMany(_ body: (inout Writer) throws -> Void) throws {
        try db.batch { tx in
            var w = Writer(table: try tx.openTable(FiefSubject.table, key: Int64.self, value: [UInt8].self))
            try body(&w)
        }
    }

    func read<T>(_ body: (inout Reader) throws -> T) throws -> T {
        try db.read { tx in
            // One catalog lookup per transaction, as LMDB's peer opens its table once.
            let t: Table<Int64, [UInt8]>?
            do {
                t = try tx.table(FiefSubject.table, key: Int64.self, value: [UInt8].self)
            } catch EngineError.tableNotFound(_) { t = nil }
            var r = Reader(tx: tx, table: t)
            return try body(&r)
        }
    }

    func committedTransactions() -> UInt64? { try? db.latestVersion() }

    func fileBytes() -> UInt64 { fileSize(path) }

    func close() {}

    /// The on-disk format version, read from a file's header (little-endian u32 at byte 8),
    /// since the engine does not export it.
    static func formatVersion(scratchDirectory: String) -> Int? {
        guard let s = try? FiefSubject(directory: scratchDirectory, durability: .none) else { return nil }
        let fd = open(s.path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var v: UInt32 = 0
        guard pread(fd, &v, 4, 8) == 4 else { return nil }
        return Int(UInt32(littleEndian: v))
    }
}
