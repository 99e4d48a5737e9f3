import FaultFS
import Foundation
import SeededRandomness
import TortureSchema

/// `crash-states` for any target whose files live on the FaultFS mount: after some clean
/// commits, FaultFS kills the writer just before its n-th fsync (a store that never syncs
/// makes all its commits instead), and every state a power cut could then leave is built from
/// FaultFS's record of the operations since the last durable point (writes, resizes, creates,
/// renames, unlinks: `OperationStateSpace`) over a copy of the durable folder, every file and
/// directory entry included. The target's own verifier opens each state in a child process, as
/// in `power-cut`: it must open, check clean, hold every acknowledged commit and exactly one
/// committed state.
public struct TargetCrashStatesScenario: Scenario {
    public var name: String { "crash-states" }
    public init() {}

    public func plannedCycles(_ profile: TortureProfile) -> Int { 4 * profile.scale }

    /// States verified per crash: each costs a verifier process, so fewer than Fief's in-process
    /// checks. The run prints it.
    static func bound(_ profile: TortureProfile) -> Int { profile == .quick ? 256 : 512 }

    /// Commits made past the clean ones, at most: the kill comes first in a store that syncs.
    static let commitsAfter: UInt64 = 5

    public func runCycle(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        var outcome = CycleOutcome()
        if let missing = FaultFSMount.missingOutcome(name, mode: "no-fuse", cycle: index) { return missing }
        var rng = SeededRandom(seed: seed)
        let clean = UInt64.random(in: 1...6, using: &rng)
        let nth = Int.random(in: 1...4, using: &rng)
        let mode = "kill-before-fsync"
        let backing = dir + "/backing"
        let fs = FaultFSMount.forCycle(dir, seed: seed, context: context)
        try fs.mount()
        defer { fs.unmount() }
        let p = TargetProcesses(spec: context.options.target, storeDirectory: fs.mountpoint, scratch: dir, seed: seed)
        try p.setUp()
        let first = try p.writer(maxCommit: clean, tag: "clean")
        guard let ending = first.wait(timeoutSeconds: 120), ending == .exited(0) else {
            first.kill9Tree()
            let why = "the writer of the \(clean) clean commits failed: \(p.lastLine("clean"))"
            outcome.events.append(CycleEvent(mode, [.harness(why)], "crash-states cycle \(index)"))
            return outcome
        }
        try fs.ctl(["inject", "kill-caller", "op=fsync", "nth=\(nth)", "when=before", "once"])
        let writer = try p.writer(maxCommit: clean + TargetCrashStatesScenario.commitsAfter, tag: "killed")
        let killed = writer.wait(timeoutSeconds: 120)
        if killed == nil { writer.kill9Tree() }
        let pending = try CrashImage.decodePending(fs)
        try fs.ctl(["power-cut", "--mode", "drop-all"])
        fs.unmount()
        let durable = try DurableTree.read(backing)
        let search = CrashStateSearch(
            pending.operations, bound: TargetCrashStatesScenario.bound(context.options.profile))
        let states = dir + "/state"
        var kept = false
        let found = try search.run(using: &rng) { state in
            try durable.applying(state, of: pending.operations).write(into: states)
            let violations = try p.verify(directory: states, tag: "state").violations
            if !violations.isEmpty && !kept {
                // The first failing state as it was built, before its verifier recovered it.
                try durable.applying(state, of: pending.operations).write(into: dir + "/first-failing-state")
                kept = true
            }
            return violations
        }
        let when =
            killed == .exited(0)
            ? "the writer made all its commits (no fsync \(nth) times)" : "killed before fsync \(nth)"
        outcome.notes.append("cycle \(index): \(clean) clean commits, then \(when): \(search.summary(found))")
        search.record(
            found,
            search.coverage(
                found, cycle: index, commit: clean + 1, crashPoint: mode,
                unsyncedSectors: pending.operations.reduce(0) { $0 + $1.sectors }, sizeChoice: false),
            mode: mode, event: "\(when) after \(clean) clean commits, \(found.explored) of \(search.possible) states",
            into: &outcome)
        return outcome
    }
}
