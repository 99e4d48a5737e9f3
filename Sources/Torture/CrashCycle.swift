import Engine
import Foundation
import TortureSchema

/// One crash-and-recover cycle on a database that survives across cycles: start a writer
/// process, let it die (at an armed crash point, or by SIGKILL after a seeded delay), then
/// reopen the file and verify it against the oracle.
public struct CrashCycle {
    public let dbPath: String
    public let oraclePath: String
    public let workload: CommitWorkload
    public let threads: Int
    public let logPath: String?
    /// Extra environment for the writer (e.g. FIEF_BROKEN to run a broken engine variant).
    public var environment: [String: String] = [:]
    /// The writer commits through `Database.batch` (see `CommitWriter`).
    public var batch = false

    /// Where the writer reads `workload.schedule` from, when it has one (`writeSchedule()`).
    public var schedulePath: String?

    public init(dbPath: String, oraclePath: String, seed: UInt64, threads: Int = 1, logPath: String? = nil) {
        self.init(
            dbPath: dbPath, oraclePath: oraclePath, workload: CommitWorkload(seed: seed), threads: threads,
            logPath: logPath)
    }

    public init(dbPath: String, oraclePath: String, workload: CommitWorkload, threads: Int = 1, logPath: String? = nil)
    {
        self.dbPath = dbPath
        self.oraclePath = oraclePath
        self.workload = workload
        self.threads = threads
        self.logPath = logPath
        if workload.schedule != nil { schedulePath = dbPath + ".schedule.json" }
    }

    /// A cycle whose writer can start at once: its schedule, if it has one, already written.
    static func scheduled(dbPath: String, oraclePath: String, workload: CommitWorkload) throws -> CrashCycle {
        let cycle = CrashCycle(dbPath: dbPath, oraclePath: oraclePath, workload: workload)
        try cycle.writeSchedule()
        return cycle
    }

    /// Writes the explicit commits the writer process is to make (none for a seeded workload).
    public func writeSchedule() throws {
        guard let schedulePath, let schedule = workload.schedule else { return }
        try JSONEncoder().encode(schedule).write(to: URL(fileURLWithPath: schedulePath))
    }

    public struct Outcome: Sendable {
        public var description: String
        public var verdict: RecoveryVerdict
        public var violations: [Violation] { verdict.violations }
    }

    func writer(maxCommit: UInt64, durability: Durability = .full) -> ChildRole {
        .writer(
            db: dbPath, oracle: oraclePath, seed: workload.seed, threads: threads, maxCommit: maxCommit,
            durability: durability, batch: batch, schedule: schedulePath)
    }

    func verify() -> RecoveryVerdict {
        RecoveryCheck.verify(dbPath: dbPath, oraclePath: oraclePath, workload: workload, batched: batch)
    }

    func committedNow() -> UInt64 {
        guard let db = try? Database(path: dbPath, options: TortureEncryption.options(create: false)) else { return 0 }
        return (try? db.read { try CommitWorkload.committed(in: $0) }) ?? 0
    }

    /// The writer dies the `nth` time it reaches `point`. Single-threaded, the commit it was
    /// making is known, so the exact version to expect is too.
    public func crash(at point: CrashPoint, nth: Int) throws -> Outcome {
        let before = committedNow()
        let child = try ChildProcess(
            // Batched, a version holds up to one commit per thread: allow enough for nth versions.
            writer(maxCommit: before + UInt64((nth + 3) * (batch ? threads : 1))),
            environment: environment.merging([CrashPoint.environmentVariable: "\(point.rawValue):\(nth)"]) { $1 },
            output: logPath, label: "writer")
        let ending = child.wait()
        var verdict = verify()
        if ending != .signaled(SIGKILL) {
            verdict.violations.append(
                .harness("writer armed at \(point.rawValue):\(nth) \(ending), but should have been killed there"))
        } else if threads == 1 {
            let dying = before + UInt64(nth)
            let expected = point.newVersionSurvivesProcessKill ? dying : dying - 1
            if verdict.recoveredCommit != expected {
                // More than expected: a commit the crash should have undone survived; fewer: one
                // that had reached the point of no return is gone.
                let kind: ViolationKind = verdict.recoveredCommit > expected ? .atomicity : .durability
                verdict.violations.append(
                    Violation(
                        kind,
                        "killed at \(point.rawValue) during commit \(dying): "
                            + "expected commit \(expected) after recovery, found \(verdict.recoveredCommit)"))
            }
        }
        return Outcome(description: "crash at \(point.rawValue):\(nth) from commit \(before)", verdict: verdict)
    }

    /// The writer is SIGKILLed `delayMicros` after it starts.
    public func kill(afterMicros delayMicros: UInt32) throws -> Outcome {
        let before = committedNow()
        let child = try ChildProcess(
            writer(maxCommit: UInt64.max / 2), environment: environment, output: logPath,
            label: "writer")
        usleep(delayMicros)
        child.kill9()
        let ending = child.wait()
        var verdict = verify()
        if case .exited(let code) = ending, code != 0 {
            verdict.violations.append(.harness("writer failed on its own before the kill (\(ending)); see its output"))
        }
        return Outcome(description: "SIGKILL after \(delayMicros / 1000) ms from commit \(before)", verdict: verdict)
    }
}
