import Engine
import TortureSchema

/// What a crash left behind, judged against the oracle: the file opens (top-pointer and
/// select-bit recovery), `check()` passes, every acknowledged commit is present, the state is
/// exactly the state after one commit k with last-acknowledged <= k <= last-attempted, and
/// the version number agrees with k. Commits made through `Database.batch` (`batched`) share
/// versions: there the file's version must split the acknowledged commits exactly, every one
/// acknowledged in it or before present and every later one absent (each combined
/// transaction whole or not at all).
public struct RecoveryVerdict: Sendable {
    public var recoveredCommit: UInt64 = 0
    public var version: UInt64 = 0
    public var oracle = OracleLog.Summary()
    public var violations: [Violation] = []
    public var passed: Bool { violations.isEmpty }

    public init() {}

    /// A verdict with the oracle log read, or with the violation that it could not be.
    init(oraclePath: String) {
        do {
            oracle = try OracleLog.read(oraclePath)
        } catch {
            violations.append(Violation(kind: .harness, text: "oracle log unreadable: \(error)"))
        }
    }
}

public enum RecoveryCheck {
    public static func verify(dbPath: String, oraclePath: String, workload: CommitWorkload, batched: Bool = false)
        -> RecoveryVerdict
    {
        var v = RecoveryVerdict(oraclePath: oraclePath)
        guard v.passed else { return v }
        let db: Database
        do {
            db = try Database(path: dbPath, options: TortureEncryption.options(create: false))
        } catch EngineError.fileNotFound where v.oracle.lastAck == 0 {
            return v  // died before creating the file, and nothing was acknowledged
        } catch {
            v.violations.append(Violation(kind: .integrity, text: "database does not open after the crash: \(error)"))
            return v
        }
        do {
            let report = try db.check()
            for p in report.problems { v.violations.append(Violation(.integrity, "\(p)")) }
            try db.read { tx in
                let k = try CommitWorkload.committed(in: tx)
                v.recoveredCommit = k
                v.version = tx.version
                if k < v.oracle.lastAck {
                    v.violations.append(
                        Violation(
                            .durability,
                            "commit \(v.oracle.lastAck) was acknowledged but the file holds only commit \(k)"))
                }
                if k > v.oracle.lastIntent {
                    v.violations.append(
                        Violation(
                            .atomicity, "the file holds commit \(k), but only \(v.oracle.lastIntent) were attempted"))
                }
                if let acked = v.oracle.ackedVersions[k], acked != tx.version {
                    v.violations.append(
                        Violation(
                            kind: .atomicity,
                            text:
                                "version: commit \(k) was acknowledged as version \(acked), the file says \(tx.version)"
                        ))
                } else if !batched && k > 0 && v.oracle.ackedVersions[k] == nil && tx.version != k + 1 {
                    v.violations.append(
                        Violation(
                            kind: .atomicity,
                            text: "version: commit \(k) should be version \(k + 1), the file says \(tx.version)"))
                }
                if batched {
                    let split = v.oracle.ackedVersions.filter { ($0.value <= tx.version) != ($0.key <= k) }
                    if let (c, ver) = split.min(by: { $0.key < $1.key }) {
                        v.violations.append(
                            Violation(
                                .atomicity,
                                "commit \(c) was acknowledged in version \(ver), "
                                    + "but the file is version \(tx.version) holding commits up to \(k)"))
                    }
                }
                v.violations += try workload.bank.verify(in: tx, afterCommit: k)
                let expected = workload.expectedState(afterCommit: k)
                var found: [Int64: [UInt8]] = [:]
                if try tx.tableInfo(CommitWorkload.dataTable) != nil {
                    try tx.table(CommitWorkload.dataTable, key: Int64.self, value: [UInt8].self).scan { key, value in
                        found[key] = value
                        return true
                    }
                }
                if found != expected {
                    let missing = expected.keys.filter { found[$0] == nil }.sorted()
                    let extra = found.keys.filter { expected[$0] == nil }.sorted()
                    let differ = expected.keys.filter { found[$0] != nil && found[$0] != expected[$0] }.sorted()
                    v.violations.append(
                        Violation(
                            .atomicity,
                            "state is not the state after commit \(k): "
                                + "\(missing.count) keys missing \(missing.prefix(5)), "
                                + "\(extra.count) unexpected \(extra.prefix(5)), "
                                + "\(differ.count) with other values \(differ.prefix(5))"))
                }
            }
        } catch {
            v.violations.append(Violation(kind: .harness, text: "reading the recovered file failed: \(error)"))
        }
        return v
    }
}
