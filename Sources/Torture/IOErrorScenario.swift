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
        try FiefIOErrorCycle.run(
            name, cycle: index, faults: IOErrorScenario.faults, seed: seed, dir: dir, context: context
        ) { fault in
            FiefIOErrorCycle(fault: fault, seed: seed, dir: dir, environment: context.writerEnvironment)
        }
    }
}

/// One `io-errors` cycle on a Fief file: a failure must reach the writer as a typed error
/// (`fief torture writer:` and its message), never a signal.
struct FiefIOErrorCycle: IOErrorCycle {
    var fault: IOFault
    let seed: UInt64
    let dir: String
    let environment: [String: String]

    var db: String { fault.fs.mountpoint + "/db.fief" }
    var oracle: String { dir + "/oracle.log" }
    var workload: CommitWorkload { CommitWorkload(seed: seed) }

    var writers: TaggedWriters {
        TaggedWriters(
            cycle: CrashCycle(dbPath: db, oraclePath: oracle, seed: seed), dir: dir, environment: environment)
    }

    func warmUp(upTo commit: UInt64) throws -> Violation? {
        try writers.start(upTo: commit, "warm").wait() == .exited(0)
            ? nil : .harness("the writer failed before any fault: \(writers.output("warm"))")
    }

    mutating func inject() throws {
        let size =
            (try? FileManager.default.attributesOfItem(atPath: fault.fs.backing + "/db.fief")[.size] as? UInt64) ?? 0
        switch fault.name {
        case "fsync-fail":
            try fault.fs.ctl([
                "inject", "fsync-fail", "path=db.fief", "nth=\(Int.random(in: 1...6, using: &fault.rng))", "once"
            ])
        case "fsync-fail-late":
            // An even count hits a commit's second sync, after the select-bit flip.
            try fault.fs.ctl([
                "inject", "fsync-fail", "path=db.fief", "nth=\(2 * Int.random(in: 1...4, using: &fault.rng))", "once"
            ])
        case "eio-write":
            try fault.fs.ctl([
                "inject", "eio", "op=write", "path=db.fief", "nth=\(Int.random(in: 1...20, using: &fault.rng))", "once"
            ])
        default:
            let lockAndOracle: UInt64 = 64 << 10
            try fault.fs.ctl([
                "inject", fault.name,
                "quota=\(size + lockAndOracle + UInt64.random(in: 8_192...200_000, using: &fault.rng))"
            ])
        }
    }

    /// For a quota, a reader pins the current version while the faulted writer runs, so freed
    /// pages cannot be reused and the file must grow into the quota: an engine that reuses its
    /// free space well would otherwise never ask for more.
    func runFaulted(upTo commit: UInt64) throws -> ChildProcess.Ending {
        var holder: ChildProcess?
        if fault.name == "enospc" || fault.name == "edquot" {
            let ready = dir + "/holder.ready"
            holder = try ChildProcess(
                .holdSnapshot(db: db, ready: ready, seconds: 60), output: dir + "/holder.out", label: "snapshot holder")
            holder!.awaitFile(ready, pollMicros: 10_000)
        }
        let faulted = try writers.start(upTo: commit, "fault").wait()
        if let holder {
            holder.kill9()
            _ = holder.wait()
        }
        return faulted
    }

    func judge(_ faulted: ChildProcess.Ending, outcome: inout CycleOutcome) -> [Violation] {
        switch faulted {
        case .signaled(let s):
            return [.harness("under \(fault.name) the writer died of signal \(s) instead of getting an error")]
        case .exited(0):
            return [.harness("under \(fault.name) the writer never saw an error (the fault did not fire?)")]
        case .exited(_):
            let said = writers.output("fault")
            return said.contains("fief torture writer:")
                ? [] : [.harness("under \(fault.name) the writer failed without a clear error: \(said)")]
        }
    }

    func describe(_ faulted: ChildProcess.Ending) -> String {
        let said = writers.output("fault").split(separator: "\n").last ?? ""
        return "\(fault.name) cycle \(fault.cycle): writer \(faulted), said: \(said)"
    }

    func verify(_ directory: String, tag: String) -> RecoveryVerdict {
        RecoveryCheck.verify(dbPath: directory + "/db.fief", oraclePath: oracle, workload: workload)
    }

    func resume(upTo commit: UInt64) throws -> Violation? {
        try writers.start(upTo: commit, "resume").wait() == .exited(0)
            ? nil : .harness("after the fault cleared, new commits failed: \(writers.output("resume"))")
    }
}
