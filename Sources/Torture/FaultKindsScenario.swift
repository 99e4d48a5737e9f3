#if canImport(Glibc)
    import Glibc
#endif
import Engine
import FaultFS
import Foundation
import SeededRandomness
import TortureSchema

/// The FaultFS faults the other scenarios do not use, one per cycle in turn, each on a
/// committing writer and followed by a power cut:
///
/// - `short-write`: a write returns fewer bytes than asked. The engine must finish the write
///   or fail with a typed error; never treat it as complete.
/// - `latency`: random delays on every operation while a writer is SIGKILLed at a random
///   time. Timing changes, verdicts must not.
/// - `bitflip`: reads return flipped bits (on a cold page cache). A reader verifying
///   checksums must get a typed error or exactly the committed data, never other data. The
///   same reader without verification is run too, and what it got is noted.
/// - `kill-caller`: FaultFS kills the writer at the n-th write or sync of the file, before
///   or after it takes effect, walking every syscall of the first commits over the cycles.
/// - `fsync-lie`: fsync succeeds but makes nothing durable, then the power is cut. The
///   suite must see acknowledged commits lost and name the lying fsync as the cause; that
///   loss is the expected outcome (it shows what a lying disk does to any engine), and the
///   absence of a loss is the violation.
public struct FaultKindsScenario: Scenario {
    public var name: String { "faults" }
    public init() {}

    public static let kinds = ["short-write", "latency", "bitflip", "kill-caller", "fsync-lie"]

    public func plannedCycles(_ profile: TortureProfile) -> Int { 10 * profile.scale }

    public func runCycle(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        let plan = FaultKindsScenario.plan(cycle: index, seed: seed)
        if let missing = FaultFSMount.missingOutcome(name, mode: plan.kind, cycle: index) { return missing }
        var outcome = try run(
            plan, dir: dir, seed: seed, environment: context.writerEnvironment, model: context.options.fsModel)
        if let e = outcome.events.indices.last {
            outcome.events[e].description = "\(plan.kind) cycle \(index)" + outcome.events[e].description
        }
        return outcome
    }

    /// One cycle: commits, one fault on the file while a writer (or reader) works, a power cut.
    public struct Plan: Codable, Sendable, Equatable {
        public var kind: String
        /// Commits before the fault.
        public var warm: UInt64
        public var faultfsSeed: UInt64
        /// short-write: the write that comes up short; kill-caller: the write or sync killed.
        public var nth: Int?
        /// kill-caller: before or after the operation takes effect.
        public var when: String?
        /// latency: how long the writer runs before its SIGKILL.
        public var killAfterMicros: UInt32?
        /// bitflip: the rounds run, each on a fresh mount (a cold page cache).
        public var rounds: [Int]?
        /// fsync-lie: commits made under the lie.
        public var commitsUnderLie: UInt64?
    }

    /// Cycle `index`'s plan, from its seed: the kinds in turn.
    public static func plan(cycle index: Int, seed: UInt64) -> Plan {
        var rng = SeededRandom(seed: seed)
        let kind = kinds[index % kinds.count]
        var p = Plan(kind: kind, warm: UInt64.random(in: 3...10, using: &rng), faultfsSeed: seed)
        switch kind {
        case "short-write": p.nth = Int.random(in: 1...3, using: &rng)
        case "latency": p.killAfterMicros = UInt32.random(in: 100_000...600_000, using: &rng)
        case "kill-caller":
            p.nth = 1 + (index / kinds.count) % 12
            p.when = (index / kinds.count / 12) % 2 == 0 ? "before" : "after"
        case "bitflip": p.rounds = Array(0..<12)
        default: p.commitsUnderLie = UInt64.random(in: 3...8, using: &rng)
        }
        return p
    }

