import FaultFS
import SeededRandomness
import TortureSchema

/// The FaultFS faults the other scenarios do not use, one per cycle in turn, each on a
/// committing writer and followed by a power cut:
///
/// - `short-write`: a write returns fewer bytes than asked. The engine must finish the write
///   or fail with a typed error; never treat it as complete.
/// - `latency`: random delays on every operation while a writer is SIGKILLed at a random
///   time. Timing changes, verdicts must not.
/// - `bitflip`: reads return flipped bits (on a cold page cache). A reader verifying
///   checksums must get a typed error or exactly the committed data, never other data. The
///   same reader without verification is run too, and what it got is noted.
/// - `kill-caller`: FaultFS kills the writer at the n-th write or sync of the file, before
///   or after it takes effect, walking every syscall of the first commits over the cycles.
/// - `fsync-lie`: fsync succeeds but makes nothing durable, then the power is cut. The
///   suite must see acknowledged commits lost and name the lying fsync as the cause; that
///   loss is the expected outcome (it shows what a lying disk does to any engine), and the
///   absence of a loss is the violation.
public struct FaultKindsScenario: Scenario {
    public var name: String { "faults" }
    public init() {}

    public static let kinds = ["short-write", "latency", "bitflip", "kill-caller", "fsync-lie"]

    public func plannedCycles(_ profile: TortureProfile) -> Int { 10 * profile.scale }

    public func runCycle(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        let plan = FaultKindsScenario.plan(cycle: index, seed: seed)
        if let missing = FaultFSMount.missingOutcome(name, mode: plan.kind, cycle: index) { return missing }
        var outcome = try run(
            plan, dir: dir, seed: seed, environment: context.writerEnvironment, model: context.options.fsModel)
        if let e = outcome.events.indices.last {
            outcome.events[e].description = "\(plan.kind) cycle \(index)" + outcome.events[e].description
        }
        return outcome
    }

    /// One cycle: commits, one fault on the file while a writer (or reader) works, a power cut.
    public struct Plan: Codable, Sendable, Equatable {
        public var kind: String
        /// Commits before the fault.
        public var warm: UInt64
        public var faultfsSeed: UInt64
        /// short-write: the write that comes up short; kill-caller: the write or sync killed.
        public var nth: Int?
        /// kill-caller: before or after the operation takes effect.
        public var when: String?
        /// latency: how long the writer runs before its SIGKILL.
        public var killAfterMicros: UInt32?
        /// bitflip: the rounds run, each on a fresh mount (a cold page cache).
        public var rounds: [Int]?
        /// fsync-lie: commits made under the lie.
        public var commitsUnderLie: UInt64?
    }

    /// Cycle `index`'s plan, from its seed: the kinds in turn.
    public static func plan(cycle index: Int, seed: UInt64) -> Plan {
        var rng = SeededRandom(seed: seed)
        let kind = kinds[index % kinds.count]
        var p = Plan(kind: kind, warm: UInt64.random(in: 3...10, using: &rng), faultfsSeed: seed)
        switch kind {
        case "short-write": p.nth = Int.random(in: 1...3, using: &rng)
        case "latency": p.killAfterMicros = UInt32.random(in: 100_000...600_000, using: &rng)
        case "kill-caller":
            p.nth = 1 + (index / kinds.count) % 12
            p.when = (index / kinds.count / 12) % 2 == 0 ? "before" : "after"
        case "bitflip": p.rounds = Array(0..<12)
        default: p.commitsUnderLie = UInt64.random(in: 3...8, using: &rng)
        }
        return p
    }

    func run(_ plan: Plan, dir: String, seed: UInt64, environment: [String: String], model: PersistenceModel) throws
        -> CycleOutcome
    {
        var cycle = FaultKindsCycle(
            plan: plan, dir: dir, seed: seed, environment: environment, model: model,
            fs: FaultFSMount(
                backing: dir + "/backing", mountpoint: dir + "/mnt", seed: plan.faultfsSeed,
                tracePath: dir + "/faultfs-trace.jsonl", model: model))
        return try cycle.run()
    }
}
