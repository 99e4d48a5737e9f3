import Engine
import FaultFS
import Foundation
import SeededRandomness
import TortureSchema

/// The operations that change files outside a commit: creating a database, `compact()` and
/// `writeCopy(to:)`. Each cycle commits (acknowledged, in the oracle), runs one operation in
/// a child process that dies at one of its crash points (rotating over them), checks what is
/// left, commits again and checks again. Every other cycle runs on a FaultFS mount instead:
/// the operation completes, more commits are acknowledged after it, and the power is cut
/// under a rotating mode. The path must open, check clean and hold exactly the acknowledged
/// state; a copy or a new file exists exactly when the crash point says it must.
public struct FileOperationsScenario: Scenario {
    public var name: String { "file-ops" }
    public init() {}

    typealias Operation = ChildRole.FileOperation

    static func points(_ op: Operation) -> [CrashPoint] {
        switch op {
        case .create: return CrashPoint.createPoints
        case .compact: return CrashPoint.compactPoints
        case .copy: return CrashPoint.writeCopyPoints
        }
    }

    public func plannedCycles(_ profile: TortureProfile) -> Int { 20 * profile.scale }

    public func runCycle(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        let plan = FileOperationsScenario.plan(cycle: index, seed: seed)
        if plan.mode != nil,
            let missing = FaultFSMount.missingOutcome("file-ops power cuts", mode: "no-fuse", cycle: index)
        {
            return missing
        }
        return try run(
            plan, dir: dir, workload: CommitWorkload(seed: seed), environment: context.writerEnvironment,
            model: context.options.fsModel)
    }

    /// One cycle of the scenario: commits, an operation (killed at a crash point, or let
    /// finish on a FaultFS mount and followed by a power cut), and commits after it.
    public struct Plan: Codable, Sendable, Equatable {
        public var operation: String
        /// The operation dies here (a process kill); nil: it finishes and the power is cut.
        public var crashPoint: String?
        /// The power-cut mode, when the cycle runs on FaultFS.
        public var mode: String?
        public var faultfsSeed: UInt64?
        /// Commits before the operation, and after it.
        public var before: UInt64
        public var after: UInt64

        public var description: String {
            if let p = crashPoint { return "\(operation) killed at \(p) after commit \(before)" }
            return "\(mode ?? "?") power cut after \(operation) returned and more commits were acknowledged"
        }
    }

    /// Cycle `index`'s plan, from its seed: even cycles kill the operation at one of its
    /// crash points (rotating), odd ones cut the power after it finished.
    public static func plan(cycle index: Int, seed: UInt64) -> Plan {
        var rng = SeededRandom(seed: seed)
        let op = Operation.allCases[(index / 2) % Operation.allCases.count]
        if index % 2 == 0 {
            let points = FileOperationsScenario.points(op)
            let first = UInt64(Int.random(in: 2...8, using: &rng))
            return Plan(
                operation: op.rawValue,
                crashPoint: points[(index / 2 / Operation.allCases.count) % points.count].rawValue,
                before: first, after: UInt64(Int.random(in: 1...4, using: &rng)))
        }
        let first = UInt64(Int.random(in: 2...6, using: &rng))
        return Plan(
            operation: op.rawValue, mode: PowerCutScenario.modes[(index / 2) % PowerCutScenario.modes.count].name,
            faultfsSeed: seed,
            before: first, after: UInt64(Int.random(in: 1...4, using: &rng)))
    }

    func run(
        _ plan: Plan, dir: String, workload: CommitWorkload, environment: [String: String], model: PersistenceModel
    ) throws -> CycleOutcome {
        guard let op = Operation(rawValue: plan.operation) else {
            throw TortureError.invalid("unknown file operation '\(plan.operation)'")
        }
        if let raw = plan.crashPoint {
            guard let point = CrashPoint(rawValue: raw) else {
                throw TortureError.invalid("unknown crash point '\(raw)'")
            }
            return try killCycle(op, point, plan, dir: dir, workload: workload, environment: environment)
        }
        return try powerCutCycle(op, plan, dir: dir, workload: workload, environment: environment, model: model)
    }

