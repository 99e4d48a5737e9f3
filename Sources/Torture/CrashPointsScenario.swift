import Engine
import SeededRandomness

/// Writer processes (one to four threads each) die at every engine crash point and at seeded
/// random times; after each death the file must recover to exactly one committed version
/// holding every acknowledged commit. Each cycle chains several deaths on one file.
public struct CrashPointsScenario: Scenario {
    public var name: String { "crash-points" }
    static let eventsPerCycle = 3

    public init() {}

    public func plannedCycles(_ profile: TortureProfile) -> Int { 56 * profile.scale }

    public func runCycle(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        var rng = SeededRandom(seed: seed)
        var outcome = CycleOutcome()
        let kinds = CrashPoint.commitPoints.count + 1
        for e in 0..<CrashPointsScenario.eventsPerCycle {
            // Cycle i starts at kind i, so every point is covered in the first cycles.
            let kind = (index * CrashPointsScenario.eventsPerCycle + e) % kinds
            let threads = kind < CrashPoint.commitPoints.count ? 1 : Int.random(in: 1...4, using: &rng)
            var cycle = CrashCycle(dbPath: dir + "/db.fief", oraclePath: dir + "/oracle.log", seed: seed,
                                   threads: threads, logPath: dir + "/writer-\(e).out")
            cycle.environment = context.writerEnvironment
            if kind < CrashPoint.commitPoints.count {
                let point = CrashPoint.commitPoints[kind]
                let nth = Int.random(in: 1...10, using: &rng)
                let o = try cycle.crash(at: point, nth: nth)
                outcome.events.append((point.rawValue, o.violations, o.description))
                outcome.crashPoints.insert(point.rawValue)
            } else {
                let delay = UInt32.random(in: 20_000...300_000, using: &rng)
                let o = try cycle.kill(afterMicros: delay)
                outcome.events.append(("random-kill", o.violations, o.description + " (\(threads) threads)"))
                outcome.crashPoints.insert("random-kill")
            }
        }
        return outcome
    }
}
