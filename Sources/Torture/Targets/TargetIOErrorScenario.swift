import Foundation
import SeededRandomness
import TortureSchema

/// `io-errors` for any target on the FaultFS mount: EIO on a write, an fsync that fails (and,
/// as Linux does, forgets the unsynced data), or ENOSPC past a quota, while a writer commits.
/// The target must report the error (the writer exits with it; a signal is a violation), lose
/// no acknowledged commit, and once the fault clears open clean and take new commits; a power
/// cut afterwards must lose nothing acknowledged. A fault that never fires (a target that
/// never syncs meets no failing fsync), or fires where the target does not report it, is
/// noted; what it did to the store is judged by the checks that follow.
public struct TargetIOErrorScenario: Scenario {
    public var name: String { "io-errors" }
    public init() {}

    static let faults = ["fsync-fail", "eio-write", "enospc"]

    public func plannedCycles(_ profile: TortureProfile) -> Int { 6 * profile.scale }

    public func runCycle(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        try TargetIOErrorCycle.run(
            name, cycle: index, faults: TargetIOErrorScenario.faults, seed: seed, dir: dir, context: context
        ) { fault in
            TargetIOErrorCycle(
                fault: fault,
                processes: TargetProcesses(
                    spec: context.options.target, storeDirectory: dir + "/mnt", scratch: dir, seed: seed))
        }
    }
}

/// One `io-errors` cycle on a target's store: the writer must exit with the error, and a
/// target that swallows a fault (or never meets it) is noted.
struct TargetIOErrorCycle: IOErrorCycle {
    var fault: IOFault
    let processes: TargetProcesses

    func warmUp(upTo commit: UInt64) throws -> Violation? {
        try processes.setUp()
        let warmEnding = try processes.writer(maxCommit: commit, tag: "warm").wait()
        return warmEnding == .exited(0)
            ? nil
            : Violation(
                .harness, "the writer failed before any fault (\(warmEnding)): \(processes.lastLine("warm"))")
    }

    mutating func inject() throws {
        switch fault.name {
        case "fsync-fail":
            try fault.fs.ctl(["inject", "fsync-fail", "nth=\(Int.random(in: 1...6, using: &fault.rng))", "once"])
        case "eio-write":
            try fault.fs.ctl(["inject", "eio", "op=write", "nth=\(Int.random(in: 1...20, using: &fault.rng))", "once"])
        default:
            let backing = fault.fs.backing
            let used = ((try? FileManager.default.contentsOfDirectory(atPath: backing)) ?? []).reduce(UInt64(0)) {
                sum, f in
                sum + ((try? FileManager.default.attributesOfItem(atPath: backing + "/" + f)[.size] as? UInt64) ?? 0)
            }
            try fault.fs.ctl([
                "inject", "enospc", "quota=\(used + UInt64.random(in: 8_192...200_000, using: &fault.rng))"
            ])
        }
    }

    /// Nil when the writer hung.
    func runFaulted(upTo commit: UInt64) throws -> ChildProcess.Ending? {
        try processes.writer(maxCommit: commit, tag: "fault").wait(timeoutSeconds: 180)
    }

    func judge(_ faulted: ChildProcess.Ending?, outcome: inout CycleOutcome) -> [Violation] {
        switch faulted {
        case .none:
            return [Violation(.integrity, "under \(fault.name) the writer hung for 180 s")]
        case .some(.signaled(let s)):
            return [
                Violation(
                    .integrity, "under \(fault.name) the target crashed (signal \(s)) instead of reporting the error")
            ]
        case .some(.exited(0)):
            // Fired or not, the writer never heard of it: the trace tells which.
            let trace = (try? String(contentsOfFile: fault.fs.tracePath, encoding: .utf8)) ?? ""
            let kind = fault.name == "eio-write" ? "eio" : fault.name
            outcome.notes.append(
                trace.contains("\"fault\":\"\(kind)\"")
                    ? "\(fault.name) fired in cycle \(fault.cycle), yet the writer saw no error "
                        + "(the target swallowed it, e.g. in a checkpoint or at close)"
                    : "\(fault.name) never fired in cycle \(fault.cycle): the writer made all its commits")
            return []
        case .some(.exited(_)):
            return processes.lastLine("fault").isEmpty
                ? [Violation(.harness, "under \(fault.name) the writer failed without saying why")] : []
        }
    }

    func describe(_ faulted: ChildProcess.Ending?) -> String {
        "\(fault.name) cycle \(fault.cycle): writer \(faulted.map { "\($0)" } ?? "hung"), "
            + "said: \(processes.lastLine("fault").prefix(200))"
    }

    func verify(_ directory: String, tag: String) throws -> TargetVerdict {
        try processes.verify(directory: directory, tag: tag)
    }

    func resume(upTo commit: UInt64) throws -> Violation? {
        let resumed = try processes.writer(maxCommit: commit, tag: "resume").wait(timeoutSeconds: 120)
        return resumed == .exited(0)
            ? nil
            : Violation(
                .integrity,
                "after the fault cleared, new commits failed "
                    + "(\(resumed.map { "\($0)" } ?? "hung")): \(processes.lastLine("resume"))")
    }
}