    func commit(
        _ db: String, _ oracle: String, _ workload: CommitWorkload, upTo maxCommit: UInt64,
        _ environment: [String: String], log: String
    ) throws -> Violation? {
        let w = try CrashCycle.scheduled(dbPath: db, oraclePath: oracle, workload: workload)
        let child = try ChildProcess(
            w.writer(maxCommit: maxCommit), environment: environment, output: log, label: "writer")
        let ending = child.wait()
        return ending == .exited(0)
            ? nil : .harness("the writer \(ending) while committing up to \(maxCommit); see \(log)")
    }

    func operation(_ op: Operation, db: String, dest: String) -> ChildRole {
        .fileOperation(op, db: db, dest: op == .copy ? dest : nil)
    }

    func killCycle(
        _ op: Operation, _ point: CrashPoint, _ plan: Plan, dir: String, workload: CommitWorkload,
        environment: [String: String]
    ) throws -> CycleOutcome {
        var outcome = CycleOutcome()
        let db = dir + "/db.fief", oracle = dir + "/oracle.log", dest = dir + "/copy.fief", fresh = dir + "/new.fief"
        let first = plan.before
        if let e = try commit(db, oracle, workload, upTo: first, environment, log: dir + "/writer-0.out") {
            outcome.events.append(CycleEvent("file-ops-\(op.rawValue)", [e], "commits before \(op.rawValue)"))
            return outcome
        }
        let target = op == .create ? fresh : db
        let child = try ChildProcess(
            operation(op, db: target, dest: dest),
            environment: environment.merging([CrashPoint.environmentVariable: "\(point.rawValue):1"]) { $1 },
            output: dir + "/op.out", label: op.rawValue)
        let ending = child.wait()
        let description = plan.description
        outcome.crashPoints.insert(point.rawValue)
        var violations: [Violation] = []
        if ending != .signaled(SIGKILL) {
            violations.append(
                .harness(
                    "\(op.rawValue) armed at \(point.rawValue) \(ending), but should have died there; see \(dir)/op.out"
                ))
        }
        violations += RecoveryCheck.verify(dbPath: db, oraclePath: oracle, workload: workload).violations
        violations += checkResult(
            op, point: point, db: db, dest: dest, fresh: fresh, copiedCommit: first, workload: workload,
            completed: false)
        if violations.isEmpty {
            // Commits after the operation, on whatever file it left.
            if let e = try commit(
                db, oracle, workload, upTo: first + plan.after, environment, log: dir + "/writer-1.out")
            {
                violations.append(e)
            }
            violations += RecoveryCheck.verify(dbPath: db, oraclePath: oracle, workload: workload).violations
        }
        outcome.events.append(CycleEvent("file-ops-\(op.rawValue)", violations, description))
        return outcome
    }

