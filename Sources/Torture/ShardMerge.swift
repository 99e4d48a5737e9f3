import Foundation
import TortureSchema

/// Shards of one soak (`--shard K/N`, same seed and profile) folded into one result, so a
/// CI matrix or an indexed Job reports as a single run.
extension TortureResults {
    public static func merge(_ shards: [TortureResults]) throws -> TortureResults {
        guard let first = shards.first else {
            throw TortureError.invalid("nothing to merge: give the shards' results.json files")
        }
        for s in shards.dropFirst() where s.target != first.target {
            throw TortureError.invalid(
                "shard \(s.shard) ran target \(s.target.spec); "
                    + "shard \(first.shard) ran \(first.target.spec): only shards of one run merge"
            )
        }
        for s in shards.dropFirst() where s.seed != first.seed || s.profile != first.profile {
            throw TortureError.invalid(
                "shard \(s.shard) ran seed \(s.seed), profile \(s.profile); shard \(first.shard) "
                    + "ran seed \(first.seed), profile \(first.profile): only shards of one run merge"
            )
        }
        let parsed = shards.map { s -> (Int, Int)? in
            let p = s.shard.split(separator: "/").compactMap { Int($0) }
            return p.count == 2 ? (p[0], p[1]) : nil
        }
        let slices = parsed.compactMap { $0?.0 }
        if Set(slices).count != slices.count {
            throw TortureError.invalid("the same shard appears twice: \(shards.map(\.shard).sorted())")
        }
        var merged = TortureResults(
            seed: first.seed, profile: first.profile,
            shard: shards.map(\.shard).sorted().joined(separator: ","),
            started: shards.map(\.started).min() ?? first.started)
        merged.engineFormatVersion = first.engineFormatVersion
        merged.durationSeconds = shards.map(\.durationSeconds).max() ?? 0
        merged.growth = shards.lazy.compactMap(\.growth).first
        merged.target = first.target
        var order: [String] = []
        var byName: [String: ScenarioResult] = [:]
        for s in shards.flatMap(\.scenarios) {
            guard var m = byName[s.name] else { byName[s.name] = s; order.append(s.name); continue }
            m.cycles += s.cycles
            m.violations += s.violations
            m.durationSeconds += s.durationSeconds
            m.faultsInjected += s.faultsInjected
            m.crashPointsCovered = Array(Set(m.crashPointsCovered).union(s.crashPointsCovered)).sorted()
            for mode in s.modes {
                if let i = m.modes.firstIndex(where: { $0.name == mode.name }) {
                    m.modes[i].cycles += mode.cycles
                    m.modes[i].violations += mode.violations
                } else {
                    m.modes.append(mode)
                }
            }
            m.failures += s.failures
            m.durabilityViolations += s.durabilityViolations
            m.atomicityIntegrityViolations += s.atomicityIntegrityViolations
            m.isolationViolations += s.isolationViolations
            m.notes += s.notes.filter { !m.notes.contains($0) }
            m.crashStates = (m.crashStates + s.crashStates).sorted { ($0.cycle, $0.commit) < ($1.cycle, $1.commit) }
            byName[s.name] = m
        }
        merged.scenarios = order.map { name in
            var s = byName[name]!
            s.cyclesPerMinute = s.durationSeconds > 0 ? Double(s.cycles) * 60 / s.durationSeconds : 0
            return s
        }
        if let total = parsed.first??.1 {
            let missing = (1...total).filter { !slices.contains($0) }
            if !missing.isEmpty, !merged.scenarios.isEmpty {
                merged.scenarios[0].notes.append(
                    "merged \(slices.count) of \(total) shards; missing: "
                        + "\(missing.map(String.init).joined(separator: ", "))"
                )
            }
        }
        return merged
    }
}
