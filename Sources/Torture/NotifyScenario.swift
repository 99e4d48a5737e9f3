import Engine
import FiefObjects
import Foundation
import SeededRandomness
import TortureSchema

/// Commit observation across processes under writer deaths: two observer processes log
/// every range `observeCommits` delivers while writers commit and die (at every commit crash
/// point, `after-publish-before-doorbell` included, or at seeded times). Odd cycles do the
/// same one level up: the object graph's writers, and observers of a query's results.
///
/// Checks, per observer: the ranges tile the version line from its start (none skipped,
/// none repeated, none empty), the last reaches the final version within a second of the
/// writers finishing, and the doorbell woke it (a run where every delivery came from the
/// poll means commits never rang).
public struct NotifyScenario: Scenario {
    public var name: String { "notify" }
    static let observers = 2
    static let deathsPerCycle = 3
    static let graceSeconds = 1.0

    public init() {}

    public func plannedCycles(_ profile: TortureProfile) -> Int { 6 * profile.scale }

    public func runCycle(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        if index % 2 == 1 { return try objectCycle(index, seed: seed, dir: dir, context: context) }
        return try runCommitCycle(
            deaths: NotifyScenario.deaths(cycle: index, seed: seed), watch: Watch(), dir: dir,
            workload: CommitWorkload(seed: seed), environment: context.writerEnvironment)
    }

    /// Who watches a commit cycle, and how long the writer after the deaths goes on.
    public struct Watch: Codable, Sendable, Equatable {
        public var observers = NotifyScenario.observers
        /// Commits the last writer makes.
        public var lastCommits: UInt64 = 5
    }

    /// Even cycle `index`'s writers, from its seed: three deaths, every commit crash point in
    /// turn or a SIGKILL at a seeded time.
    public static func deaths(cycle index: Int, seed: UInt64) -> [WriterDeath] {
        var rng = SeededRandom(seed: seed)
        let points = CrashPoint.commitPoints
        return (0..<deathsPerCycle).map { e -> WriterDeath in
            let kind = (index * deathsPerCycle + e) % (points.count + 1)
            if kind < points.count { return .at(points[kind], nth: Int.random(in: 1...6, using: &rng)) }
            return .kill(afterMicros: UInt32.random(in: 20_000...200_000, using: &rng), threads: 1)
        }
    }

    func runCommitCycle(
        deaths: [WriterDeath], watch plan: Watch, dir: String, workload: CommitWorkload, environment: [String: String]
    ) throws -> CycleOutcome {
        let db = dir + "/db.fief"
        let stop = dir + "/stop"
        _ = try Database(path: db, options: TortureEncryption.options())
        let watchers = try ObserverProcesses(
            .commits, db: db, dir: dir, stop: stop, environment: environment, count: plan.observers)
        var outcome = try WriterDeath.run(deaths, dir: dir, workload: workload, environment: environment)
        // A last writer that finishes, so the run ends on commits that rang.
        var last = CrashCycle(
            dbPath: db, oraclePath: dir + "/oracle.log", workload: workload, logPath: dir + "/writer-last.out")
        last.environment = environment
        try last.writeSchedule()
        let finisher = try ChildProcess(
            last.writer(maxCommit: last.committedNow() + plan.lastCommits),
            environment: environment,
            output: dir + "/writer-last.out", label: "writer")
        var violations: [Violation] = []
        if finisher.wait() != .exited(0) { violations.append(.harness("the last writer failed; see writer-last.out")) }

        let final = try Database(path: db, options: TortureEncryption.options(create: false)).latestVersion()
        try Data("\(final)\n".utf8).write(to: URL(fileURLWithPath: stop))
        for (o, (w, log)) in watchers.members.enumerated() {
            let ending = w.wait()
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            violations += NotifyScenario.verify(log: text, final: final, observer: o)
            if ending != .exited(0) && !text.contains("missed") {
                violations.append(.harness("observer \(o) ended \(ending); see observer-\(o).out"))
            }
        }
        outcome.events.append(
            CycleEvent("delivery", violations, "notify: \(plan.observers) observers, final version \(final)"))
        return outcome
    }

