/// How one scenario fared over all its cycles.
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

    /// The pass/fail cells of a matrix or of JUnit: the modes, or the scenario itself as one.
    public var cells: [ModeResult] {
        modes.isEmpty ? [ModeResult(name: name, cycles: cycles, violations: passed ? 0 : max(1, violations))] : modes
    }

    public init(name: String) { self.name = name }

    // Hand-written for compatibility: `passed` and `verdict` are written for readers that do
    // not recompute them, and files of older runs lack the later fields.
    enum CodingKeys: String, CodingKey {
        case name, cycles, violations, durationSeconds, cyclesPerMinute, crashPointsCovered, faultsInjected, modes,
            failures, notes, passed, crashStates
        case durabilityViolations, atomicityIntegrityViolations, isolationViolations, verdict
        /// Derived from `crashStates`, for readers that do not recompute it.
        case crashStatesExhaustiveShare
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
        try c.encodeIfPresent(crashStates.operationLevelExhaustiveShare, forKey: .crashStatesExhaustiveShare)
        try c.encode(durabilityViolations, forKey: .durabilityViolations)
        try c.encode(atomicityIntegrityViolations, forKey: .atomicityIntegrityViolations)
        try c.encode(isolationViolations, forKey: .isolationViolations)
        try c.encode(verdict, forKey: .verdict)
        try c.encode(passed, forKey: .passed)
    }
}

/// How one fault mode or crash point of a scenario fared (a JUnit test case each).
public struct ModeResult: Codable, Sendable, Equatable {
    public var name: String
    public var cycles: Int
    public var violations: Int
    public var passed: Bool { violations == 0 }

    public init(name: String, cycles: Int = 0, violations: Int = 0) {
        self.name = name
        self.cycles = cycles
        self.violations = violations
    }

    // Hand-written for compatibility: `passed` is written for readers that do not recompute it.
    enum CodingKeys: String, CodingKey { case name, cycles, violations, passed }

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

/// One failed cycle: what broke, where its evidence is, and how to replay it.
public struct CycleFailure: Codable, Sendable {
    public var cycle: Int
    public var seed: UInt64
    public var description: String
    public var violations: [Violation]
    public var artifacts: String?
    public var reproduce: String

    public init(
        cycle: Int, seed: UInt64, description: String, violations: [Violation], artifacts: String?, reproduce: String
    ) {
        self.cycle = cycle
        self.seed = seed
        self.description = description
        self.violations = violations
        self.artifacts = artifacts
        self.reproduce = reproduce
    }
}
