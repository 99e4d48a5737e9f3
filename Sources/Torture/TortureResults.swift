import Engine
import FaultFS
import Foundation

/// One failed cycle: what broke, where its evidence is, and how to replay it.
public struct CycleFailure: Codable, Sendable {
    public var cycle: Int
    public var seed: UInt64
    public var description: String
    public var violations: [String]
    public var artifacts: String?
    public var reproduce: String
}

/// How one fault mode or crash point of a scenario fared (a JUnit test case each).
public struct ModeResult: Codable, Sendable {
    public var name: String
    public var cycles: Int
    public var violations: Int
    public var passed: Bool { violations == 0 }

    enum CodingKeys: String, CodingKey { case name, cycles, violations, passed }
    public init(name: String, cycles: Int = 0, violations: Int = 0) {
        self.name = name
        self.cycles = cycles
        self.violations = violations
    }
    public init(from d: Decoder) throws {
        let c = try d.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        cycles = try c.decodeIfPresent(Int.self, forKey: .cycles) ?? 0
        violations = try c.decodeIfPresent(Int.self, forKey: .violations) ?? 0
    }
    public func encode(to e: Encoder) throws {
        var c = e.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(cycles, forKey: .cycles)
        try c.encode(violations, forKey: .violations)
        try c.encode(passed, forKey: .passed)
    }
}

/// How much of one commit's crash-state space the `crash-states` scenario explored: every
/// subset of its unsynced sectors (and, when the file grew, of its old or new size) is a
/// state a cut may leave; `2^choices` in all.
public struct CrashStateCoverage: Codable, Sendable, Equatable {
    public var cycle: Int
    public var commit: UInt64
    public var crashPoint: String
    public var unsyncedSectors: Int
    /// Whether the file grew in the commit, so a cut may also leave its old size.
    public var sizeChoice: Bool
    public var choices: Int { unsyncedSectors + (sizeChoice ? 1 : 0) }
    public var statesExplored: Int
    /// All of them (below the profile's bound), or a seeded sample.
    public var exhaustive: Bool
    /// `2^choices`, or nil past what a Double holds exactly.
    public var statesPossible: Double? { choices < 53 ? Double(UInt64(1) << UInt64(choices)) : nil }

    enum CodingKeys: String, CodingKey {
        case cycle, commit, crashPoint, unsyncedSectors, sizeChoice, choices, statesExplored, statesPossible, exhaustive
    }
    public init(
        cycle: Int, commit: UInt64, crashPoint: String, unsyncedSectors: Int, sizeChoice: Bool, statesExplored: Int,
        exhaustive: Bool
    ) {
        self.cycle = cycle; self.commit = commit; self.crashPoint = crashPoint; self.unsyncedSectors = unsyncedSectors
        self.sizeChoice = sizeChoice; self.statesExplored = statesExplored; self.exhaustive = exhaustive
    }
    public init(from d: Decoder) throws {
        let c = try d.container(keyedBy: CodingKeys.self)
        cycle = try c.decode(Int.self, forKey: .cycle)
        commit = try c.decode(UInt64.self, forKey: .commit)
        crashPoint = try c.decode(String.self, forKey: .crashPoint)
        unsyncedSectors = try c.decode(Int.self, forKey: .unsyncedSectors)
        sizeChoice = try c.decode(Bool.self, forKey: .sizeChoice)
        statesExplored = try c.decode(Int.self, forKey: .statesExplored)
        exhaustive = try c.decode(Bool.self, forKey: .exhaustive)
    }
    public func encode(to e: Encoder) throws {
        var c = e.container(keyedBy: CodingKeys.self)
        try c.encode(cycle, forKey: .cycle)
        try c.encode(commit, forKey: .commit)
        try c.encode(crashPoint, forKey: .crashPoint)
        try c.encode(unsyncedSectors, forKey: .unsyncedSectors)
        try c.encode(sizeChoice, forKey: .sizeChoice)
        try c.encode(choices, forKey: .choices)
        try c.encode(statesExplored, forKey: .statesExplored)
        try c.encodeIfPresent(statesPossible, forKey: .statesPossible)
        try c.encode(exhaustive, forKey: .exhaustive)
    }
}

