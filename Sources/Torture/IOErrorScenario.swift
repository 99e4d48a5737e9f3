#if canImport(Glibc)
    import Glibc
#endif
import Engine
import Foundation
import SeededRandomness
import TortureSchema

/// FaultFS fails writes with EIO, runs out of space (ENOSPC past a quota), or fails an fsync
/// (and, as Linux does, forgets the unsynced data) while a writer commits. The engine must
/// report the error to its caller as a typed error (no crash, no signal), lose no
/// acknowledged commit, and once the fault clears the file must reopen, check clean, and take
/// new commits; a power cut afterwards must not lose what was acknowledged.
public struct IOErrorScenario: Scenario {
    public var name: String { "io-errors" }
    public init() {}

    static let faults = ["fsync-fail", "eio-write", "enospc", "fsync-fail-late", "edquot"]

    public func plannedCycles(_ profile: TortureProfile) -> Int { 20 * profile.scale }

    public func runCycle(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        let fault = IOErrorScenario.faults[index % IOErrorScenario.faults.count]
        if let missing = FaultFSMount.missingOutcome(name, mode: fault, cycle: index) { return missing }
        var outcome = CycleOutcome()
        var rng = SeededRandom(seed: seed)
        let backing = dir + "/backing", mnt = dir + "/mnt", oracle = dir + "/oracle.log"
        let workload = CommitWorkload(seed: seed)
        let fs = FaultFSMount.forCycle(dir, seed: seed, context: context)
        try fs.mount()
        defer { fs.unmount() }
        var violations: [Violation] = []
        func writer(upTo n: UInt64, _ tag: String) throws -> ChildProcess.Ending {
            let c = CrashCycle(dbPath: mnt + "/db.fief", oraclePath: oracle, seed: seed)
            let child = try ChildProcess(
                c.writer(maxCommit: n), environment: context.writerEnvironment,
                output: "\(dir)/writer-\(tag).out", label: "writer")
            return child.wait()
        }
        func output(_ tag: String) -> String {
            ((try? String(contentsOfFile: "\(dir)/writer-\(tag).out", encoding: .utf8)) ?? "").trimmingCharacters(
                in: .whitespacesAndNewlines)
        }
        let warm = UInt64.random(in: 5...20, using: &rng)
        if try writer(upTo: warm, "warm") != .exited(0) {
            violations.append(.harness("the writer failed before any fault: \(output("warm"))"))
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: backing + "/db.fief")[.size] as? UInt64) ?? 0
        switch fault {
        case "fsync-fail":
            try fs.ctl(["inject", "fsync-fail", "path=db.fief", "nth=\(Int.random(in: 1...6, using: &rng))", "once"])
        case "fsync-fail-late":
            // An even count hits a commit's second sync, after the select-bit flip.
            try fs.ctl(["inject", "fsync-fail", "path=db.fief", "nth=\(2 * Int.random(in: 1...4, using: &rng))", "once"]
            )
        case "eio-write":
            try fs.ctl([
                "inject", "eio", "op=write", "path=db.fief", "nth=\(Int.random(in: 1...20, using: &rng))", "once"
            ])
        default:
            let lockAndOracle: UInt64 = 64 << 10
            try fs.ctl([
                "inject", fault, "quota=\(size + lockAndOracle + UInt64.random(in: 8_192...200_000, using: &rng))"
            ])
        }
        outcome.faults += 1
        // A reader pins the current version while the faulted writer runs, so freed pages
        // cannot be reused and the file must grow into the quota: an engine that reuses its
        // free space well would otherwise never ask for more.
        var holder: ChildProcess?
        if fault == "enospc" || fault == "edquot" {
            let ready = dir + "/holder.ready"
            holder = try ChildProcess(
                .holdSnapshot(db: mnt + "/db.fief", ready: ready, seconds: 60),
                output: dir + "/holder.out", label: "snapshot holder")
            let deadline = Date().addingTimeInterval(10)
            while !FileManager.default.fileExists(atPath: ready) && Date() < deadline && holder!.isRunning {
                usleep(10_000)
            }
        }
        let faulted = try writer(upTo: warm + 200, "fault")
        if let holder {
            holder.kill9()
            _ = holder.wait()
        }
        let said = output("fault")
        switch faulted {
        case .signaled(let s):
            violations.append(.harness("under \(fault) the writer died of signal \(s) instead of getting an error"))
        case .exited(0):
            violations.append(.harness("under \(fault) the writer never saw an error (the fault did not fire?)"))
        case .exited(_):
            if !said.contains("fief torture writer:") {
                violations.append(.harness("under \(fault) the writer failed without a clear error: \(said)"))
            }
        }
        violations += try IOErrorAftermath(
            fault: fault, fs: fs,
            verify: { directory, _ in
                let v = RecoveryCheck.verify(dbPath: directory + "/db.fief", oraclePath: oracle, workload: workload)
                return (v.violations, v.recoveredCommit)
            },
            resume: { recovered in
                try writer(upTo: recovered + 10, "resume") == .exited(0)
                    ? nil : .harness("after the fault cleared, new commits failed: \(output("resume"))")
            }
        ).check()
        outcome.events.append(
            CycleEvent(
                fault, violations,
                "\(fault) cycle \(index): writer \(faulted), said: \(said.split(separator: "\n").last ?? "")"
            ))
        return outcome
    }
}
