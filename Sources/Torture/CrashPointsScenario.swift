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
        try WriterDeath.run(
            CrashPointsScenario.deaths(cycle: index, seed: seed), dir: dir, workload: CommitWorkload(seed: seed),
            environment: context.writerEnvironment)
    }

    /// How cycle `index`'s writers die, from its seed.
    public static func deaths(cycle index: Int, seed: UInt64) -> [WriterDeath] {
        var rng = SeededRandom(seed: seed)
        let kinds = CrashPoint.commitPoints.count + 1
        return (0..<eventsPerCycle).map { e in
            // Cycle i starts at kind i, so every point is covered in the first cycles.
            let kind = (index * eventsPerCycle + e) % kinds
            let threads = kind < CrashPoint.commitPoints.count ? 1 : Int.random(in: 1...4, using: &rng)
            if kind < CrashPoint.commitPoints.count {
                return .at(CrashPoint.commitPoints[kind], nth: Int.random(in: 1...10, using: &rng))
            }
            return .kill(afterMicros: UInt32.random(in: 20_000...300_000, using: &rng), threads: threads)
        }
    }
}
