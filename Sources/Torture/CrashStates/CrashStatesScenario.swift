import Engine
import FaultFS
import Foundation
import SeededRandomness
import TortureSchema

/// Every state a power cut could leave after a commit died, enumerated rather than drawn, in
/// the spirit of ALICE and CrashMonkey but on a real FUSE mount: the file is copied while it
/// is wholly durable, a writer is killed in the next commit at a crash point, and FaultFS
/// hands over the write operations made since the file's last sync, with their bytes. A
/// crash state is a subset of those operations that reached the disk, with at most one of
/// them torn at a sector boundary (`OperationStateSpace`): a disk loses or tears writes, it
/// does not scramble the sectors of a page written whole. A commit's handful of writes gives
/// a few hundred states, so nearly every commit is explored exhaustively (all states up to the
/// profile's bound, a seeded sample past it). Each state is built over the durable folder,
/// opened, checked and compared with the oracle, and a failing one is stated as the operations
/// that persisted, were lost and were torn. Killed after its top was written (before the data
/// sync), a commit may leave only the version before it; after its select-bit flip (data
/// synced), the version before or itself. Every third cycle two writers die in a row: the
/// first after its flip (written, never synced), the next before its data sync, so a cut may
/// leave the flip undone under pages the second writer wrote: it must only have reused pages
/// that the version before the flip no longer needs.
public struct CrashStatesScenario: Scenario {
    public var name: String { "crash-states" }
    public init() {}

    /// The crash point of the commit under test; `nil` for the two-writer case. After the flip
    /// first (the version before and the new one: a commit whose data sync is missing fails
    /// there, in the first cycle, as under a power cut), then the two writers (their states
    /// hold three versions and the pages two commits wrote): the deaths that catch most, soonest.
    static let points: [CrashPoint?] = [.afterSelectFlip, nil, .afterTopWritten]

    public func plannedCycles(_ profile: TortureProfile) -> Int { 4 * profile.scale }

    /// Operation-level states tried per commit: all of them up to this many, a seeded sample
    /// past it. The run prints it.
    static func bound(_ profile: TortureProfile) -> Int { profile == .quick ? 1024 : 8192 }

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
            outcome.events.append(CycleEvent(mode, [.harness(f.description)], "crash-states cycle \(index)"))
            return outcome
        case .success(let i): image = i
        }
        let search = CrashStateSearch(image.operations, bound: CrashStatesScenario.bound(context.options.profile))
        var kept = false
        let found = try search.run(using: &rng) { state in
            let bytes = image.bytes(state)
            let violations = try image.check(
                bytes, at: dir + "/state.fief", oraclePath: dir + "/oracle.log", workload: workload, mode: mode)
            if !violations.isEmpty && !kept {
                // The first failing state's file, kept with the cycle's artifacts.
                try bytes.write(to: URL(fileURLWithPath: dir + "/first-failing-state.fief"))
                kept = true
            }
            return violations
        }
        let dying = image.dying
        outcome.notes.append(
            "commit \(dying) killed at \(mode): \(search.summary(found)); \(image.unsynced.count) sectors")
        search.record(
            found,
            search.coverage(
                found, cycle: index, commit: dying, crashPoint: mode, unsyncedSectors: image.unsynced.count,
                sizeChoice: image.sizeChoice),
            mode: mode,
            event: "commit \(dying) killed at \(mode), \(found.explored) of \(search.possible) crash states",
            into: &outcome)
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
