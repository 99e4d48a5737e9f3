#if canImport(Glibc)
    import Glibc
#endif
import Engine
import FaultFS
import Foundation
import SeededRandomness
import TortureSchema

/// Every state a power cut could leave after a commit died, enumerated rather than drawn, in
/// the spirit of ALICE and CrashMonkey but on a real FUSE mount: the file is copied while it
/// is wholly durable, a writer is killed in the next commit at a crash point, and FaultFS
/// says which byte ranges were written since the file's last sync. Each 512-byte sector of
/// those ranges may hold its old bytes (as in the durable copy; exact for an engine whose
/// sync epochs write disjoint sectors, as Fief's do) or its new ones, and a file grown since
/// its last sync may keep its durable size;
/// every combination (sampled from the seed past the bound) is built on a copy, opened,
/// checked and compared with the oracle. Killed after its top was written (before the data
/// sync), a commit may leave only the version before it; after its select-bit flip (data
/// synced), the version before or itself. Every third cycle two writers die in a row: the
/// first after its flip (written, never synced), the next before its data sync, so a cut may
/// leave the flip undone under pages the second writer wrote: it must only have reused pages
/// that the version before the flip no longer needs.
public struct CrashStatesScenario: Scenario {
    public var name: String { "crash-states" }
    public init() {}

    /// The crash point of the commit under test; `nil` for the two-writer case.
    static let points: [CrashPoint?] = [.afterTopWritten, .afterSelectFlip, nil]

    public func plannedCycles(_ profile: TortureProfile) -> Int { 4 * profile.scale }

    /// States tried per commit: all of them up to this many, a seeded sample past it.
    static func bound(_ profile: TortureProfile) -> Int { profile == .quick ? 256 : 4096 }

    public func runCycle(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        var outcome = CycleOutcome()
        if let missing = FaultFSMount.missingOutcome(name, mode: "no-fuse", cycle: index) { return missing }
        var rng = SeededRandom(seed: seed)
        let deaths = CrashStatesScenario.deaths(cycle: index)
        let mode = CrashStatesScenario.mode(deaths)
        let workload = CommitWorkload(seed: seed)
        let before = CrashStatesScenario.cleanCommits(using: &rng)
        var notes: [String] = []
        let made = try CrashImage.make(
            dir: dir, workload: workload, seed: seed, model: context.options.fsModel, clean: before, deaths: deaths,
            environment: context.writerEnvironment, notes: &notes)
        outcome.notes += notes.map { "cycle \(index): \($0)" }
        let image: CrashImage
        switch made {
        case .failure(let f):
            outcome.events.append((mode, [.harness(f.description)], "crash-states cycle \(index)"))
            return outcome
        case .success(let i): image = i
        }
        let choices = image.choices
        let (masks, exhaustive) = image.masks(bound: CrashStatesScenario.bound(context.options.profile), using: &rng)
        var violations: [Violation] = []
        for (n, mask) in masks.enumerated() {
            let (newSectors, newSize) = image.state(mask: mask)
            let found = try image.check(
                image.state(newSectors: newSectors, newSize: newSize), at: dir + "/state.fief",
                oraclePath: dir + "/oracle.log",
                workload: workload, mode: mode)
            if !found.isEmpty {
                let shown = newSectors.sorted()
                let more = shown.count > 12 ? "..." : ""
                let size = image.sizeChoice ? ", \(newSize ? "new" : "old") size" : ""
                violations.append(
                    found[0].prefixed(
                        "state \(n + 1) of \(masks.count) (new sectors \(shown.prefix(12))\(more)\(size))"))
                if violations.count >= 5 { break }
            }
        }
        let covered = choices > 20 ? "2^\(choices)" : String(1 << choices)
        let dying = image.dying
        outcome.notes.append(
            "commit \(dying) killed at \(mode): "
                + "\(image.unsynced.count) unsynced sectors\(image.sizeChoice ? " and the size" : ""); "
                + "explored \(masks.count) of \(covered) states"
        )
        outcome.crashStates.append(
            CrashStateCoverage(
                cycle: index, commit: dying, crashPoint: mode, unsyncedSectors: image.unsynced.count,
                sizeChoice: image.sizeChoice, statesExplored: masks.count, exhaustive: exhaustive))
        outcome.crashPoints.insert(mode)
        outcome.faults += masks.count
        outcome.events.append(
            (mode, violations, "commit \(dying) killed at \(mode), \(masks.count) of \(covered) crash states"))
        return outcome
    }

    /// The crash points cycle `index`'s writers die at: one, or (every third cycle) a writer
    /// after its flip and the next before its data sync.
    static func deaths(cycle index: Int) -> [CrashPoint] {
        points[index % points.count].map { [$0] } ?? [.afterSelectFlip, .afterTopWritten]
    }

    /// The commits a cycle makes before its writers die: the first draw from its seed.
    static func cleanCommits(using rng: inout SeededRandom) -> UInt64 { UInt64(Int.random(in: 1...12, using: &rng)) }

    static func mode(_ deaths: [CrashPoint]) -> String {
        deaths.count > 1 ? "unsynced-flip-then-next" : deaths[0].rawValue
    }
}
