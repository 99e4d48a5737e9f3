/// How one scenario fared over all its cycles.
public struct ScenarioResult: WritesDerivedKeys, Sendable {
    /// What the run recorded; older files lack the later fields and read with their defaults.
    public struct Recorded: Codable, Sendable {
        public var name: String
        @Defaulted<Zero<Int>> public var cycles: Int
        @Defaulted<Zero<Int>> public var violations: Int
        @Defaulted<Zero<Double>> public var durationSeconds: Double
        @Defaulted<Zero<Double>> public var cyclesPerMinute: Double
        @Defaulted<Empty<[String]>> public var crashPointsCovered: [String]
        @Defaulted<Zero<Int>> public var faultsInjected: Int
        @Defaulted<Empty<[ModeResult]>> public var modes: [ModeResult]
        @Defaulted<Empty<[CycleFailure]>> public var failures: [CycleFailure]
        @Defaulted<Empty<[String]>> public var notes: [String]
        /// The crash-states scenario's coverage, one entry per commit, by cycle.
        @Defaulted<OmittedWhenEmpty<[CrashStateCoverage]>> public var crashStates: [CrashStateCoverage]
        /// Violations that lost an acknowledged commit.
        @Defaulted<Zero<Int>> public var durabilityViolations: Int
        /// Violations that left a state no commit made, or failed an integrity check.
        @Defaulted<Zero<Int>> public var atomicityIntegrityViolations: Int
        /// Isolation anomalies (G0, G1a, G1b, G1c, G-single, lost update, …).
        @Defaulted<Zero<Int>> public var isolationViolations: Int

        init(name: String) { self.name = name }
    }

    public var recorded: Recorded
    public init(recorded: Recorded) { self.recorded = recorded }
    public init(name: String) { recorded = Recorded(name: name) }

    public var passed: Bool { recorded.violations == 0 && recorded.failures.isEmpty }

    /// The scenario's verdict in words: `clean`, `durability loss`, `atomicity/integrity
    /// violation`, both, or `other violations` (isolation anomalies, harness failures).
    public var verdict: String {
        switch (recorded.durabilityViolations > 0, recorded.atomicityIntegrityViolations > 0) {
        case (false, false):
            let modes = recorded.modes
            if passed && !modes.isEmpty && modes.allSatisfy({ $0.name == "not-applicable" }) { return "not applicable" }
            if passed { return "clean" }
            return recorded.isolationViolations > 0 ? "isolation anomalies" : "other violations"
        case (true, false): return "durability loss"
        case (false, true): return "atomicity/integrity violation"
        case (true, true): return "durability loss + atomicity/integrity violation"
        }
    }

    /// The pass/fail cells of a matrix or of JUnit: the modes, or the scenario itself as one.
    public var cells: [ModeResult] {
        recorded.modes.isEmpty
            ? [
                ModeResult(
                    name: recorded.name, cycles: recorded.cycles, violations: passed ? 0 : max(1, recorded.violations))
            ]
            : recorded.modes
    }

    public enum DerivedKeys: String, CodingKey {
        case passed, verdict
        /// Derived from `crashStates`.
        case crashStatesExhaustiveShare
    }

    public func encodeDerived(into c: inout KeyedEncodingContainer<DerivedKeys>) throws {
        try c.encode(passed, forKey: .passed)
        try c.encode(verdict, forKey: .verdict)
        try c.encodeIfPresent(recorded.crashStates.operationLevelExhaustiveShare, forKey: .crashStatesExhaustiveShare)
    }
}

/// How one fault mode or crash point of a scenario fared (a JUnit test case each).
public struct ModeResult: WritesDerivedKeys, Sendable, Equatable {
    public struct Recorded: Codable, Sendable, Equatable {
        public var name: String
        @Defaulted<Zero<Int>> public var cycles: Int
        @Defaulted<Zero<Int>> public var violations: Int

        init(name: String, cycles: Int, violations: Int) {
            self.name = name
            self.cycles = cycles
            self.violations = violations
        }
    }

    public var recorded: Recorded
    public init(recorded: Recorded) { self.recorded = recorded }
    public init(name: String, cycles: Int = 0, violations: Int = 0) {
        recorded = Recorded(name: name, cycles: cycles, violations: violations)
    }

    public var passed: Bool { recorded.violations == 0 }

    public enum DerivedKeys: String, CodingKey { case passed }

    public func encodeDerived(into c: inout KeyedEncodingContainer<DerivedKeys>) throws {
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
