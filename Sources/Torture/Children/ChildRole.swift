import Engine
import FaultFS

/// What one child process of the suite does. Every process a scenario starts (the writers it
/// kills, readers, observers, verifiers) is one of these cases, sent in a `ChildRequest` and
/// performed by `fief torture child` (`ChildWork.swift`). A case's values are the whole of
/// what the child is told, so the scenario that builds it and the child that reads it cannot
/// disagree about a flag.
public enum ChildRole: Codable, Sendable, Equatable {
    /// Commits the seeded workload up to `maxCommit`, logging to an oracle; with `schedule`,
    /// the explicit commits of a replay read from that JSON file instead.
    case writer(
        db: String, oracle: String, seed: UInt64, threads: Int = 1, maxCommit: UInt64,
        durability: Durability = .full, batch: Bool = false, schedule: String? = nil)
    /// Logs and checks every delivery of the notify scenario until `stop` exists.
    case observer(of: ObservedChanges, db: String, log: String, stop: String, graceSeconds: Double)
    /// Pins one snapshot (touching `ready` once it has), checking it never changes.
    case holdSnapshot(db: String, ready: String, seconds: Double)
    /// Runs list-append transactions of the isolation scenario and records their history. The
    /// worker itself is the request (as for `targetListAppend`): the child runs what it is sent.
    case listAppend(ListAppendWorker)
    /// Commits the seeded workload on a target of the generic scenarios, logging to an oracle.
    case targetWriter(target: TargetSpec, dir: String, oracle: String, seed: UInt64, maxCommit: UInt64)
    /// Verifies a target's store against its oracle and writes the verdict (JSON) to `out`.
    case targetVerify(target: TargetSpec, dir: String, oracle: String, seed: UInt64, out: String)
    /// Runs list-append transactions on a target for the generic isolation scenario.
    case targetListAppend(TargetListAppendWorker)
    /// Commits the seeded object graph (in schema 1 or 2), logging to an oracle.
    case objectsWriter(db: String, oracle: String, seed: UInt64, maxCommit: UInt64, schema: Int = 1)
    /// Verifies a recovered object graph against its oracle and writes the verdict to `report`.
    case objectsCheck(db: String, oracle: String, seed: UInt64, report: String, cacheReopen: Bool = false)
    /// Reopens the object graph's file as a cache (`deleteIfMigrationNeeded`) and writes notes.
    case objectsCache(db: String, maxNotes: Int)
    /// Migrates the object graph to schema 2.
    case objectsMigrate(db: String)
    /// Opens a format-1 or format-2 object file, which converts it to the current format.
    case objectsConvert(db: String)
    /// Creates, compacts or copies (to `dest`) a database.
    case fileOperation(FileOperation, db: String, dest: String? = nil)
    /// Reads everything and compares it with the oracle (exit status: `CheckedReader.Outcome`).
    case checkedRead(db: String, oracle: String, seed: UInt64, verifyChecksums: Bool)
    /// Many short checked reads on `threads` threads for `seconds`.
    case churnReader(db: String, seed: UInt64, seconds: Double, threads: Int)
    /// Serves a FaultFS mount until it is unmounted: the daemon of a `FaultFSMount`, with the
    /// faults of the `config` file (JSON or TOML) armed from the start.
    case faultFSDaemon(
        backing: String, mountpoint: String, seed: UInt64, model: PersistenceModel, config: String?, trace: String)

    /// What an observer of the notify scenario watches.
    public enum ObservedChanges: String, Codable, Sendable {
        /// Commit ranges, through `Database.observe`.
        case commits
        /// A query's results, through `results.observe`.
        case results
    }

    /// The file operations the `file-ops` scenario kills.
    public enum FileOperation: String, Codable, Sendable, CaseIterable {
        case create, compact, copy
    }
}
