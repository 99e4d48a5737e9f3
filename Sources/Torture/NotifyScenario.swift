#if canImport(Glibc)
import Glibc
#endif
import Engine
import Foundation
import SeededRandomness

/// Commit observation across processes under writer deaths: two observer processes log
/// every range `observeCommits` delivers while writers commit and die (at every commit crash
/// point, `after-publish-before-doorbell` included, or at seeded times).
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
        var rng = SeededRandom(seed: seed)
        var outcome = CycleOutcome()
        let db = dir + "/db.fief"
        let stop = dir + "/stop"
        _ = try Database(path: db)
        var watchers: [(ChildProcess, String)] = []
        for o in 0..<NotifyScenario.observers {
            let log = dir + "/observer-\(o).log"
            watchers.append((try ChildProcess(arguments: ["torture", "commit-observer", "--db", db, "--log", log, "--stop", stop,
                                                          "--grace-seconds", String(NotifyScenario.graceSeconds)],
                                              environment: context.writerEnvironment, output: dir + "/observer-\(o).out", label: "observer"), log))
        }
        defer { for (w, _) in watchers where w.process.isRunning { w.kill9(); _ = w.wait() } }
        // Observers must have registered before the first commit they are asked to see.
        let deadline = Date().addingTimeInterval(10)
        while watchers.contains(where: { !FileManager.default.fileExists(atPath: $0.1) }) && Date() < deadline { usleep(5_000) }

        let points = CrashPoint.commitPoints
        for e in 0..<NotifyScenario.deathsPerCycle {
            var cycle = CrashCycle(dbPath: db, oraclePath: dir + "/oracle.log", seed: seed, logPath: dir + "/writer-\(e).out")
            cycle.environment = context.writerEnvironment
            let kind = (index * NotifyScenario.deathsPerCycle + e) % (points.count + 1)
            if kind < points.count {
                let o = try cycle.crash(at: points[kind], nth: Int.random(in: 1...6, using: &rng))
                outcome.events.append((points[kind].rawValue, o.violations, o.description))
                outcome.crashPoints.insert(points[kind].rawValue)
            } else {
                let o = try cycle.kill(afterMicros: UInt32.random(in: 20_000...200_000, using: &rng))
                outcome.events.append(("random-kill", o.violations, o.description))
                outcome.crashPoints.insert("random-kill")
            }
        }
        // A last writer that finishes, so the run ends on commits that rang.
        let last = CrashCycle(dbPath: db, oraclePath: dir + "/oracle.log", seed: seed, logPath: dir + "/writer-last.out")
        let finisher = try ChildProcess(arguments: last.writerArguments(maxCommit: last.committedNow() + 5), environment: context.writerEnvironment,
                                        output: dir + "/writer-last.out", label: "writer")
        var violations: [String] = []
        if finisher.wait() != .exited(0) { violations.append("the last writer failed; see writer-last.out") }

        let final = try Database(path: db, options: DatabaseOptions(create: false)).latestVersion()
        try Data("\(final)\n".utf8).write(to: URL(fileURLWithPath: stop))
        for (o, (w, log)) in watchers.enumerated() {
            let ending = w.wait()
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            violations += NotifyScenario.verify(log: text, final: final, observer: o)
            if ending != .exited(0) && !text.contains("missed") { violations.append("observer \(o) ended \(ending); see observer-\(o).out") }
        }
        outcome.events.append(("delivery", violations, "notify cycle \(index): 2 observers, final version \(final)"))
        return outcome
    }

    /// The checks on one observer's log.
    static func verify(log: String, final: UInt64, observer o: Int) -> [String] {
        var violations: [String] = []
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
        guard let start else { return ["observer \(o) never started (no 'start' line)"] }
        var expect = start
        for (a, b) in ranges {
            if a != expect {
                violations.append(a > expect ? "observer \(o): versions (\(expect), \(a)] were never delivered" : "observer \(o): versions (\(a), \(min(b, expect))] were delivered twice")
                break
            }
            if b <= a { violations.append("observer \(o): empty or backward range (\(a), \(b)]"); break }
            expect = b
        }
        if missed { violations.append("observer \(o) did not reach the final version \(final) within \(graceSeconds) s (last delivered: \(ranges.last?.1 ?? start))") }
        else if violations.isEmpty && expect != final { violations.append("observer \(o) ended at version \(expect), not the final \(final)") }
        if doorbell == 0 && final > start { violations.append("observer \(o): every delivery came from the poll; commits never rang the doorbell") }
        return violations
    }
}
