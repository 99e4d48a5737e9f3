#if canImport(Glibc)
    import Glibc
#endif
import Engine
import FaultFS
import TortureSchema

/// The power cuts of one `power-cut` cycle on one Fief file: each cut's writer dies as its
/// `death` says, the power goes, and the backing file must recover every acknowledged commit;
/// where the dying commit's select-bit flip is known (written, synced or neither), the file
/// must also recover the commit that flip allows.
struct FiefPowerCuts: PowerCutEvents {
    /// What the commit that died may leave: the one before it, or (when its flip was written)
    /// itself too.
    struct Expectation {
        var dying: UInt64
        var flipWritten: Bool
        var flipSynced: Bool
    }
    struct Strike {
        var mode: String
        var description: String
        var expect: Expectation?
    }

    let cuts: [PowerCut]
    let dir: String
    let workload: CommitWorkload
    let environment: [String: String]
    /// The commit the file holds, as last recovered.
    var current: UInt64 = 0
    var oracle: String { dir + "/oracle.log" }

    init(cuts: [PowerCut], dir: String, workload: CommitWorkload, environment: [String: String]) {
        self.cuts = cuts
        self.dir = dir
        self.workload = workload
        self.environment = environment
    }

    var eventCount: Int { cuts.count }
    func faultfsSeed(_ e: Int) -> UInt64 { cuts[e].faultfsSeed }

    mutating func strike(_ e: Int, on fs: FaultFSMount, outcome: inout CycleOutcome) throws -> Strike? {
        let cut = cuts[e]
        guard let mode = PowerCutScenario.modes.first(where: { $0.name == cut.mode }) else {
            throw TortureError.invalid("unknown power-cut mode '\(cut.mode)'")
        }
        var cycle = CrashCycle(
            dbPath: fs.mountpoint + "/db.fief", oraclePath: oracle, workload: workload, threads: 1,
            logPath: "\(dir)/writer-\(e).out")
        cycle.environment = environment
        if e == 0 { try cycle.writeSchedule() }
        var expect: Expectation?
        switch cut.death {
        case .crashPoint:
            expect = try dieAtCrashPoint(cut, cycle: cycle, fs: fs, mode: mode)
            outcome.crashPoints.insert(cut.crashPoint ?? "")
        case .killBeforeSelectSync, .killBeforeDataSync:
            guard try warmUp(cycle, event: e, mode: mode.name, outcome: &outcome) else { return nil }
            expect = try killBeforeSync(cut, cycle: cycle, fs: fs, mode: mode, outcome: &outcome)
        case .running:
            try cutWhileRunning(cut, cycle: cycle, fs: fs, mode: mode)
        }
        return Strike(mode: mode.name, description: cut.description, expect: expect)
    }

    /// The writer kills itself the `nth` time it reaches the crash point, then the power goes.
    func dieAtCrashPoint(
        _ cut: PowerCut, cycle: CrashCycle, fs: FaultFSMount, mode: PowerCutMode
    ) throws -> Expectation {
        guard let p = cut.crashPoint.flatMap(CrashPoint.init(rawValue:)) else {
            throw TortureError.invalid("unknown crash point '\(cut.crashPoint ?? "")'")
        }
        let nth = cut.nth ?? 1
        let dying = current + UInt64(nth)
        let child = try ChildProcess(
            cycle.writer(maxCommit: dying + 2),
            environment: cycle.environment.merging([CrashPoint.environmentVariable: "\(p.rawValue):\(nth)"]) { $1 },
            output: cycle.logPath, label: "writer")
        _ = child.wait()
        try fs.cutPower(mode)
        return Expectation(dying: dying, flipWritten: p.selectFlipWritten, flipSynced: p.selectFlipDurable)
    }

