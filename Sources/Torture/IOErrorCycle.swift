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
    var fault: String { get }
    var fs: FaultFSMount { get }
    /// The cycle's generator: the commits before the fault, then what `inject` draws.
    var rng: SeededRandom { get set }
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
        make: (_ fault: String, _ fs: FaultFSMount, _ rng: SeededRandom) -> Self
    ) throws -> CycleOutcome {
        let fault = faults[index % faults.count]
        if let missing = FaultFSMount.missingOutcome(scenario, mode: fault, cycle: index) { return missing }
        var cycle = make(fault, FaultFSMount.forCycle(dir, seed: seed, context: context), SeededRandom(seed: seed))
        return try cycle.run()
    }

    mutating func run() throws -> CycleOutcome {
        try fs.mount()
        defer { fs.unmount() }
        var outcome = CycleOutcome()
        var violations: [Violation] = []
        let warm = UInt64.random(in: 5...20, using: &rng)
        if let failed = try warmUp(upTo: warm) { violations.append(failed) }
        try inject()
        outcome.faults += 1
        let ending = try runFaulted(upTo: warm + 200)
        violations += judge(ending, outcome: &outcome)
        violations += try checkAfterFault()
        outcome.events.append(CycleEvent(fault, violations, describe(ending)))
        return outcome
    }

    func checkAfterFault() throws -> [Violation] {
        try fs.ctl(["clear"])
        var verdict = try verify(fs.mountpoint, tag: "through-mount")
        var violations = verdict.violations.map { $0.prefixed("after \(fault), through the mount") }
        if let failed = try resume(upTo: verdict.recoveredCommit + 10) { violations.append(failed) }
        try fs.ctl(["power-cut", "--mode", "drop-all"])
        fs.unmount()
        verdict = try verify(fs.backing, tag: "after-cut")
        violations += verdict.violations.map { $0.prefixed("after \(fault) and a power cut") }
        return violations
    }
}
