#if canImport(Glibc)
import Glibc
#endif
import Engine
import Foundation
import SeededRandomness

/// The workload runs on a FaultFS mount; power is cut under each mode (drop-all, drop-random,
/// prefix, torn at 512 and 4096 bytes), either after a writer died at a crash point or while
/// writers are running. The backing directory then holds what a disk could hold after losing
/// power, and the database in it must recover: every acknowledged commit present (and every
/// commit whose second sync returned), exactly one committed version, a clean check.
public struct PowerCutScenario: Scenario {
    public var name: String { "power-cut" }
    public init() {}

    public static let modes: [(name: String, args: [String])] = [
        ("drop-all", ["--mode", "drop-all"]),
        ("drop-random", ["--mode", "drop-random"]),
        ("prefix", ["--mode", "prefix"]),
        ("torn-512", ["--mode", "torn", "--sector", "512"]),
        ("torn-4096", ["--mode", "torn", "--sector", "4096"]),
    ]
    /// Per cycle, on one file: a death at an engine crash point (rotating, so every point
    /// meets every mode within 30 cycles); FaultFS killing the writer just before a commit's
    /// select-bit sync (the flip written, not yet durable) and just before a data sync; then
    /// a cut while several writer threads run. The FaultFS kills need no help from the
    /// engine: they find the commit window from the outside, as they would in any database.
    static let eventsPerCycle = 4

    public func plannedCycles(_ profile: TortureProfile) -> Int { 20 * profile.scale }

    public func runCycle(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        var outcome = CycleOutcome()
        if let why = FaultFSMount.unavailableReason() {
            outcome.events.append(("no-fuse", ["power-cut cannot run on this machine: \(why)"], "power-cut cycle \(index)"))
            return outcome
        }
        var rng = SeededRandom(seed: seed)
        let mode = PowerCutScenario.modes[index % PowerCutScenario.modes.count]
        let backing = dir + "/backing", mnt = dir + "/mnt", oracle = dir + "/oracle.log"
        let workload = CommitWorkload(seed: seed)
        var current: UInt64 = 0   // the commit the file holds, as last recovered
        for e in 0..<PowerCutScenario.eventsPerCycle {
            let fs = FaultFSMount(backing: backing, mountpoint: mnt, seed: seed &+ UInt64(e), tracePath: "\(dir)/faultfs-trace-\(e).jsonl", model: context.options.fsModel)
            try fs.mount()
            defer { fs.unmount() }
            var cycle = CrashCycle(dbPath: mnt + "/db.fief", oraclePath: oracle, seed: seed, threads: 1, logPath: "\(dir)/writer-\(e).out")
            cycle.environment = context.writerEnvironment
            var description: String
            /// What the commit that died may leave: the one before it, or (when its flip was
            /// written) itself too.
            var expect: (dying: UInt64, flipWritten: Bool, flipSynced: Bool)?
            switch e {
            case 0:
                let p = CrashPoint.commitPoints[index % CrashPoint.commitPoints.count]
                let nth = Int.random(in: 1...8, using: &rng)
                let dying = current + UInt64(nth)
                let child = try ChildProcess(arguments: cycle.writerArguments(maxCommit: dying + 2),
                                             environment: cycle.environment.merging([CrashPoint.environmentVariable: "\(p.rawValue):\(nth)"]) { $1 },
                                             output: cycle.logPath, label: "writer")
                _ = child.wait()
                try fs.ctl(["power-cut"] + mode.args)
                description = "\(mode.name) power cut after a crash at \(p.rawValue):\(nth) (commit \(dying))"
                outcome.crashPoints.insert(p.rawValue)
                expect = (dying, p.selectFlipWritten, p.selectFlipDurable)
            case 1, 2:
                // A commit syncs the database twice: odd counts are data syncs, even ones the
                // select-bit sync that follows the flip. The first commit on a version whose
                // flip no writer saw synced (as after the last cut) syncs once more before it
                // writes, so one commit goes first, outside the count.
                let warmUp = try ChildProcess(arguments: cycle.writerArguments(maxCommit: current + 1), environment: cycle.environment,
                                              output: cycle.logPath.map { $0 + ".warm-up" }, label: "writer").wait()
                if warmUp != .exited(0) {
                    outcome.events.append((mode.name, ["its writer \(warmUp)"], "power-cut cycle \(index), the commit before the FaultFS kill"))
                    continue
                }
                current += 1
                let commits = Int.random(in: 1...6, using: &rng)
                let k = 2 * commits - (e == 1 ? 0 : 1)
                let dying = current + UInt64(commits)
                try fs.ctl(["inject", "kill-caller", "op=fsync", "path=db.fief", "nth=\(k)", "when=before", "once"])
                let child = try ChildProcess(arguments: cycle.writerArguments(maxCommit: dying + 2),
                                             environment: cycle.environment, output: cycle.logPath, label: "writer")
                let ending = child.wait()
                try fs.ctl(["power-cut"] + mode.args)
                let window = e == 1 ? "select-bit sync" : "data sync"
                description = "\(mode.name) power cut after FaultFS killed the writer before the \(window) of commit \(dying)"
                outcome.crashPoints.insert("faultfs-kill-before-\(e == 1 ? "select" : "data")-sync")
                if ending != .signaled(SIGKILL) {
                    outcome.events.append((mode.name, ["FaultFS was to kill the writer at fsync \(k), but it \(ending)"], description))
                    break
                }
                expect = (dying, e == 1, false)
            default:
                let threads = Int.random(in: 1...3, using: &rng)
                let child = try ChildProcess(arguments: CrashCycle(dbPath: mnt + "/db.fief", oraclePath: oracle, seed: seed, threads: threads).writerArguments(maxCommit: UInt64.max / 2),
                                             environment: cycle.environment, output: cycle.logPath, label: "writer")
                let delay = UInt32.random(in: 50_000...400_000, using: &rng)
                usleep(delay)
                try fs.ctl(["power-cut"] + mode.args)
                child.kill9()
                _ = child.wait()
                description = "\(mode.name) power cut \(delay / 1000) ms into a run of \(threads) writer threads"
            }
            outcome.faults += 1
            fs.unmount()
            var verdict = RecoveryCheck.verify(dbPath: backing + "/db.fief", oraclePath: oracle, workload: workload)
            if let x = expect, verdict.violations.isEmpty {
                // A commit whose second sync returned is durable even if never acknowledged;
                // one that never flipped the select bit is not there.
                let k = verdict.recoveredCommit
                if x.flipSynced && k != x.dying {
                    verdict.violations.append("the select bit of commit \(x.dying) was synced, yet the file recovered commit \(k)")
                } else if !x.flipWritten && k != x.dying - 1 {
                    verdict.violations.append("commit \(x.dying) never flipped the select bit, yet the file recovered commit \(k)")
                } else if x.flipWritten && !x.flipSynced && k != x.dying && k != x.dying - 1 {
                    verdict.violations.append("expected commit \(x.dying - 1) or \(x.dying), found \(k)")
                }
            }
            current = verdict.recoveredCommit
            outcome.events.append((mode.name, verdict.violations, description))
            if !verdict.violations.isEmpty { break }
        }
        return outcome
    }
}
