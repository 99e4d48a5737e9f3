import CLMDB
import Engine

/// LMDB through liblmdb: one unnamed database, 8-byte big-endian keys (byte order is numeric
/// order, as Fief stores Int64 keys). Durability pairs: Fief `full` = LMDB's default (data
/// sync, then meta sync: two syncs per commit, as Fief); Fief `none` = `MDB_NOSYNC`.
/// Concurrent writers share the one environment, one `mdb_txn` per write (LMDB's own
/// practice: its writer mutex queues them; it has no group commit).
final class LMDBPeer: BenchStore {
    static let system = SystemName.lmdb
    let path: String
    private var env: OpaquePointer?
    private var dbi: MDB_dbi = 0

    init(directory: String, durability: Durability) throws {
        path = directory + "/bench.mdb"
        try LMDBPeer.check(mdb_env_create(&env), "env create")
        // The map is address space, not memory: reserve plenty so no workload hits MDB_MAP_FULL.
        try LMDBPeer.check(mdb_env_set_mapsize(env, 64 << 30), "set mapsize")
        try LMDBPeer.check(mdb_env_set_maxreaders(env, 256), "set maxreaders")
        var flags = UInt32(MDB_NOSUBDIR)
        if durability == .none { flags |= UInt32(MDB_NOSYNC) }
        let rc = mdb_env_open(env, path, flags, 0o644)
        guard rc == 0 else {
            mdb_env_close(env)
            env = nil
            throw LMDBPeer.error(rc, "open \(path)")
        }
        var txn: OpaquePointer?
        try LMDBPeer.check(mdb_txn_begin(env, nil, 0, &txn), "begin")
        let orc = mdb_dbi_open(txn, nil, UInt32(MDB_CREATE), &dbi)
        guard orc == 0 else { mdb_txn_abort(txn); throw LMDBPeer.error(orc, "dbi open") }
        try LMDBPeer.check(mdb_txn_commit(txn), "commit")
    }

    deinit { close() }

    static func error(_ rc: Int32, _ op: String) -> BenchError {
        .peer(system: "lmdb", operation: op, detail: String(cString: mdb_strerror(rc)))
    }

    static func check(_ rc: Int32, _ op: String) throws {
        guard rc == 0 else { throw error(rc, op) }
    }

    /// Runs `body` with an MDB_val over the big-endian key bytes.
    @inline(__always)
    static func withKey<T>(_ key: Int64, _ body: (inout MDB_val) throws -> T) rethrows -> T {
        var be = UInt64(bitPattern: key ^ Int64.min).bigEndian
        return try withUnsafeMutableBytes(of: &be) { p in
            var k = MDB_val(mv_size: 8, mv_data: p.baseAddress)
            return try body(&k)
        }
    }

    struct Writer: BenchWriter {
        let txn: OpaquePointer?
        let dbi: MDB_dbi
        mutating func put(_ key: Int64, _ value: [UInt8]) throws {
            let rc = LMDBPeer.withKey(key) { k in
                value.withUnsafeBytes { v in
                    var val = MDB_val(mv_size: v.count, mv_data: UnsafeMutableRawPointer(mutating: v.baseAddress))
                    return mdb_put(txn, dbi, &k, &val, 0)
                }
            }
            try LMDBPeer.check(rc, "put")
        }
        mutating func delete(_ key: Int64) throws {
            let rc = LMDBPeer.withKey(key) { k in mdb_del(txn, dbi, &k, nil) }
            guard rc == 0 || rc == MDB_NOTFOUND else { throw LMDBPeer.error(rc, "del") }
        }
    }

    struct Reader: BenchReader {
        let txn: OpaquePointer?
        let dbi: MDB_dbi
        mutating func get(_ key: Int64) throws -> Int {
            var val = MDB_val()
            let rc = LMDBPeer.withKey(key) { k in mdb_get(txn, dbi, &k, &val) }
            if rc == MDB_NOTFOUND { return -1 }
            try LMDBPeer.check(rc, "get")
            return val.mv_size
        }
        mutating func scanAll() throws -> (count: Int, bytes: Int) {
            var cursor: OpaquePointer?
            try LMDBPeer.check(mdb_cursor_open(txn, dbi, &cursor), "cursor open")
            defer { mdb_cursor_close(cursor) }
            var k = MDB_val(), v = MDB_val()
            var n = 0, bytes = 0
            var rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST)
            while rc == 0 {
                n += 1
                bytes += v.mv_size
                rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
            }
            guard rc == MDB_NOTFOUND else { throw LMDBPeer.error(rc, "cursor next") }
            return (n, bytes)
        }
    }

    func write(_ body: (inout Writer) throws -> Void) throws {
        var txn: OpaquePointer?
        try LMDBPeer.check(mdb_txn_begin(env, nil, 0, &txn), "begin")
        var w = Writer(txn: txn, dbi: dbi)
        do {
            try body(&w)
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        try LMDBPeer.check(mdb_txn_commit(txn), "commit")
    }

    func read<T>(_ body: (inout Reader) throws -> T) throws -> T {
        var txn: OpaquePointer?
        try LMDBPeer.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "begin read")
        defer { mdb_txn_abort(txn) }
        var r = Reader(txn: txn, dbi: dbi)
        return try body(&r)
    }

    func fileBytes() -> UInt64 { fileSize(path) }

    func close() {
        guard env != nil else { return }
        mdb_env_close(env)
        env = nil
    }
}

extension LMDBPeer {
    static var libraryVersion: String {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        _ = mdb_version(&major, &minor, &patch)
        return "\(major).\(minor).\(patch)"
    }
}
