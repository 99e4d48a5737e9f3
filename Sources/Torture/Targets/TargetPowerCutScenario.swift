#if canImport(Glibc)
    import Glibc
#endif
import Foundation
import SeededRandomness
import TortureSchema

/// `power-cut` for any target whose files live on the FaultFS mount. Each cycle cuts the power
/// three times on one store, under one mode (drop-all, drop-random, prefix, torn-512,
/// torn-4096, rotating by cycle): while a writer commits; after FaultFS killed the process
/// that called the n-th fsync, just before it (for `exec`, the adapter); and after FaultFS
/// killed the process that made the n-th write, just after it. The backing folder then holds
/// what a disk could hold after losing power, and the store in it must open, check clean,
/// hold every acknowledged commit (durability) and exactly one committed state (atomicity).
public struct TargetPowerCutScenario: Scenario {
    public var name: String { "power-cut" }
    public init() {}

    static let events = ["while-committing", "kill-before-fsync", "kill-after-write"]
    /// Commits a writer may make in a FaultFS-kill event; a target that never syncs makes
    /// them all, and the cut that follows shows what that costs.
    static let commitsPerEvent: UInt64 = 30

    public func plannedCycles(_ profile: TortureProfile) -> Int { 10 * profile.scale }

    public func runCycle(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        var outcome = CycleOutcome()
        if let why = FaultFSMount.unavailableReason() {
            outcome.events.append(
                CycleEvent(
                    "no-fuse", [.harness("power-cut cannot run on this machine: \(why)")], "power-cut cycle \(index)"))
            return outcome
        }
        var rng = SeededRandom(seed: seed)
        let mode = PowerCutScenario.modes[index % PowerCutScenario.modes.count]
        let backing = dir + "/backing", mnt = dir + "/mnt"
        let p = TargetProcesses(spec: context.options.target, storeDirectory: mnt, scratch: dir, seed: seed)
        var current: UInt64 = 0
        for (e, event) in TargetPowerCutScenario.events.enumerated() {
            let fs = FaultFSMount(
                backing: backing, mountpoint: mnt, seed: seed &+ UInt64(e),
                tracePath: "\(dir)/faultfs-trace-\(e).jsonl", model: context.options.fsModel)
            try fs.mount()
            defer { fs.unmount() }
            if e == 0 { try p.setUp() }
            var description: String
            var notes: [String] = []
            switch event {
            case "while-committing":
                let writer = try p.writer(maxCommit: UInt64.max / 2, tag: "\(e)")
                let delay = UInt32.random(in: 50_000...400_000, using: &rng)
                usleep(delay)
                // Frozen first: a store that reopens its file per commit would otherwise write
                // through a fresh handle after the cut, which no real power loss allows.
                writer.stopTree()
                try fs.ctl(["power-cut"] + mode.args)
                writer.kill9Tree()
                _ = writer.wait()
                description = "\(mode.name) power cut \(delay / 1000) ms into a writer's run"
            default:
                let (op, nth, when) =
                    event == "kill-before-fsync"
                    ? ("fsync", Int.random(in: 1...8, using: &rng), "before")
                    : ("write", Int.random(in: 1...60, using: &rng), "after")
                try fs.ctl(["inject", "kill-caller", "op=\(op)", "nth=\(nth)", "when=\(when)", "once"])
                let writer = try p.writer(maxCommit: current + TargetPowerCutScenario.commitsPerEvent, tag: "\(e)")
                let ending = writer.wait(timeoutSeconds: 120)
                if ending == nil { writer.kill9Tree() }
                try fs.ctl(["power-cut"] + mode.args)
                description = "\(mode.name) power cut after FaultFS killed the caller of \(op) \(nth) (\(when) it)"
                if ending == .exited(0) {
                    notes.append("the \(op) rule never fired: the writer made all its commits (no \(op) \(nth) times)")
                }
            }
            outcome.crashPoints.insert(event)
            outcome.faults += 1
            fs.unmount()
            // The store as the cut left it, before recovery (the verifier's own open) changes
            // it: kept as evidence when the verdict fails.
            let found = "\(dir)/store-after-event-\(e)"
            p.snapshot(backing, to: found)
            let verdict = try p.verify(directory: backing, tag: "\(e)")
            current = verdict.recoveredCommit
            if verdict.passed { try? FileManager.default.removeItem(atPath: found) }
            outcome.events.append(
                CycleEvent(
                    mode.name, verdict.violations,
                    "\(description); store at commit \(verdict.recoveredCommit), acknowledged \(verdict.lastAck)"
                        + notes.map { "; \($0)" }.joined()
                ))
            // A lost commit leaves a usable store to cut again; a damaged one does not.
            if verdict.violations.contains(where: { $0.kind.verdictClass != .durability }) { break }
        }
        return outcome
    }
}
