import SeededRandomness
import TortureSchema

/// The cycle both `io-errors` scenarios run, Fief's and any target's, on a FaultFS mount:
/// 5 to 20 commits before the fault, then the fault armed while a writer commits into it (up
/// to 200 more); the store must report it (judged from how the writer ended). Then, with the
/// fault cleared, the store read through the mount must hold every acknowledged commit and
/// take 10 new ones, and after a power cut that drops all unsynced data, the backing folder
/// must still hold them. The commit counts are the scenario's, the same for every store.
protocol IOErrorCycle {
    /// How the faulted writer ended.
    associatedtype Ending
    /// What the store's recovery check found.
    associatedtype Verdict: StoreVerdict
    /// The fault, where it is armed and the generator: what `run` draws them from.
    var fault: IOFault { get set }
    /// Commits up to `commit`, before the fault; a violation when they failed.
    func warmUp(upTo commit: UInt64) throws -> Violation?
    mutating func inject() throws
    /// A writer committing up to `commit` into the armed fault.
    func runFaulted(upTo commit: UInt64) throws -> Ending
    /// What the ending says of how the store reported the fault; notes go to `outcome`.
    func judge(_ ending: Ending, outcome: inout CycleOutcome) -> [Violation]
    func describe(_ ending: Ending) -> String
    /// Checks the store in a folder (the mount, then the backing folder); the tag names its files.
    func verify(_ directory: String, tag: String) throws -> Verdict
    /// Commits up to `commit`, after the fault cleared; a violation when they fail.
    func resume(upTo commit: UInt64) throws -> Violation?
}

/// The fault of one `io-errors` cycle, the same for every store: which fault (one of the
/// scenario's, in turn), in which cycle, the FaultFS mount it is armed on, and the cycle's
/// generator (the commits before the fault, then what `inject` draws).
struct IOFault {
    let name: String
    let cycle: Int
    let fs: FaultFSMount
    var rng: SeededRandom
}

/// A recovery check's verdict on a store, Fief's (`RecoveryVerdict`) or a target's
/// (`TargetVerdict`): the commit it holds, and what is wrong with it.
protocol StoreVerdict {
    var recoveredCommit: UInt64 { get }
    var violations: [Violation] { get }
}

extension RecoveryVerdict: StoreVerdict {}
extension TargetVerdict: StoreVerdict {}

extension IOErrorCycle {
    /// Cycle `index` of an `io-errors` scenario: its fault taken in turn from `faults`, and the
    /// cycle `make` builds around it on a fresh FaultFS mount, with a generator from `seed`.
    static func run(
        _ scenario: String, cycle index: Int, faults: [String], seed: UInt64, dir: String, context: ScenarioContext,
        make: (IOFault) -> Self
    ) throws -> CycleOutcome {
        let name = faults[index % faults.count]
        if let missing = FaultFSMount.missingOutcome(scenario, mode: name, cycle: index) { return missing }
        var cycle = make(
            IOFault(
                name: name, cycle: index, fs: FaultFSMount.forCycle(dir, seed: seed, context: context),
                rng: SeededRandom(seed: seed)))
        return try cycle.run()
    }

    mutating func run() throws -> CycleOutcome {
        try fault.fs.mount()
        defer { fault.fs.unmount() }
        var outcome = CycleOutcome()
        var violations: [Violation] = []
        let warm = UInt64.random(in: 5...20, using: &fault.rng)
        if let failed = try warmUp(upTo: warm) { violations.append(failed) }
        try inject()
        outcome.faults += 1
        let ending = try runFaulted(upTo: warm + 200)
        violations += judge(ending, outcome: &outcome)
        violations += try checkAfterFault()
        outcome.events.append(CycleEvent(fault.name, violations, describe(ending)))
        return outcome
    }

    func checkAfterFault() throws -> [Violation] {
        try fault.fs.ctl(["clear"])
        var verdict = try verify(fault.fs.mountpoint, tag: "through-mount")
        var violations = verdict.violations.map { $0.prefixed("after \(fault.name), through the mount") }
        if let failed = try resume(upTo: verdict.recoveredCommit + 10) { violations.append(failed) }
        try fault.fs.ctl(["power-cut", "--mode", "drop-all"])
        fault.fs.unmount()
        verdict = try verify(fault.fs.backing, tag: "after-cut")
        violations += verdict.violations.map { $0.prefixed("after \(fault.name) and a power cut") }
        return violations
    }
}
