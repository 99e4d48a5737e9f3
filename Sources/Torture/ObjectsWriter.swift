#if canImport(Glibc)
import Glibc
#endif
import Engine
import FiefObjects
import Foundation

/// The writer side of the `objects` scenario: commits `ObjectGraphWorkload` writes through
/// the object layer, logging each intent and acknowledgement to the oracle, until `maxCommit`.
/// With `schema` 2 it opens the file with schema 2's models (migrating it first if it is
/// still at schema 1) and goes on writing the same graph through them.
public struct ObjectsWriter {
    public let dbPath: String
    public let oraclePath: String
    public let workload: ObjectGraphWorkload
    public let maxCommit: UInt64
    public let schema: Int

    public init(dbPath: String, oraclePath: String, seed: UInt64, maxCommit: UInt64, schema: Int = 1) {
        self.dbPath = dbPath
        self.oraclePath = oraclePath
        workload = ObjectGraphWorkload(seed: seed)
        self.maxCommit = maxCommit
        self.schema = schema
    }

    public func run() throws {
        var configuration = schema == 2
            ? Configuration(path: dbPath, types: ObjectGraphWorkload.typesV2, schemaVersion: 2, migrationBlock: GraphV2.migrate)
            : Configuration(path: dbPath, types: ObjectGraphWorkload.types, schemaVersion: 1)
        // Half the seeds compact the file on every open (as Realm's shouldCompactOnOpen): a
        // writer killed later finds, and leaves, a compacted file.
        if workload.seed % 2 == 1 { configuration.shouldCompactOnOpen = { _, _ in true } }
        let store = try ObjectStore(TortureEncryption.configure(configuration))
        let ctx = store.context()
        let oracle = try OracleLog(path: oraclePath)
        var graph = workload.expected(afterCommit: try ObjectGraphWorkload.committed(in: ctx),
                                      migratedAt: schema == 2 ? try ObjectGraphWorkload.migratedAt(in: ctx) : nil)
        while true {
            var attempted: UInt64 = 0
            do {
                try ctx.write {
                    let i = try ObjectGraphWorkload.committed(in: ctx) + 1
                    // Roll back rather than commit an empty version.
                    guard i <= maxCommit else { throw Finished() }
                    attempted = i
                    try oracle.intent(i)
                    if schema == 2 {
                        try workload.write(commit: i, graph: graph, in: ctx, schema: GraphSchema2.self)
                    } else {
                        try workload.write(commit: i, graph: graph, in: ctx)
                    }
                }
            } catch is Finished {
                return
            }
            try oracle.ack(attempted, version: ctx.version)
            for op in workload.ops(forCommit: attempted, on: graph) { workload.apply(op, to: &graph) }
        }
    }

    /// Opens the file with schema version 2, whose migration labels every person; the
    /// migration is one write transaction, so a crash leaves all of it or none.
    public static func migrate(dbPath: String) throws {
        _ = try ObjectStore(TortureEncryption.configure(Configuration(path: dbPath, types: ObjectGraphWorkload.typesV2, schemaVersion: 2,
                                                                      migrationBlock: GraphV2.migrate)))
    }
}

private struct Finished: Error {}

/// What a crash left of an object graph, judged against the oracle: the file opens, the
/// engine's and the object layer's checks pass (links resolve, backlinks are the inverse of
/// links, indexes match rows, keys unique), every acknowledged commit is present, and the
/// graph equals the graph after exactly one commit k (last acknowledged <= k <= last
/// attempted). A file migrated to schema 2 must hold the migrated data too.
public enum ObjectRecoveryCheck {
    /// Random queries checked against the model after each recovery.
    static let queriesPerCheck = 12
    /// A verifier that takes longer has hung on the file.
    static let timeoutSeconds = 120.0

    /// What the verifier process reports.
    struct Report: Codable {
        var recoveredCommit: UInt64
        var violations: [String]
    }