    /// What the operation's own file must look like: a copy or a new file exists exactly when
    /// the point says it is in place (or the operation completed), and then opens, checks
    /// clean and (a copy) holds the acknowledged state.
    func checkResult(
        _ op: Operation, point: CrashPoint?, db: String, dest: String, fresh: String, copiedCommit: UInt64,
        workload: CommitWorkload, completed: Bool
    ) -> [Violation] {
        let mustExist = completed || (point?.newVersionSurvivesProcessKill ?? false)
        /// A violation when `path` is there and must not be, or the other way round.
        func misplaced(_ path: String, by call: String, as thing: String) -> Violation? {
            let exists = access(path, F_OK) == 0
            guard exists != mustExist else { return nil }
            return .harness(
                "\(call) \(completed ? "returned" : "died at \(point!.rawValue)"): "
                    + "the \(thing) \(exists ? "exists" : "is missing")")
        }
        switch op {
        case .compact:
            return []
        case .copy:
            if let v = misplaced(dest, by: "writeCopy", as: "destination") { return [v] }
            guard mustExist else { return [] }
            // The copy holds exactly the commit that was current when it was made.
            let copyOracle = dest + ".oracle"
            guard
                FileManager.default.createFile(
                    atPath: copyOracle, contents: Data("intent \(copiedCommit)\nack \(copiedCommit)\n".utf8))
            else {
                return [
                    .harness(
                        "copy: the check could not write its oracle \(copyOracle) (\(String(cString: strerror(errno))))"
                    )
                ]
            }
            defer { unlink(copyOracle) }
            return RecoveryCheck.verify(dbPath: dest, oraclePath: copyOracle, workload: workload).violations.map {
                $0.prefixed("copy")
            }
        case .create:
            if let v = misplaced(fresh, by: "create", as: "file") { return [v] }
            guard mustExist else { return [] }
            do {
                let d = try Database(path: fresh, options: TortureEncryption.options(create: false))
                let r = try d.check()
                let tables = try d.read { try $0.tableNames() }
                return r.problems.map { .harness("new file: \($0)") }
                    + (tables.isEmpty ? [] : [.harness("new file: holds tables \(tables)")])
            } catch {
                return [Violation(kind: .integrity, text: "new file does not open: \(error)")]
            }
        }
    }

    func powerCutCycle(
        _ op: Operation, _ plan: Plan, dir: String, workload: CommitWorkload, environment: [String: String],
        model: PersistenceModel
    ) throws -> CycleOutcome {
        var outcome = CycleOutcome()
        guard let mode = PowerCutScenario.modes.first(where: { $0.name == plan.mode }) else {
            throw TortureError.invalid("unknown power-cut mode '\(plan.mode ?? "")'")
        }
        let backing = dir + "/backing", mnt = dir + "/mnt", oracle = dir + "/oracle.log"
        let fs = FaultFSMount(
            backing: backing, mountpoint: mnt, seed: plan.faultfsSeed ?? 0, tracePath: dir + "/faultfs-trace.jsonl",
            model: model)
        try fs.mount()
        defer { fs.unmount() }
        let first = plan.before
        let description = plan.description
        if let e = try commit(mnt + "/db.fief", oracle, workload, upTo: first, environment, log: dir + "/writer-0.out")
        {
            outcome.events.append(CycleEvent("file-ops-\(mode.name)", [e], description))
            return outcome
        }
        let target = op == .create ? mnt + "/new.fief" : mnt + "/db.fief"
        let child = try ChildProcess(
            operation(op, db: target, dest: mnt + "/copy.fief"), environment: environment,
            output: dir + "/op.out", label: op.rawValue)
        let ending = child.wait()
        guard ending == .exited(0) else {
            outcome.events.append(
                CycleEvent(
                    "file-ops-\(mode.name)", [.harness("\(op.rawValue) \(ending); see \(dir)/op.out")], description))
            return outcome
        }
        if let e = try commit(
            mnt + "/db.fief", oracle, workload, upTo: first + plan.after, environment, log: dir + "/writer-1.out")
        {
            outcome.events.append(CycleEvent("file-ops-\(mode.name)", [e], description))
            return outcome
        }
        try fs.cutPower(mode)
        fs.unmount()
        outcome.faults += 1
        outcome.crashPoints.insert("\(op.rawValue)-then-power-cut")
        var violations = RecoveryCheck.verify(dbPath: backing + "/db.fief", oraclePath: oracle, workload: workload)
            .violations
        violations += checkResult(
            op, point: nil, db: backing + "/db.fief", dest: backing + "/copy.fief", fresh: backing + "/new.fief",
            copiedCommit: first, workload: workload, completed: true)
        outcome.events.append(CycleEvent("file-ops-\(mode.name)", violations, description))
        return outcome
    }
}
