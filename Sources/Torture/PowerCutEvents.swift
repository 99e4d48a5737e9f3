import FaultFS
import TortureSchema

/// The loop both power-cut scenarios run, Fief's (`PowerCut.run`) and any target's
/// (`TargetPowerCutScenario`): each event gets a fresh FaultFS mount of `dir/backing` at
/// `dir/mnt`, seeded per event and traced to `faultfs-trace-<e>.jsonl`; the event's writer runs
/// there until the power goes; then the mount comes down and what a disk kept, the backing
/// folder, is judged. The two differ only in how a writer dies and what its store must hold.
protocol PowerCutEvents {
    /// What an event's writer and cut leave for the judge.
    associatedtype Strike
    var eventCount: Int { get }
    func faultfsSeed(_ e: Int) -> UInt64
    /// Runs event `e`'s writer on the mount and cuts the power; nil when the event could not be
    /// staged (the reason is an event in `outcome`) and there is nothing to judge.
    mutating func strike(_ e: Int, on fs: FaultFSMount, outcome: inout CycleOutcome) throws -> Strike?
    /// Checks the backing folder after the cut; `stop` when the store is no longer one to cut again.
    mutating func judge(_ e: Int, _ strike: Strike, backing: String) throws -> (event: CycleEvent, stop: Bool)
}

extension PowerCutEvents {
    mutating func run(dir: String, model: PersistenceModel) throws -> CycleOutcome {
        var outcome = CycleOutcome()
        for e in 0..<eventCount {
            let fs = FaultFSMount(
                backing: dir + "/backing", mountpoint: dir + "/mnt", seed: faultfsSeed(e),
                tracePath: "\(dir)/faultfs-trace-\(e).jsonl", model: model)
            try fs.mount()
            defer { fs.unmount() }
            guard let strike = try strike(e, on: fs, outcome: &outcome) else { continue }
            outcome.faults += 1
            fs.unmount()
            let judged = try judge(e, strike, backing: fs.backing)
            outcome.events.append(judged.event)
            if judged.stop { break }
        }
        return outcome
    }
}