    /// `verifyHere` in a child process (`fief torture objects-check`) with the writers'
    /// environment: it reads the recovered file with the object layer under test (a broken
    /// read path is caught as a broken write path is), and a trap or a hang on a damaged file
    /// is this cycle's violation, with the verifier's output kept, while the run goes on.
    public static func verify(dbPath: String, oraclePath: String, workload: ObjectGraphWorkload, environment: [String: String]) -> RecoveryVerdict {
        var v = RecoveryVerdict()
        let report = oraclePath + ".verdict.json", log = oraclePath + ".verifier.out"
        unlink(report)
        let ending: ChildProcess.Ending?
        do {
            let child = try ChildProcess(arguments: ["torture", "objects-check", "--db", dbPath, "--oracle", oraclePath, "--seed", String(workload.seed), "--report", report],
                                         environment: environment, output: log, label: "objects verifier")
            ending = child.wait(timeoutSeconds: timeoutSeconds)
        } catch {
            v.violations.append("the objects verifier did not start: \(error)")
            return v
        }
        let said = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").prefix(3).joined(separator: " / ")
        guard let ending else {
            v.violations.append("the objects verifier hung on \(dbPath) (killed after \(Int(timeoutSeconds)) s); see \(log)")
            return v
        }
        guard ending == .exited(0), let data = FileManager.default.contents(atPath: report), let r = try? JSONDecoder().decode(Report.self, from: data) else {
            v.violations.append("the objects verifier \(ending) on \(dbPath): \(said.prefix(400)); see \(log)")
            return v
        }
        v.recoveredCommit = r.recoveredCommit
        v.violations = r.violations
        return v
    }

    public static func writeReport(_ v: RecoveryVerdict, to path: String) throws {
        try JSONEncoder().encode(Report(recoveredCommit: v.recoveredCommit, violations: v.violations)).write(to: URL(fileURLWithPath: path))
    }

    /// The checks themselves, in this process (the verifier process runs them).
    public static func verifyHere(dbPath: String, oraclePath: String, workload: ObjectGraphWorkload) -> RecoveryVerdict {
        var v = RecoveryVerdict()
        do {
            v.oracle = try OracleLog.read(oraclePath)
        } catch {
            v.violations.append("oracle log unreadable: \(error)")
            return v
        }
        do {
            let db = try Database(path: dbPath, options: TortureEncryption.options(create: false))
            for p in try db.check().problems { v.violations.append("integrity: \(p)") }
            v.version = try db.latestVersion()
        } catch EngineError.fileNotFound where v.oracle.lastAck == 0 {
            return v
        } catch {
            v.violations.append("database does not open after the crash: \(error)")
            return v
        }
        do {
            guard let schema = try ObjectStore.storedSchemaVersion(at: dbPath, encryptionKey: TortureEncryption.key) else {
                if v.oracle.lastAck > 0 { v.violations.append("durability: \(v.oracle.lastAck) commits were acknowledged, but the file holds no object schema") }
                return v
            }
            let v2 = schema == 2
            let store = try ObjectStore(TortureEncryption.configure(Configuration(path: dbPath, types: v2 ? ObjectGraphWorkload.typesV2 : ObjectGraphWorkload.types,
                                                      schemaVersion: schema, readOnly: true)))
            let report = try store.check()
            for p in report.problems { v.violations.append("objects: \(p)") }
            let ctx = store.context()
            // Throwing reads: a damaged row is this cycle's violation, not the run's trap.
            let (k, diff, wrongAnswers) = try ctx.throwingReads {
                let k = try ObjectGraphWorkload.committed(in: ctx)
                let graph = workload.expected(afterCommit: k, migratedAt: v2 ? try ObjectGraphWorkload.migratedAt(in: ctx) : nil)
                let diff = try ObjectGraphWorkload.differences(ctx, graph, v2: v2)
                // Queries only on a graph that is right: a wrong graph is reported already.
                guard diff.isEmpty else { return (k, diff, [String]()) }
                return (k, diff, try GraphQuery.check(ctx, graph, v2: v2, seed: workload.seed ^ (k &* 0x9E37_79B9), count: ObjectRecoveryCheck.queriesPerCheck))
            }
            v.recoveredCommit = k
            if k < v.oracle.lastAck {
                v.violations.append("durability: commit \(v.oracle.lastAck) was acknowledged but the file holds only commit \(k)")
            }
            if k > v.oracle.lastIntent {
                v.violations.append("atomicity: the file holds commit \(k), but only \(v.oracle.lastIntent) were attempted")
            }
            for d in diff { v.violations.append("atomicity: graph is not the graph after commit \(k): \(d)") }
            for q in wrongAnswers { v.violations.append("queries at commit \(k): \(q)") }
        } catch {
            v.violations.append("reading the recovered object graph failed: \(error)")
        }
        return v
    }
}