/// The file-size curve of the growth scenario.
public struct GrowthCurve: Codable, Sendable {
    public var sizes: [UInt64] = []
    public var liveBytes: [UInt64] = []
    public var pinnedAtCommit: Int = 0
    public var releasedAtCommit: Int = 0
    public var boundBytes: UInt64 = 0
    public var compactedSize: UInt64 = 0
}

public struct ScenarioResult: Codable, Sendable {
    public var name: String
    public var cycles: Int = 0
    public var violations: Int = 0
    public var durationSeconds: Double = 0
    public var cyclesPerMinute: Double = 0
    public var crashPointsCovered: [String] = []
    public var faultsInjected: Int = 0
    public var modes: [ModeResult] = []
    public var failures: [CycleFailure] = []
    public var notes: [String] = []
    /// The crash-states scenario's coverage, one entry per commit, by cycle.
    public var crashStates: [CrashStateCoverage] = []
    /// Violations that lost an acknowledged commit.
    public var durabilityViolations: Int = 0
    /// Violations that left a state no commit made, or failed an integrity check.
    public var atomicityIntegrityViolations: Int = 0
    /// Isolation anomalies (G0, G1a, G1b, G1c, G-single, lost update, …).
    public var isolationViolations: Int = 0
    public var passed: Bool { violations == 0 && failures.isEmpty }

    /// The scenario's verdict in words: `clean`, `durability loss`, `atomicity/integrity
    /// violation`, both, or `other violations` (isolation anomalies, harness failures).
    public var verdict: String {
        switch (durabilityViolations > 0, atomicityIntegrityViolations > 0) {
        case (false, false):
            if passed && !modes.isEmpty && modes.allSatisfy({ $0.name == "not-applicable" }) { return "not applicable" }
            if passed { return "clean" }
            return isolationViolations > 0 ? "isolation anomalies" : "other violations"
        case (true, false): return "durability loss"
        case (false, true): return "atomicity/integrity violation"
        case (true, true): return "durability loss + atomicity/integrity violation"
        }
    }

    public init(name: String) { self.name = name }

    enum CodingKeys: String, CodingKey {
        case name, cycles, violations, durationSeconds, cyclesPerMinute, crashPointsCovered, faultsInjected, modes,
            failures, notes, passed, crashStates
        case durabilityViolations, atomicityIntegrityViolations, isolationViolations, verdict
    }
    public init(from d: Decoder) throws {
        let c = try d.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        cycles = try c.decodeIfPresent(Int.self, forKey: .cycles) ?? 0
        violations = try c.decodeIfPresent(Int.self, forKey: .violations) ?? 0
        durationSeconds = try c.decodeIfPresent(Double.self, forKey: .durationSeconds) ?? 0
        cyclesPerMinute = try c.decodeIfPresent(Double.self, forKey: .cyclesPerMinute) ?? 0
        crashPointsCovered = try c.decodeIfPresent([String].self, forKey: .crashPointsCovered) ?? []
        faultsInjected = try c.decodeIfPresent(Int.self, forKey: .faultsInjected) ?? 0
        modes = try c.decodeIfPresent([ModeResult].self, forKey: .modes) ?? []
        failures = try c.decodeIfPresent([CycleFailure].self, forKey: .failures) ?? []
        notes = try c.decodeIfPresent([String].self, forKey: .notes) ?? []
        crashStates = try c.decodeIfPresent([CrashStateCoverage].self, forKey: .crashStates) ?? []
        durabilityViolations = try c.decodeIfPresent(Int.self, forKey: .durabilityViolations) ?? 0
        atomicityIntegrityViolations = try c.decodeIfPresent(Int.self, forKey: .atomicityIntegrityViolations) ?? 0
        isolationViolations = try c.decodeIfPresent(Int.self, forKey: .isolationViolations) ?? 0
    }
    public func encode(to e: Encoder) throws {
        var c = e.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(cycles, forKey: .cycles)
        try c.encode(violations, forKey: .violations)
        try c.encode(durationSeconds, forKey: .durationSeconds)
        try c.encode(cyclesPerMinute, forKey: .cyclesPerMinute)
        try c.encode(crashPointsCovered, forKey: .crashPointsCovered)
        try c.encode(faultsInjected, forKey: .faultsInjected)
        try c.encode(modes, forKey: .modes)
        try c.encode(failures, forKey: .failures)
        try c.encode(notes, forKey: .notes)
        if !crashStates.isEmpty { try c.encode(crashStates, forKey: .crashStates) }
        try c.encode(durabilityViolations, forKey: .durabilityViolations)
        try c.encode(atomicityIntegrityViolations, forKey: .atomicityIntegrityViolations)
        try c.encode(isolationViolations, forKey: .isolationViolations)
        try c.encode(verdict, forKey: .verdict)
        try c.encode(passed, forKey: .passed)
    }

