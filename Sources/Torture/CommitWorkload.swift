import Engine
import SeededRandomness

/// A single-writer workload whose state after commit k is known exactly: commit i applies
/// changes derived only from (seed, i) (puts, deletes, values large enough for overflow
/// extents, a bank transfer), and records i in the progress table (a counter) in the same
/// transaction. Replaying commits 1...k gives the state any recovered file must equal.
public struct CommitWorkload: Sendable {
    public let seed: UInt64
    /// Explicit commits (a replay's, usually shrunk): commit i is `schedule[i - 1]`, and a
    /// commit past its end changes only the progress counter. Nil: every commit is derived
    /// from (seed, i).
    public let schedule: [PlannedCommit]?
    public static let dataTable = "data"
    public static let progressTable = "progress"
    public static let progressKey = "commit"
    static let keySpace: Int64 = 400

    public init(seed: UInt64, schedule: [PlannedCommit]? = nil) {
        self.seed = seed
        self.schedule = schedule
    }

    /// Commit `i` as planned: from the schedule, or derived from the seed.
    public func planned(commit i: UInt64) -> PlannedCommit {
        guard let schedule else { return PlannedCommit.derived(seed: seed, commit: i) }
        return i >= 1 && i <= UInt64(schedule.count)
            ? schedule[Int(i - 1)] : PlannedCommit(changes: [], transfer: false)
    }

    /// The puts (value) and deletes (nil) commit `i` makes. Values are mostly small, a few
    /// large enough to need overflow extents.
    public func changes(forCommit i: UInt64) -> [(key: Int64, value: [UInt8]?)] {
        planned(commit: i).changes.map { c in
            (c.key, c.length.map { CommitWorkload.value(commit: i, key: c.key, length: $0) })
        }
    }

    /// The bank transfers riding on this workload's commits (every commit's, unless the
    /// schedule says which).
    public var bank: BankTransfers {
        guard let schedule else { return BankTransfers(seed: seed) }
        return BankTransfers(
            seed: seed, transferCommits: Set(schedule.indices.filter { schedule[$0].transfer }.map { UInt64($0 + 1) }))
    }

    static func value(commit: UInt64, key: Int64, length: Int) -> [UInt8] {
        let stamp = Array("\(commit):\(key);".utf8)
        return (0..<length).map { stamp[$0 % stamp.count] }
    }

    /// Applies commit `i` inside `tx`.
    public func apply(commit i: UInt64, in tx: WriteTransaction) throws {
        let data = try tx.openTable(CommitWorkload.dataTable, key: Int64.self, value: [UInt8].self)
        let progress = try tx.openTable(CommitWorkload.progressTable, key: String.self, value: Int64.self)
        for (k, v) in changes(forCommit: i) {
            if let v { try data.put(k, v) } else { try data.delete(k) }
        }
        try bank.apply(commit: i, in: tx)
        if try !progress.update(CommitWorkload.progressKey, { $0 = Int64(i) }) {
            try progress.put(CommitWorkload.progressKey, Int64(i))
        }
    }

    /// The data table after commits 1...k.
    public func expectedState(afterCommit k: UInt64) -> [Int64: [UInt8]] {
        var state: [Int64: [UInt8]] = [:]
        guard k > 0 else { return state }
        for i in 1...k {
            for (key, v) in changes(forCommit: i) { state[key] = v }
        }
        return state
    }

    /// The last commit the file holds (0 before the first).
    public static func committed(in tx: Transaction) throws -> UInt64 {
        guard try tx.tableInfo(progressTable) != nil else { return 0 }
        return UInt64(try tx.table(progressTable, key: String.self, value: Int64.self).get(progressKey) ?? 0)
    }
}

/// One commit of `CommitWorkload`, spelled out: what a replay file keeps and a shrinker cuts.
public struct PlannedCommit: Codable, Sendable, Equatable {
    /// A put of a value of `length` bytes (derived from the commit number and key), or a
    /// delete when `length` is nil.
    public struct Change: Codable, Sendable, Equatable {
        public var key: Int64
        public var length: Int?
    }
    public var changes: [Change]
    /// Whether the commit makes its bank transfer.
    public var transfer: Bool

    public init(changes: [Change], transfer: Bool) {
        self.changes = changes
        self.transfer = transfer
    }

    /// Commit `i` of the seeded workload: 1 to 24 changes, a fifth of them deletes, one put in
    /// forty large enough for an overflow extent.
    public static func derived(seed: UInt64, commit i: UInt64) -> PlannedCommit {
        var rng = SeededRandom.derive(seed, i)
        let n = Int.random(in: 1...24, using: &rng)
        var out: [Change] = []
        for _ in 0..<n {
            let key = Int64.random(in: 0..<CommitWorkload.keySpace, using: &rng)
            if Int.random(in: 0..<5, using: &rng) == 0 {
                out.append(Change(key: key, length: nil))
            } else {
                let large = Int.random(in: 0..<40, using: &rng) == 0
                out.append(
                    Change(
                        key: key,
                        length: large
                            ? Int.random(in: 3000...40_000, using: &rng) : Int.random(in: 1...120, using: &rng)))
            }
        }
        return PlannedCommit(changes: out, transfer: true)
    }
}
