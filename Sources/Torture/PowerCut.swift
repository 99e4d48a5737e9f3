#if canImport(Glibc)
    import Glibc
#endif
import Engine
import FaultFS
import Foundation
import TortureSchema

/// One power cut of the `power-cut` scenario: how its writer dies, then which FaultFS cut
/// mode takes what was unsynced. The scenario draws four per cycle from its seed; a replay
/// lists them.
public struct PowerCut: Codable, Sendable, Equatable, CustomStringConvertible {
    public enum Death: String, Codable, Sendable {
        /// The writer kills itself the `nth` time it reaches `crashPoint`.
        case crashPoint = "crash-point"
        /// FaultFS kills the writer just before the select-bit sync (or the data sync) of the
        /// `nth` commit after a warm-up commit.
        case killBeforeSelectSync = "faultfs-kill-before-select-sync"
        case killBeforeDataSync = "faultfs-kill-before-data-sync"
        /// `threads` writer threads run; the power goes `delayMicros` in (timing-dependent).
        case running
    }
    public var death: Death
    public var crashPoint: String?
    public var nth: Int?
    public var threads: Int?
    public var delayMicros: UInt32?
    /// A `PowerCutScenario.modes` name.
    public var mode: String
    /// The mount's seed (what drop-random and torn cuts draw from).
    public var faultfsSeed: UInt64

    public var isDeterministic: Bool { death != .running }

    public var description: String {
        switch death {
        case .crashPoint: return "\(mode) power cut after a crash at \(crashPoint ?? "?"):\(nth ?? 1)"
        case .killBeforeSelectSync:
            return
                "\(mode) power cut after FaultFS killed the writer before "
                + "the select-bit sync of commit \(nth ?? 1) of the run"
        case .killBeforeDataSync:
            return
                "\(mode) power cut after FaultFS killed the writer "
                + "before the data sync of commit \(nth ?? 1) of the run"
        case .running:
            return "\(mode) power cut \((delayMicros ?? 0) / 1000) ms into a run of \(threads ?? 1) writer threads"
        }
    }

