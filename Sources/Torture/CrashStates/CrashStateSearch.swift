import FaultFS
import Foundation
import SeededRandomness
import TortureSchema

/// The states of one crashed commit, each checked: Fief's scenario opens a file in process,
/// a generic target's runs its verifier on a folder; both explore, count and report the same way.
struct CrashStateSearch {
    let operations: [PendingOperations.Operation]
    let space: OperationStateSpace
    /// All states up to this many, a seeded sample past it.
    let bound: Int
    /// Failing states reported at most; the search stops there.
    static let reportedFailures = 5

    init(_ operations: [PendingOperations.Operation], bound: Int) {
        self.operations = operations
        space = OperationStateSpace(operations)
        self.bound = bound
    }

    struct Outcome {
        var violations: [Violation] = []
        var explored = 0
        var exhaustive = false
        var faults = 0
    }

    /// Checks each state with `check` (its violations, none when it recovers), and names each
    /// failing one by its operations.
    func run(using rng: inout SeededRandom, check: (OperationState) throws -> [Violation]) rethrows -> Outcome {
        let (states, exhaustive) = space.states(bound: bound, using: &rng)
        var outcome = Outcome(explored: states.count, exhaustive: exhaustive)
        for (n, state) in states.enumerated() {
            let found = try check(state)
            guard !found.isEmpty else { continue }
            outcome.violations.append(
                found[0].prefixed("state \(n + 1) of \(states.count) (\(state.describe(operations)))"))
            if outcome.violations.count >= CrashStateSearch.reportedFailures { break }
        }
        return outcome
    }

    var possible: String { space.count.map(String.init) ?? String(format: "%.3g", space.possible) }

    /// "4 unsynced operations (3 writes or resizes, 1 name change, 40 tears); explored 200 of
    /// 200 states, exhaustive (bound 1024)".
    func summary(_ o: Outcome) -> String {
        "\(operations.count) unsynced operations (\(space.data.count) writes or resizes, "
            + "\(space.names.count) name changes, \(space.tears) tears); "
            + "explored \(o.explored) of \(possible) states, "
            + (o.exhaustive ? "exhaustive (bound \(bound))" : "sampled past the bound of \(bound)")
    }

    /// Adds a searched crash to its cycle's outcome: its coverage, its crash point, the states
    /// explored (as faults) and its event, with the failing states as violations.
    func record(
        _ o: Outcome, _ coverage: CrashStateCoverage, mode: String, event: String, into outcome: inout CycleOutcome
    ) {
        outcome.crashStates.append(coverage)
        outcome.crashPoints.insert(mode)
        outcome.faults += o.explored
        outcome.events.append(CycleEvent(mode, o.violations, event))
    }

    func coverage(_ o: Outcome, cycle: Int, commit: UInt64, crashPoint: String, unsyncedSectors: Int, sizeChoice: Bool)
        -> CrashStateCoverage
    {
        CrashStateCoverage(
            cycle: cycle, commit: commit, crashPoint: crashPoint, unsyncedSectors: unsyncedSectors,
            sizeChoice: sizeChoice, statesExplored: o.explored, exhaustive: o.exhaustive,
            operations: operations.count, operationStatesPossible: space.possible)
    }
}
