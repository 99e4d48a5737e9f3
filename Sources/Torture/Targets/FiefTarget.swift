import Engine

/// Fief's engine as one target among others: one `kv` table (String → String) in `db.fief`.
/// Its own scenarios (named crash points, version numbers, growth under pins) run with the
/// target `fief`; `fief:generic` runs the generic scenarios through this type, so Fief is
/// measured by exactly the checks SQLite and LMDB get. Integrity: `Database.check()`.
public final class FiefTarget: TortureTarget {
    public static let fileName = "db.fief"
    static let table = "kv"
    public let capabilities = TargetCapabilities()
    private var db: Database?

    public init(directory: String) throws {
        db = try Database(path: directory + "/" + FiefTarget.fileName, options: TortureEncryption.options())
    }

    func database() throws -> Database {
        guard let db else { throw TargetError("fief", "use", "the target is closed") }
        return db
    }

    /// A read before the first commit finds no table: it reads as empty.
    struct Transaction: TargetTransaction {
        let table: Table<String, String>?

        func get(_ key: String) throws -> String? { try table?.get(key) }
        func put(_ key: String, _ value: String) throws { try table?.put(key, value) }
        func delete(_ key: String) throws { _ = try table?.delete(key) }
        func scan(from: String, to: String) throws -> [(key: String, value: String)] {
            try table?.entries(from: from, to: to).map { ($0.key, $0.value) } ?? []
        }
    }

    public func write<T>(_ body: (TargetTransaction) throws -> T) throws -> T {
        try database().write { tx in
            try body(Transaction(table: try tx.openTable(FiefTarget.table, key: String.self, value: String.self)))
        }
    }

    public func read<T>(_ body: (TargetTransaction) throws -> T) throws -> T {
        try database().read { tx in
            let table =
                try tx.tableInfo(FiefTarget.table) == nil
                ? nil : try tx.table(FiefTarget.table, key: String.self, value: String.self)
            return try body(Transaction(table: table))
        }
    }

    public func integrityCheck() throws -> [String]? { try database().check().problems.map { "\($0)" } }

    public func close() { db = nil }
}