    /// Cuts the power under each event in turn on one file in `dir` (a FaultFS mount of
    /// `dir/backing`), checking the backing file after each; stops at the first violation.
    static func run(
        _ cuts: [PowerCut], dir: String, workload: CommitWorkload, environment: [String: String],
        model: PersistenceModel
    ) throws -> CycleOutcome {
        var outcome = CycleOutcome()
        let backing = dir + "/backing", mnt = dir + "/mnt", oracle = dir + "/oracle.log"
        var current: UInt64 = 0  // the commit the file holds, as last recovered
        for (e, cut) in cuts.enumerated() {
            guard let mode = PowerCutScenario.modes.first(where: { $0.name == cut.mode }) else {
                throw TortureError.invalid("unknown power-cut mode '\(cut.mode)'")
            }
            let fs = FaultFSMount(
                backing: backing, mountpoint: mnt, seed: cut.faultfsSeed, tracePath: "\(dir)/faultfs-trace-\(e).jsonl",
                model: model)
            try fs.mount()
            defer { fs.unmount() }
            var cycle = CrashCycle(
                dbPath: mnt + "/db.fief", oraclePath: oracle, workload: workload, threads: 1,
                logPath: "\(dir)/writer-\(e).out")
            cycle.environment = environment
            if e == 0 { try cycle.writeSchedule() }
            let description = cut.description
            /// What the commit that died may leave: the one before it, or (when its flip was
            /// written) itself too.
            var expect: (dying: UInt64, flipWritten: Bool, flipSynced: Bool)?
            switch cut.death {
            case .crashPoint:
                guard let p = cut.crashPoint.flatMap(CrashPoint.init(rawValue:)) else {
                    throw TortureError.invalid("unknown crash point '\(cut.crashPoint ?? "")'")
                }
                let nth = cut.nth ?? 1
                let dying = current + UInt64(nth)
                let child = try ChildProcess(
                    cycle.writer(maxCommit: dying + 2),
                    environment: cycle.environment.merging([CrashPoint.environmentVariable: "\(p.rawValue):\(nth)"]) {
                        $1
                    },
                    output: cycle.logPath, label: "writer")
                _ = child.wait()
                try fs.ctl(["power-cut"] + mode.args)
                outcome.crashPoints.insert(p.rawValue)
                expect = (dying, p.selectFlipWritten, p.selectFlipDurable)
            case .killBeforeSelectSync, .killBeforeDataSync:
                // A commit syncs the database twice: odd counts are data syncs, even ones the
                // select-bit sync that follows the flip. The first commit on a version whose
                // flip no writer saw synced (as after the last cut) syncs once more before it
                // writes, so one commit goes first, outside the count.
                let warmUp = try ChildProcess(
                    cycle.writer(maxCommit: current + 1), environment: cycle.environment,
                    output: cycle.logPath.map { $0 + ".warm-up" }, label: "writer"
                ).wait()
                if warmUp != .exited(0) {
                    outcome.events.append(
                        CycleEvent(
                            mode.name, [.harness("its writer \(warmUp)")],
                            "power-cut event \(e + 1), the commit before the FaultFS kill"
                        ))
                    continue
                }
                current += 1
                let select = cut.death == .killBeforeSelectSync
                let commits = cut.nth ?? 1
                let k = 2 * commits - (select ? 0 : 1)
                let dying = current + UInt64(commits)
                try fs.ctl(["inject", "kill-caller", "op=fsync", "path=db.fief", "nth=\(k)", "when=before", "once"])
                let child = try ChildProcess(
                    cycle.writer(maxCommit: dying + 2),
                    environment: cycle.environment, output: cycle.logPath, label: "writer")
                let ending = child.wait()
                try fs.ctl(["power-cut"] + mode.args)
                outcome.crashPoints.insert(cut.death.rawValue)
                if ending != .signaled(SIGKILL) {
                    outcome.events.append(
                        CycleEvent(
                            mode.name, [.harness("FaultFS was to kill the writer at fsync \(k), but it \(ending)")],
                            description
                        ))
                    break
                }
                expect = (dying, select, false)
            case .running:
                let threads = cut.threads ?? 1
                let child = try ChildProcess(
                    CrashCycle(
                        dbPath: mnt + "/db.fief", oraclePath: oracle, workload: workload, threads: threads
                    )
                    .writer(maxCommit: UInt64.max / 2),
                    environment: cycle.environment, output: cycle.logPath, label: "writer")
                usleep(cut.delayMicros ?? 0)
                try fs.ctl(["power-cut"] + mode.args)
                child.kill9()
                _ = child.wait()
            }
            outcome.faults += 1
            fs.unmount()
            var verdict = RecoveryCheck.verify(dbPath: backing + "/db.fief", oraclePath: oracle, workload: workload)
            if let x = expect, verdict.violations.isEmpty {
                // A commit whose second sync returned is durable even if never acknowledged;
                // one that never flipped the select bit is not there.
                let k = verdict.recoveredCommit
                if x.flipSynced && k != x.dying {
                    verdict.violations.append(
                        Violation(
                            kind: .durability,
                            text: "the select bit of commit \(x.dying) was synced, yet the file recovered commit \(k)"))
                } else if !x.flipWritten && k != x.dying - 1 {
                    verdict.violations.append(
                        Violation(
                            .atomicity,
                            "commit \(x.dying) never flipped the select bit, yet the file recovered commit \(k)"))
                } else if x.flipWritten && !x.flipSynced && k != x.dying && k != x.dying - 1 {
                    verdict.violations.append(
                        Violation(.atomicity, "expected commit \(x.dying - 1) or \(x.dying), found \(k)"))
                }
            }
            current = verdict.recoveredCommit
            outcome.events.append(CycleEvent(mode.name, verdict.violations, description))
            if !verdict.violations.isEmpty { break }
        }
        return outcome
    }
}
