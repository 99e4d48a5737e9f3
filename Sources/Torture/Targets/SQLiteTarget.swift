#if canImport(Glibc)
    import Glibc
#endif
import CSQLite

/// SQLite through libsqlite3: one `kv(k TEXT PRIMARY KEY, v TEXT)` table in `db.sqlite`, in
/// the journal mode and synchronous level of its configuration. Writes run in
/// `BEGIN IMMEDIATE` … `COMMIT`; reads in `BEGIN` … `COMMIT` (a snapshot in WAL mode, a
/// shared lock in rollback-journal mode). Integrity: `PRAGMA integrity_check`.
public final class SQLiteTarget: TortureTarget {
    public struct Configuration: Sendable, Equatable, CustomStringConvertible {
        public enum Journal: String, Sendable, CaseIterable { case wal, delete }
        public enum Synchronous: String, Sendable, CaseIterable { case full, normal, off, extra }
        public var journal: Journal = .wal
        public var synchronous: Synchronous = .full

        public init(journal: Journal = .wal, synchronous: Synchronous = .full) {
            self.journal = journal
            self.synchronous = synchronous
        }

        init(parsing text: String, spec: String) throws {
            for (key, value) in configurationWords(text) {
                switch key {
                case "journal", "journal_mode":
                    guard let v = value.flatMap(Journal.init(rawValue:)) else {
                        throw TargetSpec.bad(
                            spec,
                            "sqlite journal must be one of \(Journal.allCases.map(\.rawValue).joined(separator: ", "))")
                    }
                    journal = v
                case "synchronous", "sync":
                    guard let v = value.flatMap(Synchronous.init(rawValue:)) else {
                        throw TargetSpec.bad(
                            spec,
                            "sqlite synchronous must be one of "
                                + "\(Synchronous.allCases.map(\.rawValue).joined(separator: ", "))"
                        )
                    }
                    synchronous = v
                default:
                    throw TargetSpec.bad(
                        spec,
                        "unknown sqlite option '\(key)'; known: journal=wal|delete, synchronous=full|normal|off|extra")
                }
            }
        }

        public var description: String { "journal=\(journal.rawValue),synchronous=\(synchronous.rawValue)" }
    }

    public static let fileName = "db.sqlite"
    public let capabilities = TargetCapabilities()
    let path: String
    let name: String
    private var db: OpaquePointer?

    public init(directory: String, configuration: Configuration) throws {
        path = directory + "/" + SQLiteTarget.fileName
        name = "sqlite:\(configuration)"
        let rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "code \(rc)"
            sqlite3_close(db)
            db = nil
            throw TargetError(name, "open \(path)", message)
        }
        sqlite3_busy_timeout(db, 30_000)
        do {
            try exec("PRAGMA journal_mode=\(configuration.journal.rawValue.uppercased())")
            try exec("PRAGMA synchronous=\(configuration.synchronous.rawValue.uppercased())")
            try exec("CREATE TABLE IF NOT EXISTS kv(k TEXT PRIMARY KEY, v TEXT NOT NULL)")
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    func error(_ operation: String) -> TargetError {
        TargetError(name, operation, db.map { String(cString: sqlite3_errmsg($0)) } ?? "closed")
    }

    func exec(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw error(sql) }
    }

    /// Runs `sql` with text parameters; returns its rows as text columns.
    func query(_ sql: String, _ parameters: [String] = []) throws -> [[String?]] {
        var stmt: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &stmt, nil) == SQLITE_OK else { throw error("prepare \(sql)") }
        defer { sqlite3_finalize(stmt) }
        // SQLITE_TRANSIENT: SQLite copies the bytes, so the Swift strings may go.
        let transient = unsafeBitCast(Int(-1), to: sqlite3_destructor_type.self)
        for (i, p) in parameters.enumerated() {
            guard sqlite3_bind_text(stmt, Int32(i + 1), p, -1, transient) == SQLITE_OK else {
                throw error("bind \(sql)")
            }
        }
        var rows: [[String?]] = []
        while true {
            let rc = sqlite3_step(stmt)
            if rc == SQLITE_DONE { return rows }
            guard rc == SQLITE_ROW else { throw error(sql) }
            rows.append(
                (0..<sqlite3_column_count(stmt)).map { c in sqlite3_column_text(stmt, c).map { String(cString: $0) } })
        }
    }

    struct Transaction: TargetTransaction {
        let target: SQLiteTarget
        func get(_ key: String) throws -> String? {
            try target.query("SELECT v FROM kv WHERE k = ?1", [key]).first?[0] ?? nil
        }
        func put(_ key: String, _ value: String) throws {
            _ = try target.query("INSERT OR REPLACE INTO kv(k, v) VALUES(?1, ?2)", [key, value])
        }
        func delete(_ key: String) throws { _ = try target.query("DELETE FROM kv WHERE k = ?1", [key]) }
        func scan(from: String, to: String) throws -> [(key: String, value: String)] {
            try target.query("SELECT k, v FROM kv WHERE k >= ?1 AND k < ?2 ORDER BY k", [from, to]).map {
                ($0[0] ?? "", $0[1] ?? "")
            }
        }
    }

    func transaction<T>(_ begin: String, _ body: (TargetTransaction) throws -> T) throws -> T {
        try exec(begin)
        let result: T
        do {
            result = try body(Transaction(target: self))
        } catch {
            try? exec("ROLLBACK")
            throw error
        }
        try exec("COMMIT")
        return result
    }

    public func write<T>(_ body: (TargetTransaction) throws -> T) throws -> T {
        try transaction("BEGIN IMMEDIATE", body)
    }
    public func read<T>(_ body: (TargetTransaction) throws -> T) throws -> T { try transaction("BEGIN", body) }

    public func integrityCheck() throws -> [String]? {
        let rows = try query("PRAGMA integrity_check").compactMap { $0.first ?? nil }
        return rows == ["ok"] ? [] : rows
    }

    public func close() {
        guard db != nil else { return }
        // close cannot throw; a failure (its last checkpoint's) goes to the process's output.
        let rc = sqlite3_close_v2(db)
        if rc != SQLITE_OK { fputs("\(name): close: \(String(cString: sqlite3_errstr(rc)))\n", stderr) }
        db = nil
    }
}
