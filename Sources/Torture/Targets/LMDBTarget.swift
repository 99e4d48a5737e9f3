import CLMDB

/// LMDB through liblmdb: one unnamed database in `db.mdb` (`MDB_NOSUBDIR`, lock file
/// `db.mdb-lock`), with the environment flags of its configuration. Read transactions use
/// `MDB_NOTLS`, so a thread may hold several handles. Integrity: a full cursor walk, which
/// must visit `ms_entries` pairs in strictly increasing key order without an error.
public final class LMDBTarget: TortureTarget {
    public struct Configuration: Sendable, Equatable, CustomStringConvertible {
        public enum Flag: String, Sendable, CaseIterable {
            /// No sync at commit: survives a process crash, not a power cut.
            case nosync
            /// Sync the data, not the meta page: may lose the last commit to a power cut.
            case nometasync
            /// Write through a writable map (then msync) instead of pwrite.
            case writemap

            var bits: UInt32 {
                switch self {
                case .nosync: return UInt32(MDB_NOSYNC)
                case .nometasync: return UInt32(MDB_NOMETASYNC)
                case .writemap: return UInt32(MDB_WRITEMAP)
                }
            }
        }
        public var flags: Set<Flag> = []

        public init(flags: Set<Flag> = []) { self.flags = flags }

        init(parsing text: String, spec: String) throws {
            for (word, value) in configurationWords(text) {
                if word == "default" && value == nil { continue }
                guard value == nil, let f = Flag(rawValue: word) else {
                    throw TargetSpec.bad(
                        spec,
                        "unknown lmdb option '\(word)'; known: default, "
                            + "\(Flag.allCases.map(\.rawValue).joined(separator: ", "))"
                    )
                }
                flags.insert(f)
            }
        }

        public var description: String {
            flags.isEmpty ? "default" : Flag.allCases.filter(flags.contains).map(\.rawValue).joined(separator: ",")
        }
    }

    public static let fileName = "db.mdb"
    /// Address space, not memory; with `writemap` the file is this size (sparse).
    static let mapSize = 256 << 20
    public let capabilities = TargetCapabilities()
    let name: String
    private var env: OpaquePointer?
    private var dbi: MDB_dbi = 0

    public init(directory: String, configuration: Configuration) throws {
        name = "lmdb:\(configuration)"
        let path = directory + "/" + LMDBTarget.fileName
        try check(mdb_env_create(&env), "env create")
        do {
            try check(mdb_env_set_mapsize(env, LMDBTarget.mapSize), "set mapsize")
            try check(mdb_env_set_maxreaders(env, 126), "set maxreaders")
            let flags = configuration.flags.reduce(UInt32(MDB_NOSUBDIR) | UInt32(MDB_NOTLS)) { $0 | $1.bits }
            try check(mdb_env_open(env, path, flags, 0o644), "open \(path)")
            var txn: OpaquePointer?
            try check(mdb_txn_begin(env, nil, 0, &txn), "begin")
            let rc = mdb_dbi_open(txn, nil, UInt32(MDB_CREATE), &dbi)
            guard rc == 0 else { mdb_txn_abort(txn); throw error(rc, "dbi open") }
            try check(mdb_txn_commit(txn), "commit")
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    func error(_ rc: Int32, _ operation: String) -> TargetError {
        TargetError(name, operation, String(cString: mdb_strerror(rc)))
    }

    func check(_ rc: Int32, _ operation: String) throws {
        guard rc == 0 else { throw error(rc, operation) }
    }

    /// Runs `body` with an MDB_val over the bytes of `text`.
    static func withValue<T>(_ text: String, _ body: (inout MDB_val) throws -> T) rethrows -> T {
        var bytes = Array(text.utf8)
        return try bytes.withUnsafeMutableBytes { p in
            var v = MDB_val(mv_size: p.count, mv_data: p.baseAddress)
            return try body(&v)
        }
    }

    static func text(_ v: MDB_val) -> String {
        guard let p = v.mv_data, v.mv_size > 0 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: p, count: v.mv_size), as: UTF8.self)
    }