    /// Odd cycles: the object graph's writers die the same way while two observer processes
    /// watch a query's results through `results.observe`, refreshing on `store.observe`; each
    /// checks every change set where it is delivered (see `ResultsLogObserver`).
    func objectCycle(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        var rng = SeededRandom(seed: seed)
        var outcome = CycleOutcome()
        let db = dir + "/objects.fief", oracle = dir + "/oracle.log", stop = dir + "/stop"
        let workload = ObjectGraphWorkload(seed: seed)
        func writer(_ maxCommit: UInt64, _ log: String, _ env: [String: String] = [:]) throws -> ChildProcess {
            try ChildProcess(
                .objectsWriter(db: db, oracle: oracle, seed: seed, maxCommit: maxCommit),
                environment: context.writerEnvironment.merging(env) { $1 },
                output: log, label: "objects writer")
        }
        guard try writer(3, dir + "/writer-first.out").wait() == .exited(0) else {
            outcome.events.append(
                CycleEvent(
                    "objects-delivery", [.harness("the first objects writer failed; see writer-first.out")],
                    "notify cycle \(index)"
                )
            )
            return outcome
        }
        let watchers = try ObserverProcesses(
            .results, db: db, dir: dir, stop: stop, environment: context.writerEnvironment)

        var current: UInt64 = 3
        let points = CrashPoint.commitPoints
        for e in 0..<NotifyScenario.deathsPerCycle {
            let kind = (index * NotifyScenario.deathsPerCycle + e) % (points.count + 1)
            let log = dir + "/writer-\(e).out"
            let ending: ChildProcess.Ending
            let description: String
            if kind < points.count {
                let nth = Int.random(in: 1...4, using: &rng)
                ending = try writer(
                    current + UInt64(nth) + 3, log, [CrashPoint.environmentVariable: "\(points[kind].rawValue):\(nth)"]
                ).wait()
                description = "objects writer killed at \(points[kind].rawValue):\(nth) from commit \(current)"
                outcome.crashPoints.insert(points[kind].rawValue)
            } else {
                let child = try writer(UInt64.max / 2, log)
                usleep(UInt32.random(in: 30_000...200_000, using: &rng))
                child.kill9()
                ending = child.wait()
                description = "objects writer SIGKILLed from commit \(current)"
                outcome.crashPoints.insert("random-kill")
            }
            var verdict = ObjectRecoveryCheck.verify(
                dbPath: db, oraclePath: oracle, workload: workload, environment: context.writerEnvironment)
            if ending != .signaled(SIGKILL) {
                verdict.violations.append(.harness("objects writer \(ending) instead of being killed; see \(log)"))
            }
            current = verdict.recoveredCommit
            outcome.events.append(
                CycleEvent(
                    "objects-" + (kind < points.count ? "crash-point" : "random-kill"), verdict.violations, description)
            )
        }
        var violations: [Violation] = []
        if try writer(current + 4, dir + "/writer-last.out").wait() != .exited(0) {
            violations.append(.harness("the last objects writer failed; see writer-last.out"))
        }
        let final = try Database(path: db, options: TortureEncryption.options(create: false)).latestVersion()
        try Data("\(final)\n".utf8).write(to: URL(fileURLWithPath: stop))
        for (o, (w, log)) in watchers.members.enumerated() {
            let ending = w.wait()
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            let lines = text.split(separator: "\n")
            if !text.hasPrefix("start") {
                let said =
                    ((try? String(contentsOfFile: dir + "/observer-\(o).out", encoding: .utf8)) ?? "").split(
                        separator: "\n"
                    ).first ?? ""
                violations.append(.harness("observer \(o) never started: \(said)"))
                continue
            }
            // The observer process reports what it found as lines of text: delivery faults, none
            // of them a durability or integrity verdict.
            violations += lines.filter { $0.hasPrefix("violation ") }.prefix(3).map {
                .harness("observer \(o): \($0.dropFirst("violation ".count))")
            }
            if lines.contains(where: { $0.hasPrefix("missed") }) {
                violations.append(
                    .harness(
                        "observer \(o) did not reach the final version \(final) within \(NotifyScenario.graceSeconds) s"
                    ))
            }
            if ending != .exited(0) && violations.isEmpty {
                violations.append(.harness("observer \(o) ended \(ending); see observer-\(o).out"))
            }
        }
        outcome.events.append(
            CycleEvent(
                "objects-delivery", violations, "notify cycle \(index): 2 results observers, final version \(final)"))
        return outcome
    }

