import Engine
import Foundation
import TortureSchema
import SeededRandomness

/// The workload runs on a FaultFS mount; power is cut under each mode (drop-all, drop-random,
/// prefix, torn at 512 and 4096 bytes), either after a writer died at a crash point or while
/// writers are running. The backing directory then holds what a disk could hold after losing
/// power, and the database in it must recover: every acknowledged commit present (and every
/// commit whose second sync returned), exactly one committed version, a clean check.
public struct PowerCutScenario: Scenario {
    public var name: String { "power-cut" }
    public init() {}

    public static let modes = [
        PowerCutMode(name: "drop-all", args: ["--mode", "drop-all"]),
        PowerCutMode(name: "drop-random", args: ["--mode", "drop-random"]),
        PowerCutMode(name: "prefix", args: ["--mode", "prefix"]),
        PowerCutMode(name: "torn-512", args: ["--mode", "torn", "--sector", "512"]),
        PowerCutMode(name: "torn-4096", args: ["--mode", "torn", "--sector", "4096"])
    ]
    /// Per cycle, on one file: a death at an engine crash point (rotating, so every point
    /// meets every mode within 30 cycles); FaultFS killing the writer just before a commit's
    /// select-bit sync (the flip written, not yet durable) and just before a data sync; then
    /// a cut while several writer threads run. The FaultFS kills need no help from the
    /// engine: they find the commit window from the outside, as they would in any database.
    static let eventsPerCycle = 4

    public func plannedCycles(_ profile: TortureProfile) -> Int { 20 * profile.scale }

    public func runCycle(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        if let missing = FaultFSMount.missingOutcome(name, mode: "no-fuse", cycle: index) { return missing }
        return try PowerCut.run(
            PowerCutScenario.cuts(cycle: index, seed: seed), dir: dir, workload: CommitWorkload(seed: seed),
            environment: context.writerEnvironment, model: context.options.fsModel)
    }

    /// Cycle `index`'s four cuts, from its seed: after a death at an engine crash point
    /// (rotating, so every point meets every mode within 30 cycles); after FaultFS killed the
    /// writer just before a commit's select-bit sync (the flip written, not yet durable) and
    /// just before a data sync; then while several writer threads run.
    public static func cuts(cycle index: Int, seed: UInt64) -> [PowerCut] {
        var rng = SeededRandom(seed: seed)
        let mode = modes[index % modes.count].name
        return (0..<eventsPerCycle).map { e in
            let fsSeed = seed &+ UInt64(e)
            switch e {
            case 0:
                return PowerCut(
                    death: .crashPoint,
                    crashPoint: CrashPoint.commitPoints[index % CrashPoint.commitPoints.count].rawValue,
                    nth: Int.random(in: 1...8, using: &rng), mode: mode, faultfsSeed: fsSeed)
            case 1, 2:
                return PowerCut(
                    death: e == 1 ? .killBeforeSelectSync : .killBeforeDataSync,
                    nth: Int.random(in: 1...6, using: &rng),
                    mode: mode, faultfsSeed: fsSeed)
            default:
                let threads = Int.random(in: 1...3, using: &rng)
                return PowerCut(
                    death: .running, threads: threads, delayMicros: UInt32.random(in: 50_000...400_000, using: &rng),
                    mode: mode, faultfsSeed: fsSeed)
            }
        }
    }
}

/// How FaultFS takes what was unsynced when the power goes: a name for reports and replays,
/// and the words of `fief faultfs ctl MOUNTPOINT power-cut` that do it.
public struct PowerCutMode: Sendable, Equatable {
    public let name: String
    public let args: [String]
}