    struct Transaction: TargetTransaction {
        let target: LMDBTarget
        let txn: OpaquePointer?

        func get(_ key: String) throws -> String? {
            var value = MDB_val()
            let rc = LMDBTarget.withValue(key) { k in mdb_get(txn, target.dbi, &k, &value) }
            if rc == MDB_NOTFOUND { return nil }
            try target.check(rc, "get")
            return LMDBTarget.text(value)
        }

        func put(_ key: String, _ value: String) throws {
            let rc = LMDBTarget.withValue(key) { k in
                LMDBTarget.withValue(value) { v in mdb_put(txn, target.dbi, &k, &v, 0) }
            }
            try target.check(rc, "put")
        }

        func delete(_ key: String) throws {
            let rc = LMDBTarget.withValue(key) { k in mdb_del(txn, target.dbi, &k, nil) }
            guard rc == 0 || rc == MDB_NOTFOUND else { throw target.error(rc, "del") }
        }

        func scan(from: String, to: String) throws -> [(key: String, value: String)] {
            var cursor: OpaquePointer?
            try target.check(mdb_cursor_open(txn, target.dbi, &cursor), "cursor open")
            defer { mdb_cursor_close(cursor) }
            var out: [(key: String, value: String)] = []
            var value = MDB_val()
            var key = MDB_val()
            var rc = LMDBTarget.withValue(from) { k -> Int32 in
                let r = mdb_cursor_get(cursor, &k, &value, MDB_SET_RANGE)
                key = k
                return r
            }
            let end = Array(to.utf8)
            while rc == 0 {
                let k = LMDBTarget.text(key)
                if !Array(k.utf8).lexicographicallyPrecedes(end) { break }
                out.append((k, LMDBTarget.text(value)))
                rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
            }
            guard rc == 0 || rc == MDB_NOTFOUND else { throw target.error(rc, "cursor next") }
            return out
        }
    }

    public func write<T>(_ body: (TargetTransaction) throws -> T) throws -> T {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn), "begin")
        let result: T
        do {
            result = try body(Transaction(target: self, txn: txn))
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        try check(mdb_txn_commit(txn), "commit")
        return result
    }

    public func read<T>(_ body: (TargetTransaction) throws -> T) throws -> T {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "begin read")
        defer { mdb_txn_abort(txn) }
        return try body(Transaction(target: self, txn: txn))
    }

    /// Walks every pair with a cursor: each must come in strictly increasing key order, and
    /// the walk must see as many as the database's own count.
    public func integrityCheck() throws -> [String]? {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "begin read")
        defer { mdb_txn_abort(txn) }
        var stat = MDB_stat()
        try check(mdb_stat(txn, dbi, &stat), "stat")
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(txn, dbi, &cursor), "cursor open")
        defer { mdb_cursor_close(cursor) }
        var problems: [String] = []
        var key = MDB_val(), value = MDB_val()
        var previous: [UInt8]?
        var walked = 0
        var rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
        while rc == 0 {
            let k = key.mv_data.map { Array(UnsafeRawBufferPointer(start: $0, count: key.mv_size)) } ?? []
            if let p = previous, !p.lexicographicallyPrecedes(k) {
                problems.append("key \(walked) is not greater than the one before it")
            }
            if value.mv_size > 0, value.mv_data == nil { problems.append("key \(walked) has a value without data") }
            previous = k
            walked += 1
            rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
        }
        if rc != MDB_NOTFOUND {
            problems.append("cursor walk stopped after \(walked) pairs: \(String(cString: mdb_strerror(rc)))")
        }
        if walked != stat.ms_entries {
            problems.append("walked \(walked) pairs, the database counts \(stat.ms_entries)")
        }
        return problems
    }

    public func close() {
        guard env != nil else { return }
        mdb_env_close(env)
        env = nil
    }
}
