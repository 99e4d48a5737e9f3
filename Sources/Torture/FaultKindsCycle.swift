import FaultFS
import Foundation
import TortureSchema

/// One cycle of the `faults` scenario, phase by phase: warm-up commits, the plan's fault while
/// a writer (or reader) works, then a check through the mount and one after a power cut.
struct FaultKindsCycle {
    let plan: FaultKindsScenario.Plan
    let dir: String
    let seed: UInt64
    let environment: [String: String]
    let model: PersistenceModel
    /// Replaced by each bit-flip round (a fresh mount is a cold page cache).
    var fs: FaultFSMount
    var outcome = CycleOutcome()
    var violations: [Violation] = []
    var notes: [String] = []

    var kind: String { plan.kind }
    var oracle: String { dir + "/oracle.log" }
    var workload: CommitWorkload { CommitWorkload(seed: seed) }

    mutating func run() throws -> CycleOutcome {
        try fs.mount()
        defer { fs.unmount() }
        if try writers.start(upTo: plan.warm, "warm").wait() != .exited(0) {
            outcome.events.append(
                CycleEvent(kind, [.harness("the writer failed before any fault: \(writers.output("warm"))")], ""))
            return outcome
        }
        let cut: String
        switch kind {
        case "short-write": cut = try shortWrite()
        case "latency": cut = try latency()
        case "kill-caller": cut = try killCaller()
        case "bitflip": cut = try bitFlips()
        default: cut = try fsyncLie()
        }
        outcome.faults += 1
        try checkAfterFault(cut: cut)
        outcome.notes += notes
        outcome.events.append(CycleEvent(kind, violations, notes.isEmpty ? "" : ": " + notes.joined(separator: "; ")))
        return outcome
    }

    var writers: TaggedWriters {
        TaggedWriters(
            cycle: CrashCycle(dbPath: fs.mountpoint + "/db.fief", oraclePath: oracle, seed: seed), dir: dir,
            environment: environment)
    }

    // Each fault returns the power-cut mode that follows it.

    /// Within the next commit, which is the last: later commits could free a damaged page
    /// before anything looks at it.
    mutating func shortWrite() throws -> String {
        try fs.ctl(["inject", "short-write", "path=db.fief", "nth=\(plan.nth ?? 1)", "once"])
        let ending = try writers.start(upTo: plan.warm + 1, "fault").wait()
        if case .signaled(let s) = ending {
            violations.append(.harness("after a short write the writer died of signal \(s)"))
        }
        if case .exited(let c) = ending, c != 0, !writers.output("fault").contains("fief torture writer:") {
            violations.append(
                .harness("after a short write the writer failed without a clear error: \(writers.output("fault"))"))
        }
        notes.append("short write: writer \(ending)")
        return "drop-random"
    }

    func latency() throws -> String {
        try fs.ctl(["inject", "latency", "op=any", "min-ms=0", "max-ms=3", "probability=0.3"])
        let child = try writers.start(upTo: UInt64.max / 2, "fault")
        usleep(plan.killAfterMicros ?? 0)
        child.kill9()
        _ = child.wait()
        return "torn-4096"
    }

    mutating func killCaller() throws -> String {
        let nth = plan.nth ?? 1, when = plan.when ?? "before"
        try fs.ctl(["inject", "kill-caller", "op=write,fsync", "path=db.fief", "nth=\(nth)", "when=\(when)", "once"])
        let ending = try writers.start(upTo: plan.warm + 20, "fault").wait()
        if ending != .signaled(SIGKILL) {
            violations.append(
                .harness("FaultFS was to kill the writer at write/sync \(nth) (\(when)), but it \(ending)"))
        }
        outcome.crashPoints.insert("kill-caller-\(when)-\(nth)")
        return "prefix"
    }

    /// Several rounds, each on a cold page cache (a fresh mount), so the reader's pages come
    /// through FaultFS's reads; each round flips different bits. Whether a flip lands in bytes
    /// a reader uses depends on FUSE's read sizes, which vary with timing: twelve rounds make
    /// a reader that uses damaged data show it.
    mutating func bitFlips() throws -> String {
        for round in plan.rounds ?? [] {
            fs.unmount()
            fs = FaultFSMount(
                backing: fs.backing, mountpoint: fs.mountpoint, seed: plan.faultfsSeed &+ UInt64(round) &+ 1,
                tracePath: dir + "/faultfs-trace-\(round).jsonl", model: model)
            try fs.mount()
            try fs.ctl(["inject", "bitflip", "op=read", "path=db.fief", "probability=0.3", "bits=2", "nth=2"])
            for verify in [true, false] {
                try readFlipped(round: round, verify: verify)
            }
            try fs.ctl(["clear"])
        }
        return "drop-all"
    }

    /// A reader with or without checksum verification on flipped bits: with it (or on an
    /// encrypted file) it must get the committed data or report corruption; without, what it
    /// got is noted.
    mutating func readFlipped(round: Int, verify: Bool) throws {
        let out = "\(dir)/reader-\(round)-\(verify ? "verified" : "plain").out"
        let child = try ChildProcess(
            .checkedRead(db: fs.mountpoint + "/db.fief", oracle: oracle, seed: seed, verifyChecksums: verify),
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
                    .integrity, "bit flips with checksums verified (round \(round)): the reader \(ending): \(text)"))
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

    mutating func fsyncLie() throws -> String {
        try fs.ctl(["inject", "fsync-lie", "path=db.fief"])
        if try writers.start(upTo: plan.warm + (plan.commitsUnderLie ?? 3), "fault").wait() != .exited(0) {
            violations.append(.harness("under a lying fsync the writer failed: \(writers.output("fault"))"))
        }
        return "drop-all"
    }

    /// With the fault cleared, the file through the mount (but for a lying fsync, whose loss
    /// shows only at the cut) and then after a power cut must recover clean.
    mutating func checkAfterFault(cut: String) throws {
        try fs.ctl(["clear"])
        if kind != "fsync-lie" {
            let through = RecoveryCheck.verify(
                dbPath: fs.mountpoint + "/db.fief", oraclePath: oracle, workload: workload)
            violations += through.violations.map { $0.prefixed("after \(kind), through the mount") }
        }
        try fs.ctl(["power-cut", "--mode", cut])
        fs.unmount()
        let after = RecoveryCheck.verify(dbPath: fs.backing + "/db.fief", oraclePath: oracle, workload: workload)
        if kind == "fsync-lie" {
            judgeLyingFsync(after.violations)
        } else {
            violations += after.violations.map { $0.prefixed("after \(kind) and a \(cut) power cut") }
        }
    }

    /// A lying fsync must lose acknowledged commits at the cut (the loss is the expected
    /// outcome); its absence is the violation, as is any other damage.
    mutating func judgeLyingFsync(_ found: [Violation]) {
        let lost = found.filter { $0.kind == .durability }
        let other = found.filter { $0.kind != .durability }
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
    }
}
