import Foundation
import SeededRandomness
import TortureSchema

/// `crash-points` for targets without named crash points: each cycle starts writers on one
/// store and SIGKILLs them (with an `exec` adapter, the adapter too) at seeded random times,
/// three deaths per cycle; after each the store must open, check clean, hold every
/// acknowledged commit and exactly the state after one commit. A process crash loses no
/// page cache, so even `synchronous=off` and `nosync` must pass; a store that writes in place
/// shows torn states here.
public struct TargetCrashScenario: Scenario {
    public var name: String { "crash-points" }
    public init() {}

    public func plannedCycles(_ profile: TortureProfile) -> Int { 20 * profile.scale }

    public func runCycle(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        var outcome = CycleOutcome()
        var rng = SeededRandom(seed: seed)
        let store = dir + "/store"
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
        let p = TargetProcesses(spec: context.options.target, storeDirectory: store, scratch: dir, seed: seed)
        try p.setUp()
        for e in 0..<CrashPointsScenario.eventsPerCycle {
            let delay = UInt32.random(in: 30_000...400_000, using: &rng)
            let writer = try p.writer(maxCommit: UInt64.max / 2, tag: "\(e)")
            usleep(delay)
            writer.kill9Tree()
            let ending = writer.wait()
            let verdict = try p.verify(tag: "\(e)")
            var violations = verdict.violations
            if case .exited(let code) = ending, code != 0 {
                violations.append(
                    Violation(
                        .harness, "the writer failed on its own before the kill (\(ending)): \(p.lastLine("\(e)"))"
                    ))
            }
            outcome.events.append(
                CycleEvent(
                    "random-kill", violations,
                    "SIGKILL after \(delay / 1000) ms, "
                        + "store at commit \(verdict.recoveredCommit) (acknowledged \(verdict.lastAck))"
                ))
            outcome.crashPoints.insert("random-kill")
        }
        return outcome
    }
}
