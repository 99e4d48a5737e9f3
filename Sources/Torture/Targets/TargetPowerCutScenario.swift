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
        if let missing = FaultFSMount.missingOutcome(name, mode: "no-fuse", cycle: index) { return missing }
        var events = TargetPowerCuts(
            processes: TargetProcesses(
                spec: context.options.target, storeDirectory: dir + "/mnt", scratch: dir, seed: seed),
            mode: PowerCutScenario.modes[index % PowerCutScenario.modes.count], rng: SeededRandom(seed: seed))
        return try events.run(dir: dir, model: context.options.fsModel)
    }
}

/// The three power cuts of one cycle on one store, under one mode. What an event's writer and
/// cut leave for the judge is what happened, in words.
struct TargetPowerCuts: PowerCutEvents {
    let processes: TargetProcesses
    let mode: PowerCutMode
    var rng: SeededRandom
    /// The commit the store holds, as last recovered.
    var current: UInt64 = 0

    var eventCount: Int { TargetPowerCutScenario.events.count }
    func faultfsSeed(_ e: Int) -> UInt64 { processes.seed &+ UInt64(e) }

    mutating func strike(_ e: Int, on fs: FaultFSMount, outcome: inout CycleOutcome) throws -> String? {
        if e == 0 { try processes.setUp() }
        let event = TargetPowerCutScenario.events[e]
        let strike =
            event == "while-committing"
            ? try cutWhileCommitting(e, fs: fs)
            : try cutAfterKill(e, killBeforeFsync: event == "kill-before-fsync", fs: fs)
        outcome.crashPoints.insert(event)
        return strike
    }

    mutating func cutWhileCommitting(_ e: Int, fs: FaultFSMount) throws -> String {
        let writer = try processes.writer(maxCommit: UInt64.max / 2, tag: "\(e)")
        let delay = UInt32.random(in: 50_000...400_000, using: &rng)
        usleep(delay)
        // Frozen first: a store that reopens its file per commit would otherwise write
        // through a fresh handle after the cut, which no real power loss allows.
        writer.stopTree()
        try fs.cutPower(mode)
        writer.kill9Tree()
        _ = writer.wait()
        return "\(mode.name) power cut \(delay / 1000) ms into a writer's run"
    }

    /// FaultFS kills the process that calls the n-th fsync (just before it) or makes the n-th
    /// write (just after it); a writer that makes all its commits first ends on its own.
    mutating func cutAfterKill(_ e: Int, killBeforeFsync: Bool, fs: FaultFSMount) throws -> String {
        let (op, nth, when) =
            killBeforeFsync
            ? ("fsync", Int.random(in: 1...8, using: &rng), "before")
            : ("write", Int.random(in: 1...60, using: &rng), "after")
        try fs.ctl(["inject", "kill-caller", "op=\(op)", "nth=\(nth)", "when=\(when)", "once"])
        let writer = try processes.writer(
            maxCommit: current + TargetPowerCutScenario.commitsPerEvent, tag: "\(e)")
        let ending = writer.wait(timeoutSeconds: 120)
        if ending == nil { writer.kill9Tree() }
        try fs.cutPower(mode)
        guard ending != .exited(0) else {
            // The writer was never killed: the event must not say it was.
            return "\(mode.name) power cut after the writer made all its commits: "
                + "the \(op) rule never fired (no \(op) \(nth) times)"
        }
        return "\(mode.name) power cut after FaultFS killed the caller of \(op) \(nth) (\(when) it)"
    }

    mutating func judge(_ e: Int, _ strike: String, backing: String) throws -> (event: CycleEvent, stop: Bool) {
        // The store as the cut left it, before recovery (the verifier's own open) changes
        // it: kept as evidence when the verdict fails.
        let found = "\(processes.scratch)/store-after-event-\(e)"
        processes.snapshot(backing, to: found)
        let verdict = try processes.verify(directory: backing, tag: "\(e)")
        current = verdict.recoveredCommit
        if verdict.passed { try? FileManager.default.removeItem(atPath: found) }
        let event = CycleEvent(
            mode.name, verdict.violations,
            "\(strike); store at commit \(verdict.recoveredCommit), acknowledged \(verdict.lastAck)")
        // A lost commit leaves a usable store to cut again; a damaged one does not.
        return (event, verdict.violations.contains(where: { $0.kind.verdictClass != .durability }))
    }
}
