import Engine
import FiefObjects
import Foundation
import TortureSchema

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
        var violations: [Violation]
    }

    /// `verifyHere` in a child process (`ChildRole.objectsCheck`) with the writers'
    /// environment: it reads the recovered file with the object layer under test (a broken
    /// read path is caught as a broken write path is), and a trap or a hang on a damaged file
    /// is this cycle's violation, with the verifier's output kept, while the run goes on.
    public static func verify(
        dbPath: String, oraclePath: String, workload: ObjectGraphWorkload, environment: [String: String],
        cacheReopen: Bool = false
    ) -> RecoveryVerdict {
        var v = RecoveryVerdict()
        let report = oraclePath + ".verdict.json", log = oraclePath + ".verifier.out"
        unlink(report)
        let ending: ChildProcess.Ending?
        do {
            let child = try ChildProcess(
                .objectsCheck(
                    db: dbPath, oracle: oraclePath, seed: workload.seed, report: report, cacheReopen: cacheReopen),
                environment: environment, output: log, label: "objects verifier")
            ending = child.wait(timeoutSeconds: timeoutSeconds)
        } catch {
            v.violations.append(.harness("the objects verifier did not start: \(error)"))
            return v
        }
        let said = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").prefix(3).joined(
            separator: " / ")
        guard let ending else {
            v.violations.append(
                .harness("the objects verifier hung on \(dbPath) (killed after \(Int(timeoutSeconds)) s); see \(log)"))
            return v
        }
        guard ending == .exited(0), let data = FileManager.default.contents(atPath: report),
            let r = try? JSONDecoder().decode(Report.self, from: data)
        else {
            v.violations.append(
                .harness("the objects verifier \(ending) on \(dbPath): \(said.prefix(400)); see \(log)"))
            return v
        }
        v.recoveredCommit = r.recoveredCommit
        v.violations = r.violations
        return v
    }

    public static func writeReport(_ v: RecoveryVerdict, to path: String) throws {
        try JSONEncoder().encode(Report(recoveredCommit: v.recoveredCommit, violations: v.violations)).write(
            to: URL(fileURLWithPath: path))
    }

    /// The checks themselves, in this process (the verifier process runs them).
    /// After a cache reopen (`cacheReopen`), no file, or a file holding only the new cache
    /// store, is right too (see `GraphCache`).
    public static func verifyHere(
        dbPath: String, oraclePath: String, workload: ObjectGraphWorkload, cacheReopen: Bool = false
    ) -> RecoveryVerdict {
        var v = RecoveryVerdict(oraclePath: oraclePath)
        guard v.passed else { return v }
        if cacheReopen {
            if !FileManager.default.fileExists(atPath: dbPath) { return v }
            switch Result(catching: {
                try ObjectStore.storedSchemaVersion(at: dbPath, encryptionKey: TortureEncryption.key)
            }) {
            case .success(GraphCache.schemaVersion?):
                v.violations = GraphCache.verify(dbPath: dbPath)
                return v
            case .success(nil):
                // The new, empty store, killed before its schema's first commit.
                do {
                    let db = try Database(path: dbPath, options: TortureEncryption.options(create: false))
                    v.violations = try db.check().problems.map {
                        Violation(kind: .integrity, text: "cache store: integrity: \($0)")
                    }
                } catch {
                    v.violations.append(
                        Violation(
                            kind: .integrity, text: "cache store: does not open after the reopen was killed: \(error)"))
                }
                return v
            default: break
            }
        }
        do {
            let db = try Database(path: dbPath, options: TortureEncryption.options(create: false))
            for p in try db.check().problems { v.violations.append(Violation(.integrity, "\(p)")) }
            v.version = try db.latestVersion()
        } catch EngineError.fileNotFound where v.oracle.lastAck == 0 {
            return v
        } catch {
            v.violations.append(Violation(kind: .integrity, text: "database does not open after the crash: \(error)"))
            return v
        }
        do {
            guard let schema = try ObjectStore.storedSchemaVersion(at: dbPath, encryptionKey: TortureEncryption.key)
            else {
                if v.oracle.lastAck > 0 {
                    v.violations.append(
                        Violation(
                            .durability,
                            "\(v.oracle.lastAck) commits were acknowledged, but the file holds no object schema"))
                }
                return v
            }
            let v2 = schema == 2
            let store = try ObjectStore(
                TortureEncryption.configure(
                    Configuration(
                        path: dbPath, types: v2 ? ObjectGraphWorkload.typesV2 : ObjectGraphWorkload.types,
                        schemaVersion: schema, readOnly: true)))
            let report = try store.check()
            for p in report.problems { v.violations.append(.harness("objects: \(p)")) }
            let ctx = store.context()
            // Throwing reads: a damaged row is this cycle's violation, not the run's trap.
            let (k, diff, wrongAnswers) = try ctx.throwingReads {
                let k = try ObjectGraphWorkload.committed(in: ctx)
                let graph = workload.expected(
                    afterCommit: k, migratedAt: v2 ? try ObjectGraphWorkload.migratedAt(in: ctx) : nil)
                let diff = try ObjectGraphWorkload.differences(ctx, graph, v2: v2)
                // Queries only on a graph that is right: a wrong graph is reported already.
                guard diff.isEmpty else { return (k, diff, [String]()) }
                return (
                    k, diff,
                    try GraphQuery.check(
                        ctx, graph, v2: v2, seed: workload.seed ^ (k &* 0x9E37_79B9),
                        count: ObjectRecoveryCheck.queriesPerCheck)
                )
            }
            v.recoveredCommit = k
            if k < v.oracle.lastAck {
                v.violations.append(
                    Violation(
                        .durability, "commit \(v.oracle.lastAck) was acknowledged but the file holds only commit \(k)"))
            }
            if k > v.oracle.lastIntent {
                v.violations.append(
                    Violation(.atomicity, "the file holds commit \(k), but only \(v.oracle.lastIntent) were attempted"))
            }
            for d in diff {
                v.violations.append(Violation(.atomicity, "graph is not the graph after commit \(k): \(d)"))
            }
            for q in wrongAnswers { v.violations.append(.harness("queries at commit \(k): \(q)")) }
        } catch {
            v.violations.append(.harness("reading the recovered object graph failed: \(error)"))
        }
        return v
    }
}