    /// One commit before a FaultFS kill, outside its count: the first commit on a version whose
    /// flip no writer saw synced (as after the last cut) syncs once more before it writes.
    /// False when that commit failed (the failure is an event in `outcome`).
    mutating func warmUp(_ cycle: CrashCycle, event e: Int, mode: String, outcome: inout CycleOutcome) throws -> Bool {
        let warmUp = try ChildProcess(
            cycle.writer(maxCommit: current + 1), environment: cycle.environment,
            output: cycle.logPath.map { $0 + ".warm-up" }, label: "writer"
        ).wait()
        guard warmUp == .exited(0) else {
            outcome.events.append(
                CycleEvent(
                    mode, [.harness("its writer \(warmUp)")],
                    "power-cut event \(e + 1), the commit before the FaultFS kill"
                ))
            return false
        }
        current += 1
        return true
    }

    /// FaultFS kills the writer just before the select-bit sync (or the data sync) of the
    /// `nth` commit, then the power goes. A commit syncs the database twice: odd counts are
    /// data syncs, even ones the select-bit sync that follows the flip. Nil when the writer
    /// did not die that way (a harness event in `outcome`; the file is still judged).
    func killBeforeSync(
        _ cut: PowerCut, cycle: CrashCycle, fs: FaultFSMount, mode: PowerCutMode,
        outcome: inout CycleOutcome
    ) throws -> Expectation? {
        let select = cut.death == .killBeforeSelectSync
        let commits = cut.nth ?? 1
        let k = 2 * commits - (select ? 0 : 1)
        let dying = current + UInt64(commits)
        try fs.ctl(["inject", "kill-caller", "op=fsync", "path=db.fief", "nth=\(k)", "when=before", "once"])
        let child = try ChildProcess(
            cycle.writer(maxCommit: dying + 2),
            environment: cycle.environment, output: cycle.logPath, label: "writer")
        let ending = child.wait()
        try fs.cutPower(mode)
        outcome.crashPoints.insert(cut.death.rawValue)
        guard ending == .signaled(SIGKILL) else {
            outcome.events.append(
                CycleEvent(
                    mode.name, [.harness("FaultFS was to kill the writer at fsync \(k), but it \(ending)")],
                    cut.description
                ))
            return nil
        }
        return Expectation(dying: dying, flipWritten: select, flipSynced: false)
    }

    /// `threads` writer threads run; the power goes `delayMicros` in.
    func cutWhileRunning(
        _ cut: PowerCut, cycle: CrashCycle, fs: FaultFSMount, mode: PowerCutMode
    ) throws {
        let running = CrashCycle(
            dbPath: cycle.dbPath, oraclePath: oracle, workload: workload, threads: cut.threads ?? 1)
        let child = try ChildProcess(
            running.writer(maxCommit: UInt64.max / 2),
            environment: cycle.environment, output: cycle.logPath, label: "writer")
        usleep(cut.delayMicros ?? 0)
        try fs.cutPower(mode)
        child.kill9()
        _ = child.wait()
    }

    mutating func judge(_ e: Int, _ strike: Strike, backing: String) throws -> (event: CycleEvent, stop: Bool) {
        var verdict = RecoveryCheck.verify(dbPath: backing + "/db.fief", oraclePath: oracle, workload: workload)
        if let x = strike.expect, verdict.violations.isEmpty {
            verdict.violations += Self.flipViolations(x, recovered: verdict.recoveredCommit)
        }
        current = verdict.recoveredCommit
        return (CycleEvent(strike.mode, verdict.violations, strike.description), !verdict.violations.isEmpty)
    }

    /// A commit whose second sync returned is durable even if never acknowledged; one that
    /// never flipped the select bit is not there.
    static func flipViolations(_ x: Expectation, recovered k: UInt64) -> [Violation] {
        if x.flipSynced && k != x.dying {
            return [
                Violation(
                    kind: .durability,
                    text: "the select bit of commit \(x.dying) was synced, yet the file recovered commit \(k)")
            ]
        } else if !x.flipWritten && k != x.dying - 1 {
            return [
                Violation(
                    .atomicity, "commit \(x.dying) never flipped the select bit, yet the file recovered commit \(k)")
            ]
        } else if x.flipWritten && !x.flipSynced && k != x.dying && k != x.dying - 1 {
            return [Violation(.atomicity, "expected commit \(x.dying - 1) or \(x.dying), found \(k)")]
        }
        return []
    }
}