    func run(_ plan: Plan, dir: String, seed: UInt64, environment: [String: String], model: PersistenceModel) throws
        -> CycleOutcome
    {
        var outcome = CycleOutcome()
        let kind = plan.kind
        let backing = dir + "/backing", mnt = dir + "/mnt", oracle = dir + "/oracle.log"
        let workload = CommitWorkload(seed: seed)
        var fs = FaultFSMount(
            backing: backing, mountpoint: mnt, seed: plan.faultfsSeed, tracePath: dir + "/faultfs-trace.jsonl",
            model: model)
        try fs.mount()
        defer { fs.unmount() }
        var violations: [Violation] = []
        var notes: [String] = []
        func writer(upTo n: UInt64, _ tag: String) throws -> ChildProcess {
            let c = CrashCycle(dbPath: mnt + "/db.fief", oraclePath: oracle, seed: seed)
            return try ChildProcess(
                c.writer(maxCommit: n), environment: environment,
                output: "\(dir)/writer-\(tag).out", label: "writer")
        }
        func said(_ tag: String) -> String {
            ((try? String(contentsOfFile: "\(dir)/writer-\(tag).out", encoding: .utf8)) ?? "").trimmingCharacters(
                in: .whitespacesAndNewlines)
        }
        let warm = plan.warm
        if try writer(upTo: warm, "warm").wait() != .exited(0) {
            outcome.events.append(
                CycleEvent(kind, [.harness("the writer failed before any fault: \(said("warm"))")], ""))
            return outcome
        }
        var cut = "drop-random"
        switch kind {
        case "short-write":
            // Within the next commit, which is the last: later commits could free a damaged
            // page before anything looks at it.
            try fs.ctl(["inject", "short-write", "path=db.fief", "nth=\(plan.nth ?? 1)", "once"])
            let ending = try writer(upTo: warm + 1, "fault").wait()
            if case .signaled(let s) = ending {
                violations.append(.harness("after a short write the writer died of signal \(s)"))
            }
            if case .exited(let c) = ending, c != 0, !said("fault").contains("fief torture writer:") {
                violations.append(
                    .harness("after a short write the writer failed without a clear error: \(said("fault"))"))
            }
            notes.append("short write: writer \(ending)")
        case "latency":
            try fs.ctl(["inject", "latency", "op=any", "min-ms=0", "max-ms=3", "probability=0.3"])
            let child = try writer(upTo: UInt64.max / 2, "fault")
            usleep(plan.killAfterMicros ?? 0)
            child.kill9()
            _ = child.wait()
            cut = "torn-4096"
        case "kill-caller":
            let nth = plan.nth ?? 1, when = plan.when ?? "before"
            try fs.ctl(["inject", "kill-caller", "op=write,fsync", "path=db.fief", "nth=\(nth)", "when=\(when)", "once"]
            )
            let ending = try writer(upTo: warm + 20, "fault").wait()
            if ending != .signaled(SIGKILL) {
                violations.append(
                    .harness("FaultFS was to kill the writer at write/sync \(nth) (\(when)), but it \(ending)"))
            }
            outcome.crashPoints.insert("kill-caller-\(when)-\(nth)")
            cut = "prefix"
        case "bitflip":
            // Several rounds, each on a cold page cache (a fresh mount), so the reader's pages
            // come through FaultFS's reads; each round flips different bits.
            // Whether a flip lands in bytes a reader uses depends on FUSE's read sizes, which
            // vary with timing: twelve rounds make a reader that uses damaged data show it.
            for round in plan.rounds ?? [] {
                fs.unmount()
                fs = FaultFSMount(
                    backing: backing, mountpoint: mnt, seed: plan.faultfsSeed &+ UInt64(round) &+ 1,
                    tracePath: dir + "/faultfs-trace-\(round).jsonl", model: model)
                try fs.mount()
                try fs.ctl(["inject", "bitflip", "op=read", "path=db.fief", "probability=0.3", "bits=2", "nth=2"])
                for verify in [true, false] {
                    let out = "\(dir)/reader-\(round)-\(verify ? "verified" : "plain").out"
                    let child = try ChildProcess(
                        .checkedRead(db: mnt + "/db.fief", oracle: oracle, seed: seed, verifyChecksums: verify),
                        environment: environment, output: out, label: "reader")
                    let ending = child.wait()
                    let text = ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").trimmingCharacters(
                        in: .whitespacesAndNewlines)
                    switch (verify, ending) {
                    case (_, .exited(CheckedReader.Outcome.correct.rawValue)),
                        (_, .exited(CheckedReader.Outcome.reportedCorruption.rawValue)):
                        if round == 0 {
                            notes.append("bit flips, \(verify ? "checksums verified" : "no verification"): \(text)")
                        }
                    case (true, _):
                        violations.append(
                            Violation(
                                .integrity,
                                "bit flips with checksums verified (round \(round)): the reader \(ending): \(text)"))
                    case (false, _) where TortureEncryption.isActive:
                        violations.append(
                            Violation(
                                .integrity,
                                "bit flips in an encrypted file (round \(round)): the reader \(ending): "
                                    + "\(text) (every encrypted page is authenticated, verified or not)"))
                    case (false, _):
                        notes.append(
                            "bit flips without checksum verification (round \(round)): "
                                + "the reader \(ending): \(text) (what DatabaseOptions.verifyChecksums prevents)"
                        )
                    }
                }
                try fs.ctl(["clear"])
            }
            cut = "drop-all"
        default:  // fsync-lie
            try fs.ctl(["inject", "fsync-lie", "path=db.fief"])
            if try writer(upTo: warm + (plan.commitsUnderLie ?? 3), "fault").wait() != .exited(0) {
                violations.append(.harness("under a lying fsync the writer failed: \(said("fault"))"))
            }
            cut = "drop-all"
        }
        outcome.faults += 1
        try fs.ctl(["clear"])
        if kind != "fsync-lie" {
            let through = RecoveryCheck.verify(dbPath: mnt + "/db.fief", oraclePath: oracle, workload: workload)
            violations += through.violations.map { $0.prefixed("after \(kind), through the mount") }
        }
        try fs.ctl(["power-cut", "--mode", cut])
        fs.unmount()
        let after = RecoveryCheck.verify(dbPath: backing + "/db.fief", oraclePath: oracle, workload: workload)
        if kind == "fsync-lie" {
            let lost = after.violations.filter { $0.kind == .durability }
            let other = after.violations.filter { $0.kind != .durability }
            violations += other.map { $0.prefixed("after a lying fsync and a power cut") }
            if lost.isEmpty {
                violations.append(
                    .harness(
                        "a lying fsync and a drop-all power cut lost no acknowledged commit: "
                            + "the durability check cannot see a lying disk"))
            } else {
                notes.append(
                    "as expected, the lying fsync lost acknowledged commits at the power cut "
                        + "(cause: fsync-lie on db.fief): \(lost[0])"
                )
            }
        } else {
            violations += after.violations.map { $0.prefixed("after \(kind) and a \(cut) power cut") }
        }
        outcome.notes += notes
        outcome.events.append(CycleEvent(kind, violations, notes.isEmpty ? "" : ": " + notes.joined(separator: "; ")))
        return outcome
    }
}
