import Engine

/// A reader that compares everything it reads with what the oracle says the file holds, to
/// tell a typed error (storage damage reported) from wrong data returned as if it were right.
public enum CheckedReader {
    public enum Outcome: Int32 {
        case correct = 0
        /// The engine reported the damage as a typed error.
        case reportedCorruption = 3
        /// The engine returned data that is not the committed data, without an error.
        case wrongData = 4
    }

    /// Reads every table the workload keeps and compares; `detail` says what differed.
    public static func run(dbPath: String, oraclePath: String, seed: UInt64, verifyChecksums: Bool) -> (Outcome, String)
    {
        var options = TortureEncryption.options(create: false)
        options.verifyChecksums = verifyChecksums
        do {
            let oracle = try OracleLog.read(oraclePath)
            let db = try Database(path: dbPath, options: options)
            let workload = CommitWorkload(seed: seed)
            return try db.read { tx -> (Outcome, String) in
                let k = try CommitWorkload.committed(in: tx)
                guard k >= oracle.lastAck, k <= oracle.lastIntent else {
                    return (.wrongData, "read commit \(k); the oracle allows \(oracle.lastAck)...\(oracle.lastIntent)")
                }
                var found: [Int64: [UInt8]] = [:]
                try tx.table(CommitWorkload.dataTable, key: Int64.self, value: [UInt8].self).scan { key, v in
                    found[key] = v; return true
                }
                let expected = workload.expectedState(afterCommit: k)
                if found != expected {
                    let differ =
                        expected.keys.filter { found[$0] != expected[$0] }.count
                        + found.keys.filter { expected[$0] == nil }.count
                    return (.wrongData, "\(differ) keys read back wrong at commit \(k), no error")
                }
                let bank = try BankTransfers(seed: seed).verify(in: tx, afterCommit: k)
                return bank.isEmpty ? (.correct, "commit \(k) read back exactly") : (.wrongData, bank[0].text)
            }
        } catch let e as EngineError {
            if case .corrupt = e { return (.reportedCorruption, e.description) }
            return (.reportedCorruption, "typed error: \(e)")
        } catch {
            return (.wrongData, "unexpected error: \(error)")
        }
    }
}
