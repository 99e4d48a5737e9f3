import Engine
#if canImport(Glibc)
    import Glibc
#endif

/// The systems `fief bench` runs side by side.
public enum SystemName: String, Codable, CaseIterable, Sendable, Comparable {
    case fief, sqlite, lmdb

    public var label: String {
        switch self {
        case .fief: return "Fief"
        case .sqlite: return "SQLite"
        case .lmdb: return "LMDB"
        }
    }

    public static func < (a: SystemName, b: SystemName) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// What every workload needs from a key-value store: one table of Int64 keys and byte values,
/// write transactions that commit when their body returns, read transactions that see one
/// snapshot. Fief, SQLite and LMDB each implement it, so one workload code serves all three
/// and a difference in numbers is a difference in the systems, not in the harness.
protocol BenchStore: AnyObject {
    associatedtype Writer: BenchWriter
    associatedtype Reader: BenchReader

    static var system: SystemName { get }

    /// Opens the store kept under `directory` (created when missing) at the given durability.
    init(directory: String, durability: Durability) throws

    /// One write transaction: commits when `body` returns, at the store's durability.
    func write(_ body: (inout Writer) throws -> Void) throws

    /// One read transaction over a single snapshot.
    func read<T>(_ body: (inout Reader) throws -> T) throws -> T

    /// One write transaction from one of many threads writing at once, each on its
    /// `handleForAnotherThread()`, as the system is best used so. Default: `write`.
    func writeAmongMany(_ body: (inout Writer) throws -> Void) throws

    /// A handle another thread may use at the same time as this one. SQLite needs a
    /// connection per thread; Fief and LMDB share one handle (LMDB forbids opening one
    /// environment twice in a process).
    func handleForAnotherThread() throws -> Self

    /// How many write transactions the store has committed, where it says (Fief's version);
    /// with the calls made, it tells how many calls a group commit put in each.
    func committedTransactions() -> UInt64?

    /// Fief's commit counters (pages written, syncs waited for); nil for the peers.
    var commitCounts: Database.CommitCounts? { get }

    /// Bytes on disk of the store's data files (database, write-ahead log); lock files excluded.
    func fileBytes() -> UInt64

    func close()
}

extension BenchStore {
    func handleForAnotherThread() throws -> Self { self }
    func writeAmongMany(_ body: (inout Writer) throws -> Void) throws { try write(body) }
    func committedTransactions() -> UInt64? { nil }
    var commitCounts: Database.CommitCounts? { nil }
}

protocol BenchWriter {
    mutating func put(_ key: Int64, _ value: [UInt8]) throws
    mutating func delete(_ key: Int64) throws
}

protocol BenchReader {
    /// The length of the value under `key`, or -1 when there is none. Returning the length
    /// keeps the read from being optimised away without copying more than each API must.
    mutating func get(_ key: Int64) throws -> Int
    /// Visits every entry in key order; returns how many it saw and their value bytes.
    mutating func scanAll() throws -> (count: Int, bytes: Int)
}

/// Opens one system's store: the bridge from a run-time choice to the generic workloads.
enum StoreFactory {
    static func open(_ system: SystemName, directory: String, durability: Durability) throws -> any BenchStore {
        switch system {
        case .fief: return try FiefSubject(directory: directory, durability: durability)
        case .sqlite: return try SQLitePeer(directory: directory, durability: durability)
        case .lmdb: return try LMDBPeer(directory: directory, durability: durability)
        }
    }
}

/// Size of one file, 0 when it does not exist.
func fileSize(_ path: String) -> UInt64 {
    var st = stat()
    return stat(path, &st) == 0 ? UInt64(st.st_size) : 0
}
