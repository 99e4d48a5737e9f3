import Engine
import SeededRandomness

/// The writer side of a crash cycle: commits `CommitWorkload` transactions from several
/// threads, logging each intent and acknowledgement to the oracle, until `maxCommit`.
/// Commit numbers are taken inside the write transaction, so threads and processes sharing
/// one file still produce the single sequence 1, 2, 3, ... the verifier replays.
///
/// With `batch`, each commit is a `Database.batch` call, so several commits share one version
/// (each is logged as acknowledged once its call returned), and one call in eight throws the
/// first time its body runs, after making its changes: that must undo them and leave the
/// other calls of its transaction to commit without it.
public struct CommitWriter {
    public let dbPath: String
    public let oraclePath: String
    public let workload: CommitWorkload
    public let durability: Durability
    public let threads: Int
    public let maxCommit: UInt64
    public let batch: Bool

    public init(
        dbPath: String, oraclePath: String, seed: UInt64, schedule: [PlannedCommit]? = nil,
        durability: Durability = .full,
        threads: Int = 1, maxCommit: UInt64, batch: Bool = false
    ) {
        self.dbPath = dbPath
        self.oraclePath = oraclePath
        workload = CommitWorkload(seed: seed, schedule: schedule)
        self.durability = durability
        self.threads = max(1, threads)
        self.maxCommit = maxCommit
        self.batch = batch
    }

    public func run() throws {
        let db = try Database(path: dbPath, options: TortureEncryption.options(durability: durability))
        let oracle = try OracleLog(path: oraclePath)
        let failure = FirstError()
        let group = ThreadGroup()
        for t in 0..<threads {
            group.spawn {
                var rng = SeededRandom.derive(workload.seed, UInt64(t) &+ 0xBA7C)
                do {
                    while true {
                        var attempted: UInt64 = 0
                        var throwFirst = batch && Int.random(in: 0..<8, using: &rng) == 0
                        let commit = { (tx: WriteTransaction) throws -> UInt64? in
                            let i = try CommitWorkload.committed(in: tx) + 1
                            // Roll back rather than commit an empty version: a writer that
                            // ends normally must leave the version number where its last
                            // acknowledged commit put it.
                            guard i <= maxCommit else { throw Finished() }
                            attempted = i
                            try oracle.intent(i)
                            try workload.apply(commit: i, in: tx)
                            if throwFirst {
                                throwFirst = false
                                throw ThrownOnce()
                            }
                            return tx.version
                        }
                        let version: UInt64?
                        do {
                            version = try batch ? db.batch(commit) : db.write(commit)
                        } catch is ThrownOnce {
                            continue  // it ran alone, so it was not run again: a new call
                        }
                        guard let version else { return }
                        try oracle.ack(attempted, version: version)
                    }
                } catch is Finished {
                    return
                } catch {
                    failure.record(error)
                }
            }
        }
        group.join()
        if let e = failure.error { throw e }
    }
}

private struct Finished: Error {}
private struct ThrownOnce: Error {}
