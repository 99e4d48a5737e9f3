#if canImport(Glibc)
    import Glibc
#endif
import Engine
import SeededRandomness
import TortureSchema

/// Group commit under crashes: writer processes of four to eight threads commit through
/// `Database.batch` (each call one oracle commit; some bodies throw once, so their shared
/// transactions roll back and run again without them), and die at an engine crash point, at
/// a seeded random time (two processes on one file at once), and in a power cut on FaultFS.
/// After each death every call that `batch` acknowledged must be in the file, and each
/// combined transaction wholly present or wholly absent (`RecoveryCheck`, batched).
public struct BatchScenario: Scenario {
    public var name: String { "batch" }
    public init() {}

    public func plannedCycles(_ profile: TortureProfile) -> Int { 3 * profile.scale }

    public func runCycle(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        var rng = SeededRandom(seed: seed)
        var outcome = CycleOutcome()
        func writer(_ db: String, oracle: String, log: String) -> CrashCycle {
            var c = CrashCycle(
                dbPath: db, oraclePath: oracle, seed: seed, threads: Int.random(in: 4...8, using: &rng), logPath: log)
            c.environment = context.writerEnvironment
            c.batch = true
            return c
        }

        // A death at each commit point in turn, on a file that lives through the cycle.
        let death = BatchScenario.firstDeath(cycle: index, using: &rng)
        var crashing = CrashCycle(
            dbPath: dir + "/db.fief", oraclePath: dir + "/oracle.log", seed: seed, threads: death.threads,
            logPath: dir + "/writer-0.out")
        crashing.environment = context.writerEnvironment
        crashing.batch = true
        let point = death.point!
        let crashed = try crashing.crash(at: point, nth: death.nth ?? 1)
        outcome.events.append(
            CycleEvent(point.rawValue, crashed.violations, crashed.description + " (\(crashing.threads) batch threads)")
        )
        outcome.crashPoints.insert(point.rawValue)

        // Two writer processes batching on one file take turns through the writer lock; both
        // are SIGKILLed at one seeded moment.
        let killed = [1, 2].map {
            writer(dir + "/db.fief", oracle: dir + "/oracle.log", log: dir + "/writer-\($0).out")
        }
        let children = try killed.map { w in
            try ChildProcess(
                w.writer(maxCommit: UInt64.max / 2), environment: w.environment, output: w.logPath,
                label: "writer")
        }
        let delay = UInt32.random(in: 20_000...300_000, using: &rng)
        usleep(delay)
        for c in children { c.kill9() }
        var violations: [Violation] = []
        for c in children {
            if case .exited(let code) = c.wait(), code != 0 {
                violations.append(.harness("a writer failed on its own before the kill; see its output"))
            }
        }
        violations += killed[0].verify().violations
        outcome.events.append(
            CycleEvent(
                "random-kill", violations,
                "SIGKILL after \(delay / 1000) ms of two processes "
                    + "(\(killed.map { String($0.threads) }.joined(separator: " and ")) batch threads)"
            ))
        outcome.crashPoints.insert("random-kill")

        let mode = PowerCutScenario.modes[index % PowerCutScenario.modes.count]
        if let why = FaultFSMount.unavailableReason() {
            outcome.events.append(
                CycleEvent(
                    "no-fuse", [.harness("the batch power cut cannot run on this machine: \(why)")],
                    "batch cycle \(index)"
                ))
            return outcome
        }
        let fs = FaultFSMount.forCycle(dir, seed: seed, context: context)
        try fs.mount()
        defer { fs.unmount() }
        let cut = writer(dir + "/mnt/db.fief", oracle: dir + "/oracle-power-cut.log", log: dir + "/writer-3.out")
        let child = try ChildProcess(
            cut.writer(maxCommit: UInt64.max / 2), environment: cut.environment,
            output: cut.logPath, label: "writer")
        let running = UInt32.random(in: 50_000...300_000, using: &rng)
        usleep(running)
        try fs.cutPower(mode)
        child.kill9()
        _ = child.wait()
        fs.unmount()
        outcome.faults += 1
        let verdict = RecoveryCheck.verify(
            dbPath: dir + "/backing/db.fief", oraclePath: dir + "/oracle-power-cut.log",
            workload: cut.workload, batched: true)
        outcome.events.append(
            CycleEvent(
                mode.name, verdict.violations,
                "\(mode.name) power cut \(running / 1000) ms into a run of \(cut.threads) batch threads"
            ))
        return outcome
    }

    /// The cycle's first writer: 4 to 8 batching threads that die at a commit point (in turn
    /// over the cycles), the first draws from the cycle's seed.
    static func firstDeath(cycle index: Int, using rng: inout SeededRandom) -> WriterDeath {
        let threads = Int.random(in: 4...8, using: &rng)
        var d = WriterDeath.at(
            CrashPoint.commitPoints[index % CrashPoint.commitPoints.count], nth: Int.random(in: 1...6, using: &rng))
        d.threads = threads
        return d
    }
}
