import FaultFS
import Foundation
import TortureSchema

/// One power cut of the `power-cut` scenario: how its writer dies, then which FaultFS cut
/// mode takes what was unsynced. The scenario draws four per cycle from its seed; a replay
/// lists them.
public struct PowerCut: Codable, Sendable, Equatable, CustomStringConvertible {
    public enum Death: String, Codable, Sendable {
        /// The writer kills itself the `nth` time it reaches `crashPoint`.
        case crashPoint = "crash-point"
        /// FaultFS kills the writer just before the select-bit sync (or the data sync) of the
        /// `nth` commit after a warm-up commit.
        case killBeforeSelectSync = "faultfs-kill-before-select-sync"
        case killBeforeDataSync = "faultfs-kill-before-data-sync"
        /// `threads` writer threads run; the power goes `delayMicros` in (timing-dependent).
        case running
    }
    public var death: Death
    public var crashPoint: String?
    public var nth: Int?
    public var threads: Int?
    public var delayMicros: UInt32?
    /// A `PowerCutScenario.modes` name.
    public var mode: String
    /// The mount's seed (what drop-random and torn cuts draw from).
    public var faultfsSeed: UInt64

    public var isDeterministic: Bool { death != .running }

    public var description: String {
        switch death {
        case .crashPoint: return "\(mode) power cut after a crash at \(crashPoint ?? "?"):\(nth ?? 1)"
        case .killBeforeSelectSync:
            return
                "\(mode) power cut after FaultFS killed the writer before "
                + "the select-bit sync of commit \(nth ?? 1) of the run"
        case .killBeforeDataSync:
            return
                "\(mode) power cut after FaultFS killed the writer "
                + "before the data sync of commit \(nth ?? 1) of the run"
        case .running:
            return "\(mode) power cut \((delayMicros ?? 0) / 1000) ms into a run of \(threads ?? 1) writer threads"
        }
    }

    /// Cuts the power under each event in turn on one file in `dir` (a FaultFS mount of
    /// `dir/backing`), checking the backing file after each; stops at the first violation.
    static func run(
        _ cuts: [PowerCut], dir: String, workload: CommitWorkload, environment: [String: String],
        model: PersistenceModel
    ) throws -> CycleOutcome {
        var events = FiefPowerCuts(cuts: cuts, dir: dir, workload: workload, environment: environment)
        return try events.run(dir: dir, model: model)
    }
}
