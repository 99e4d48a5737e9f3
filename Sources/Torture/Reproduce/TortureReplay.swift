import Engine
import Foundation

/// A failing crash cycle as one small JSON document: the writers' deaths, the commits they
/// make, the engine they run and the violation expected. `fief torture replay FILE` runs it on
/// any machine (real processes killed at real crash points, the real recovery check) and says
/// whether it still fails; `fief torture shrink` writes it, as small as it could make it.
public struct TortureReplay: Codable, Sendable, Equatable {
    /// The file format's version.
    public var replay = 1
    public var scenario = "crash-points"
    /// The broken engine variant the writers ran (debug builds), if any.
    public var broken: String?
    /// The seed the run drew its encryption key from, when its files were encrypted.
    public var encryptionSeed: UInt64?
    /// The workload's seed: bank transfers, and every commit `commits` does not spell out.
    public var seed: UInt64
    public var deaths: [WriterDeath]
    /// Explicit commits (commit i is `commits[i - 1]`); nil: derived from `seed`.
    public var commits: [PlannedCommit]?
    /// The violation the case is kept for.
    public var expected: Expected?
    /// Where the case came from and how big it was before shrinking.
    public var origin: Origin?

    public struct Expected: Codable, Sendable, Equatable {
        public var kind: ViolationKind
        public var violation: String
    }

    public struct Origin: Codable, Sendable, Equatable {
        public var runSeed: UInt64?
        public var cycle: Int?
        public var before: ReplaySize
        public var shrinkSeconds: Double?
        public var candidatesRun: Int?

        public init(runSeed: UInt64?, cycle: Int?, before: ReplaySize, shrinkSeconds: Double? = nil, candidatesRun: Int? = nil) {
            self.runSeed = runSeed
            self.cycle = cycle
            self.before = before
            self.shrinkSeconds = shrinkSeconds
            self.candidatesRun = candidatesRun
        }
    }

    public init(seed: UInt64, deaths: [WriterDeath], commits: [PlannedCommit]? = nil, broken: String? = nil) {
        self.seed = seed
        self.deaths = deaths
        self.commits = commits
        self.broken = broken
    }

    /// The case of a failed crash-points cycle, from the artifacts folder its run kept.
    public init(artifacts dir: String) throws {
        guard let data = FileManager.default.contents(atPath: dir + "/cycle.json"),
              let record = try? JSONDecoder().decode(ReproductionRecord.self, from: data) else {
            throw TortureError.invalid("\(dir)/cycle.json is missing or unreadable; give a folder printed by a failed torture run")
        }
        guard record.scenario == CrashPointsScenario().name, record.target == nil || record.target == TargetSpec.default.description else {
            throw TortureError.invalid("shrink handles crash-points cycles of target fief; this is \(record.scenario) on \(record.target ?? "fief") (rerun it with `fief torture reproduce \(dir)`)")
        }
        if let b = record.broken, BrokenVariant(rawValue: b) == nil {
            throw TortureError.invalid("shrink runs broken engine variants; '\(b)' is not one")
        }
        self.init(seed: record.cycleSeed, deaths: CrashPointsScenario.deaths(cycle: record.cycle, seed: record.cycleSeed), broken: record.broken)
        encryptionSeed = record.encrypted == true ? record.runSeed : nil
        origin = Origin(runSeed: record.runSeed, cycle: record.cycle, before: ReplaySize(deaths: 0, threads: 0, commits: 0, changes: 0))
    }

    /// Scenarios whose failing cycles `fief torture shrink` takes.
    public static let shrinkableScenarios: Set<String> = [CrashPointsScenario().name]

    public var workload: CommitWorkload { CommitWorkload(seed: seed, schedule: commits) }

    /// Runs the case in `dir` (emptied first); `broken` overrides the file's engine variant
    /// (`.some(nil)`: the correct engine).
    public func run(in dir: String, broken override: String?? = nil) throws -> ReplayResult {
        let fm = FileManager.default
        try? fm.removeItem(atPath: dir)
        try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let variant = override ?? broken
        if let variant, BrokenVariant(rawValue: variant) == nil { throw TortureError.invalid("unknown broken engine variant '\(variant)'") }
        if variant != nil && !BrokenVariant.available {
            throw TortureError.invalid("this replay runs the broken variant '\(variant!)': it needs a debug build (or --broken none)")
        }
        if let s = encryptionSeed { TortureEncryption.activate(seed: s) } else { TortureEncryption.deactivate() }
        defer { TortureEncryption.deactivate() }
        let env = variant.map { [BrokenVariant.environmentVariable: $0] } ?? [:]
        let outcome = try WriterDeath.run(deaths, dir: dir, workload: workload, environment: env)
        let attempted = (try? OracleLog.read(dir + "/oracle.log").lastIntent) ?? 0
        return ReplayResult(violations: outcome.violations, commitsAttempted: attempted, expected: expected)
    }

    /// How big the case is: what shrinking makes smaller.
    public func size(commitsAttempted: UInt64) -> ReplaySize {
        let n = Int(commitsAttempted)
        let changes = (0..<n).reduce(0) { $0 + workload.planned(commit: UInt64($1 + 1)).changes.count }
        return ReplaySize(deaths: deaths.count, threads: deaths.map(\.threads).max() ?? 1, commits: n, changes: changes)
    }

    public static func read(_ path: String) throws -> TortureReplay {
        guard let data = FileManager.default.contents(atPath: path) else { throw TortureError.invalid("\(path): no such replay file") }
        do {
            return try JSONDecoder().decode(TortureReplay.self, from: data)
        } catch {
            throw TortureError.invalid("\(path) is not a torture replay file: \(error)")
        }
    }

    public func write(to path: String) throws {
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys]
        try enc.encode(self).write(to: URL(fileURLWithPath: path))
    }
}

/// The size of a case: writer deaths, the most threads any writer ran, commits attempted, and
/// the puts and deletes in them.
public struct ReplaySize: Codable, Sendable, Equatable, CustomStringConvertible {
    public var deaths: Int
    public var threads: Int
    public var commits: Int
    public var changes: Int

    public init(deaths: Int, threads: Int, commits: Int, changes: Int) {
        self.deaths = deaths
        self.threads = threads
        self.commits = commits
        self.changes = changes
    }

    public var description: String { "\(deaths) writer death\(deaths == 1 ? "" : "s"), \(threads) thread\(threads == 1 ? "" : "s"), \(commits) commit\(commits == 1 ? "" : "s") (\(changes) puts and deletes)" }
}

/// What one run of a replay found.
public struct ReplayResult: Sendable {
    public var violations: [String]
    public var commitsAttempted: UInt64
    public var expected: TortureReplay.Expected?

    public var passed: Bool { violations.isEmpty }
    /// Fails with the kind of violation the case is kept for (any violation when none is named).
    public var reproduces: Bool {
        guard let expected else { return !passed }
        return violations.contains { ViolationKind.of($0) == expected.kind }
    }
}