    mutating func classify(_ violation: String) {
        switch ViolationKind.of(violation).verdictClass {
        case .durability: durabilityViolations += 1
        case .atomicityIntegrity: atomicityIntegrityViolations += 1
        case .isolation: isolationViolations += 1
        case .harness: break
        }
    }

    mutating func record(mode: String, violations v: Int) {
        if let i = modes.firstIndex(where: { $0.name == mode }) {
            modes[i].cycles += 1
            modes[i].violations += v
        } else {
            modes.append(ModeResult(name: mode, cycles: 1, violations: v))
        }
    }
}

/// Everything one `fief torture run` found.
public struct TortureResults: Codable, Sendable {
    public var tool = "fief torture"
    public var seed: UInt64
    public var profile: String
    public var shard: String
    public var started: String
    public var durationSeconds: Double = 0
    public var engineFormatVersion: Int = Database.formatVersion
    public var scenarios: [ScenarioResult] = []
    public var growth: GrowthCurve?
    public var target = TargetInfo(.default)
    /// The FaultFS persistence model of the run's mounts (older files: posix).
    public var fsModel = PersistenceModel.posix.rawValue
    public var passed: Bool { scenarios.allSatisfy(\.passed) }

    /// Every database was encrypted (`--encrypt`, format 3).
    public var encrypted = false
    enum CodingKeys: String, CodingKey {
        case tool, seed, profile, shard, started, durationSeconds, engineFormatVersion, scenarios, growth, passed,
            target, fsModel, encrypted
    }

    public init(seed: UInt64, profile: String, shard: String, started: String) {
        self.seed = seed
        self.profile = profile
        self.shard = shard
        self.started = started
    }
    public init(from d: Decoder) throws {
        let c = try d.container(keyedBy: CodingKeys.self)
        seed = try c.decode(UInt64.self, forKey: .seed)
        profile = try c.decode(String.self, forKey: .profile)
        shard = try c.decode(String.self, forKey: .shard)
        started = try c.decode(String.self, forKey: .started)
        durationSeconds = try c.decodeIfPresent(Double.self, forKey: .durationSeconds) ?? 0
        engineFormatVersion = try c.decodeIfPresent(Int.self, forKey: .engineFormatVersion) ?? 1
        scenarios = try c.decode([ScenarioResult].self, forKey: .scenarios)
        growth = try c.decodeIfPresent(GrowthCurve.self, forKey: .growth)
        target = try c.decodeIfPresent(TargetInfo.self, forKey: .target) ?? TargetInfo(.default)
        fsModel = try c.decodeIfPresent(String.self, forKey: .fsModel) ?? PersistenceModel.posix.rawValue
        encrypted = try c.decodeIfPresent(Bool.self, forKey: .encrypted) ?? false
    }
    public func encode(to e: Encoder) throws {
        var c = e.container(keyedBy: CodingKeys.self)
        try c.encode(tool, forKey: .tool)
        try c.encode(seed, forKey: .seed)
        try c.encode(profile, forKey: .profile)
        try c.encode(shard, forKey: .shard)
        try c.encode(started, forKey: .started)
        try c.encode(durationSeconds, forKey: .durationSeconds)
        try c.encode(engineFormatVersion, forKey: .engineFormatVersion)
        try c.encode(scenarios, forKey: .scenarios)
        try c.encodeIfPresent(growth, forKey: .growth)
        try c.encode(target, forKey: .target)
        try c.encode(fsModel, forKey: .fsModel)
        try c.encode(encrypted, forKey: .encrypted)
        try c.encode(passed, forKey: .passed)
    }
}

/// The target a run drove, as results.json carries it: `spec` parses back with `--target`.
public struct TargetInfo: Codable, Sendable, Equatable {
    public var spec: String
    public var kind: String
    public var configuration: String

    public init(_ target: TargetSpec) {
        spec = target.description
        kind = target.kind
        configuration = target.configuration
    }
}
