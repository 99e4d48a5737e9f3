import CSQLite
import Engine

/// SQLite through libsqlite3: one `kv(k INTEGER PRIMARY KEY, v BLOB)` table (the rowid
/// B-tree, SQLite's fastest layout for integer keys), WAL journal. Durability pairs:
/// Fief `full` = `synchronous=FULL` (WAL synced at every commit), Fief `none` =
/// `synchronous=OFF`. Every statement is prepared once per connection. Concurrent writers
/// each get a connection of their own (`handleForAnotherThread`), BEGIN IMMEDIATE and a
/// 10 s busy timeout, as SQLite advises for WAL writers.
final class SQLitePeer: BenchStore {
    static let system = SystemName.sqlite
    let directory: String
    let durability: Durability
    let path: String
    private var db: OpaquePointer?
    private var insert: OpaquePointer?
    private var remove: OpaquePointer?
    private var select: OpaquePointer?
    private var scan: OpaquePointer?
    private var begin: OpaquePointer?
    private var beginWrite: OpaquePointer?
    private var commit: OpaquePointer?
    private var rollback: OpaquePointer?

    init(directory: String, durability: Durability) throws {
        self.directory = directory
        self.durability = durability
        path = directory + "/bench.sqlite"
        // NOMUTEX: each connection is used by one thread at a time; locking stays SQLite's own.
        let rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK else {
            let msg = db.map { String(cString: sqlite3_errmsg($0)) } ?? "code \(rc)"
            sqlite3_close(db)
            throw BenchError.peer(system: "sqlite", operation: "open \(path)", detail: msg)
        }
        sqlite3_busy_timeout(db, 10_000)
        try exec("PRAGMA journal_mode=WAL")
        try exec("PRAGMA synchronous=\(durability == .full ? "FULL" : "OFF")")
        try exec("CREATE TABLE IF NOT EXISTS kv(k INTEGER PRIMARY KEY, v BLOB NOT NULL)")
        insert = try prepare("INSERT OR REPLACE INTO kv(k, v) VALUES(?1, ?2)")
        remove = try prepare("DELETE FROM kv WHERE k = ?1")
        select = try prepare("SELECT v FROM kv WHERE k = ?1")
        scan = try prepare("SELECT k, v FROM kv ORDER BY k")
        begin = try prepare("BEGIN")
        // IMMEDIATE takes the write lock up front, as Fief's and LMDB's writers do.
        beginWrite = try prepare("BEGIN IMMEDIATE")
        commit = try prepare("COMMIT")
        rollback = try prepare("ROLLBACK")
    }

    deinit { close() }

    private func error(_ op: String) -> BenchError {
        .peer(system: "sqlite", operation: op, detail: db.map { String(cString: sqlite3_errmsg($0)) } ?? "closed")
    }

    private func exec(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw error(sql) }
    }

    private func prepare(_ sql: String) throws -> OpaquePointer? {
        var stmt: OpaquePointer?
        guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil) == SQLITE_OK else {
            throw error("prepare \(sql)")
        }
        return stmt
    }

    /// Runs a statement that returns no rows.
    private func run(_ stmt: OpaquePointer?, _ op: String) throws {
        let rc = sqlite3_step(stmt)
        sqlite3_reset(stmt)
        guard rc == SQLITE_DONE || rc == SQLITE_ROW else { throw error(op) }
    }

    struct Writer: BenchWriter {
        let peer: SQLitePeer
        mutating func put(_ key: Int64, _ value: [UInt8]) throws {
            let stmt = peer.insert
            sqlite3_bind_int64(stmt, 1, key)
            // SQLITE_STATIC (nil): the bytes stay alive and unchanged until the step below.
            let rc = value.withUnsafeBytes { sqlite3_bind_blob(stmt, 2, $0.baseAddress, Int32($0.count), nil) }
            guard rc == SQLITE_OK else { throw peer.error("bind") }
            try peer.run(stmt, "insert")
        }
        mutating func delete(_ key: Int64) throws {
            sqlite3_bind_int64(peer.remove, 1, key)
            try peer.run(peer.remove, "delete")
        }
    }

    struct Reader: BenchReader {
        let peer: SQLitePeer
        mutating func get(_ key: Int64) throws -> Int {
            let stmt = peer.select
            sqlite3_bind_int64(stmt, 1, key)
            defer { sqlite3_reset(stmt) }
            switch sqlite3_step(stmt) {
            case SQLITE_ROW:
                _ = sqlite3_column_blob(stmt, 0)
                return Int(sqlite3_column_bytes(stmt, 0))
            case SQLITE_DONE: return -1
            default: throw peer.error("select")
            }
        }
        mutating func scanAll() throws -> (count: Int, bytes: Int) {
            let stmt = peer.scan
            defer { sqlite3_reset(stmt) }
            var n = 0, bytes = 0
            while true {
                let rc = sqlite3_step(stmt)
                if rc == SQLITE_DONE { break }
                guard rc == SQLITE_ROW else { throw peer.error("scan") }
                _ = sqlite3_column_blob(stmt, 1)
                n += 1
                bytes += Int(sqlite3_column_bytes(stmt, 1))
            }
            return (n, bytes)
        }
    }

    func write(_ body: (inout Writer) throws -> Void) throws {
        try run(beginWrite, "begin immediate")
        var w = Writer(peer: self)
        do {
            try body(&w)
        } catch {
            try? run(rollback, "rollback")
            throw error
        }
        try run(commit, "commit")
    }

    func read<T>(_ body: (inout Reader) throws -> T) throws -> T {
        try run(begin, "begin")
        var r = Reader(peer: self)
        defer { try? run(commit, "commit") }
        return try body(&r)
    }

    func handleForAnotherThread() throws -> SQLitePeer {
        try SQLitePeer(directory: directory, durability: durability)
    }

    func fileBytes() -> UInt64 { fileSize(path) + fileSize(path + "-wal") }

    func close() {
        guard db != nil else { return }
        for s in [insert, remove, select, scan, begin, beginWrite, commit, rollback] { sqlite3_finalize(s) }
        sqlite3_close(db)
        db = nil
    }
}

extension SQLitePeer {
    static var libraryVersion: String { String(cString: sqlite3_libversion()) }
}
