import Engine
import TortureSchema

/// What a run fills into the results schema: this engine's format and target, and each cycle's
/// violations counted by mode and verdict class.
extension TortureResults {
    /// A run of this engine's format on `target`.
    public init(seed: UInt64, profile: String, shard: String, started: String, target: TargetSpec = .default) {
        self.init(
            seed: seed, profile: profile, shard: shard, started: started, engineFormatVersion: Database.formatVersion,
            target: TargetInfo(target))
    }
}

extension TargetInfo {
    public init(_ target: TargetSpec) {
        self.init(spec: target.description, kind: target.kind, configuration: target.configuration)
    }
}

extension ScenarioResult {
    mutating func classify(_ violation: Violation) {
        switch violation.kind.verdictClass {
        case .durability: recorded.durabilityViolations += 1
        case .atomicityIntegrity: recorded.atomicityIntegrityViolations += 1
        case .isolation: recorded.isolationViolations += 1
        case .harness: break
        }
    }

    mutating func record(mode: String, violations v: Int) {
        if let i = recorded.modes.firstIndex(where: { $0.name == mode }) {
            recorded.modes[i].cycles += 1
            recorded.modes[i].violations += v
        } else {
            recorded.modes.append(ModeResult(name: mode, cycles: 1, violations: v))
        }
    }
}
