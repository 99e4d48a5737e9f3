import Engine
import Foundation
import SeededRandomness
import TortureSchema

/// Readers that die and readers that race. Even cycles: reader processes holding pins are
/// SIGKILLed at seeded moments (while opening and pinning, while reading, while idle); the
/// writer that follows must reclaim their pins, so the file levels off instead of growing
/// with every commit. Odd cycles: reader processes (two threads each) run many short read
/// transactions while a writer commits as fast as it can (durability none); every read must
/// be exactly the state of the commit it claims to see.
public struct ReadersScenario: Scenario {
    public var name: String { "readers" }
    public init() {}

    public func plannedCycles(_ profile: TortureProfile) -> Int { 6 * profile.scale }

    /// Growth allowed over the measured commits once every reader is gone: free-list churn
    /// and live data moving, not held pages.
    static let slackPages: UInt64 = 160

    public func runCycle(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        index % 2 == 0
            ? try deaths(index, seed: seed, dir: dir, context: context)
            : try churn(index, seed: seed, dir: dir, context: context)
    }

    func deaths(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        try runDeaths(
            ReadersScenario.plan(seed: seed), dir: dir, workload: CommitWorkload(seed: seed),
            environment: context.writerEnvironment)
    }

    /// A reader-deaths cycle: commits, reader processes killed one by one (each followed by a
    /// few commits), then commits whose growth is measured.
    public struct Plan: Codable, Sendable, Equatable {
        /// One reader: killed `delayMicros` after it started opening (`whileOpening`), or
        /// after it said its snapshot is pinned.
        public struct Reader: Codable, Sendable, Equatable {
            public var whileOpening: Bool
            public var delayMicros: UInt32
        }
        public var warm: UInt64 = 60
        public var readers: [Reader]
        public var between: UInt64 = 5
        public var after: UInt64 = 20
        public var measured: UInt64 = 40
    }

    /// A cycle's readers, from its seed.
    public static func plan(seed: UInt64) -> Plan {
        var rng = SeededRandom(seed: seed)
        return Plan(
            readers: (0..<4).map { _ in
                Int.random(in: 0..<3, using: &rng) == 0
                    ? Plan.Reader(whileOpening: true, delayMicros: UInt32.random(in: 0...20_000, using: &rng))
                    : Plan.Reader(whileOpening: false, delayMicros: UInt32.random(in: 0...60_000, using: &rng))
            })
    }

    func runDeaths(_ plan: Plan, dir: String, workload: CommitWorkload, environment: [String: String]) throws
        -> CycleOutcome
    {
        var outcome = CycleOutcome()
        let cycle = try CrashCycle.scheduled(
            dbPath: dir + "/readers.fief", oraclePath: dir + "/oracle.log", workload: workload)
        var committed: UInt64 = 0
        var violations: [Violation] = []
        let writers = TaggedWriters(cycle: cycle, dir: dir, environment: environment)
        func commit(_ n: UInt64, _ tag: String) throws {
            committed += n
            let e = try writers.start(upTo: committed, tag).wait()
            if e != .exited(0) {
                violations.append(
                    .harness("the writer \(e) (commits up to \(committed)); see \(writers.outputPath(tag))"))
            }
        }
        try commit(plan.warm, "warm")
        var moments: [String] = []
        for (r, reader) in plan.readers.enumerated() {
            let ready = "\(dir)/reader-\(r).ready"
            let child = try ChildProcess(
                .holdSnapshot(db: cycle.dbPath, ready: ready, seconds: 60),
                output: "\(dir)/reader-\(r).out", label: "reader")
            if reader.whileOpening {
                usleep(reader.delayMicros)
                moments.append("opening or pinning")
            } else {
                child.awaitFile(ready, pollMicros: 2_000)
                usleep(reader.delayMicros)
                moments.append("holding its snapshot")
            }
            child.kill9()
            _ = child.wait()
            try commit(plan.between, "between-\(r)")
        }
        outcome.crashPoints.formUnion(moments.map { "reader-killed-\($0.replacingOccurrences(of: " ", with: "-"))" })
        try commit(plan.after, "after")
        let before = fileSize(cycle.dbPath)
        try commit(plan.measured, "measured")
        let grown = fileSize(cycle.dbPath) &- before
        if fileSize(cycle.dbPath) > before && grown > ReadersScenario.slackPages * 4096 {
            violations.append(
                .harness(
                    "after \(plan.readers.count) readers died (\(moments.joined(separator: ", "))), "
                        + "\(plan.measured) commits grew the file by \(grown / 4096) pages "
                        + "(allowed \(ReadersScenario.slackPages)): their pins still hold pages"))
        }
        violations += cycle.verify().violations
        outcome.events.append(
            CycleEvent(
                "reader-deaths", violations,
                "\(plan.readers.count) readers killed (\(moments.joined(separator: ", "))), "
                    + "then \(plan.after + plan.measured) commits"
            ))
        return outcome
    }

    func churn(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        try runChurn(Churn(), dir: dir, workload: CommitWorkload(seed: seed), environment: context.writerEnvironment)
    }

    /// A churn cycle's readers: processes, threads in each, and how long they read.
    public struct Churn: Codable, Sendable, Equatable {
        public var processes = 2
        public var threads = 2
        public var seconds = 1.5
    }

    func runChurn(_ plan: Churn, dir: String, workload: CommitWorkload, environment: [String: String]) throws
        -> CycleOutcome
    {
        var outcome = CycleOutcome()
        let cycle = try CrashCycle.scheduled(
            dbPath: dir + "/churn.fief", oraclePath: dir + "/oracle.log", workload: workload)
        let writer = try ChildProcess(
            cycle.writer(maxCommit: UInt64.max / 2, durability: .none),
            environment: environment, output: dir + "/writer.out", label: "writer")
        // Readers start once the file exists.
        writer.awaitFile(cycle.dbPath, pollMicros: 2_000)
        let readers = try (0..<plan.processes).map { r in
            try ChildProcess(
                .churnReader(db: cycle.dbPath, seed: workload.seed, seconds: plan.seconds, threads: plan.threads),
                environment: environment, output: "\(dir)/reader-\(r).out", label: "reader")
        }
        var violations: [Violation] = []
        var reads = 0
        for (r, c) in readers.enumerated() {
            let e = c.wait()
            let text = ((try? String(contentsOfFile: "\(dir)/reader-\(r).out", encoding: .utf8)) ?? "")
                .trimmingCharacters(in: .whitespacesAndNewlines)
            if e == .exited(0) {
                reads += Int(text.split(separator: " ").first ?? "") ?? 0
            } else {
                violations.append(.harness("reader \(r) \(e): \(text)"))
            }
        }
        writer.kill9()
        _ = writer.wait()
        let verdict = cycle.verify()
        violations += verdict.violations
        if reads == 0 && violations.isEmpty { violations.append(.harness("the readers made no read at all")) }
        outcome.events.append(
            CycleEvent(
                "reader-churn", violations,
                "\(plan.processes) processes x \(plan.threads) threads made \(reads) checked reads "
                    + "while the writer reached commit \(verdict.recoveredCommit)"
            ))
        return outcome
    }

    func fileSize(_ path: String) -> UInt64 {
        var st = stat()
        return stat(path, &st) == 0 ? UInt64(st.st_size) : 0
    }
}
