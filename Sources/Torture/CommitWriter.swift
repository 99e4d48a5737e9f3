import Engine

/// The writer side of a crash cycle: commits `CommitWorkload` transactions from several
/// threads, logging each intent and acknowledgement to the oracle, until `maxCommit`.
/// Commit numbers are taken inside the write transaction, so threads and processes sharing
/// one file still produce the single sequence 1, 2, 3, ... the verifier replays.
public struct CommitWriter {
    public let dbPath: String
    public let oraclePath: String
    public let workload: CommitWorkload
    public let durability: Durability
    public let threads: Int
    public let maxCommit: UInt64

    public init(dbPath: String, oraclePath: String, seed: UInt64, durability: Durability = .full, threads: Int = 1, maxCommit: UInt64) {
        self.dbPath = dbPath
        self.oraclePath = oraclePath
        workload = CommitWorkload(seed: seed)
        self.durability = durability
        self.threads = max(1, threads)
        self.maxCommit = maxCommit
    }

    public func run() throws {
        let db = try Database(path: dbPath, options: DatabaseOptions(durability: durability))
        let oracle = try OracleLog(path: oraclePath)
        let failure = FirstError()
        let group = ThreadGroup()
        for _ in 0..<threads {
            group.spawn {
                do {
                    while true {
                        var attempted: UInt64 = 0
                        let version: UInt64? = try db.write { tx in
                            let i = try CommitWorkload.committed(in: tx) + 1
                            // Roll back rather than commit an empty version: a writer that
                            // ends normally must leave the version number where its last
                            // acknowledged commit put it.
                            guard i <= maxCommit else { throw Finished() }
                            attempted = i
                            try oracle.intent(i)
                            try workload.apply(commit: i, in: tx)
                            return tx.version
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