    /// The checks on one observer's log.
    static func verify(log: String, final: UInt64, observer o: Int) -> [Violation] {
        var violations: [Violation] = []
        var start: UInt64?
        var ranges: [(UInt64, UInt64)] = []
        var doorbell = 0
        var missed = false
        for line in log.split(separator: "\n") {
            let f = line.split(separator: " ")
            switch f.first {
            case "start": start = f.count > 1 ? UInt64(f[1]) : nil
            case "range": if f.count == 3, let a = UInt64(f[1]), let b = UInt64(f[2]) { ranges.append((a, b)) }
            case "missed": missed = true
            case "wakes": doorbell = f.count > 1 ? Int(f[1]) ?? 0 : 0
            default: break
            }
        }
        guard let start else { return [.harness("observer \(o) never started (no 'start' line)")] }
        var expect = start
        for (a, b) in ranges {
            if a != expect {
                violations.append(
                    .harness(
                        a > expect
                            ? "observer \(o): versions (\(expect), \(a)] were never delivered"
                            : "observer \(o): versions (\(a), \(min(b, expect))] were delivered twice"))
                break
            }
            if b <= a { violations.append(.harness("observer \(o): empty or backward range (\(a), \(b)]")); break }
            expect = b
        }
        if missed {
            violations.append(
                .harness(
                    "observer \(o) did not reach the final version \(final) within \(graceSeconds) s "
                        + "(last delivered: \(ranges.last?.1 ?? start))"))
        } else if violations.isEmpty && expect != final {
            violations.append(.harness("observer \(o) ended at version \(expect), not the final \(final)"))
        }
        if doorbell == 0 && final > start {
            violations.append(
                .harness("observer \(o): every delivery came from the poll; commits never rang the doorbell"))
        }
        return violations
    }
}

/// The notify scenario's observer processes: started, waited for until each has logged the
/// version it registered from (before that, a commit could land unseen), and killed at the
/// end if still running.
final class ObserverProcesses {
    let members: [(process: ChildProcess, log: String)]

    init(
        _ watching: ChildRole.ObservedChanges, db: String, dir: String, stop: String, environment: [String: String],
        count: Int = NotifyScenario.observers
    ) throws {
        var members: [(ChildProcess, String)] = []
        for o in 0..<count {
            let log = dir + "/observer-\(o).log"
            members.append(
                (
                    try ChildProcess(
                        .observer(
                            of: watching, db: db, log: log, stop: stop, graceSeconds: NotifyScenario.graceSeconds),
                        environment: environment, output: dir + "/observer-\(o).out", label: "observer"), log
                ))
        }
        self.members = members
        func started(_ log: String) -> Bool {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").hasPrefix("start")
        }
        let deadline = Date().addingTimeInterval(10)
        while members.contains(where: { !started($0.1) && $0.0.process.isRunning }) && Date() < deadline {
            usleep(5_000)
        }
    }

    deinit { for (p, _) in members where p.process.isRunning { p.kill9(); _ = p.wait() } }
}
