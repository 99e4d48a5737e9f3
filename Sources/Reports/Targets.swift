/// The targets for Fief, as ratios against the peers in the same run. They are
/// reported, never asserted: a miss is news for the engine, not a failed benchmark.
public enum Targets {
    struct Rule {
        let benchmark: String
        let metric: String
        let peer: SystemName
        let bound: Double
        let atLeast: Bool
        /// An absolute bound in this unit instead of a ratio to `peer`.
        var unit: String? = nil
    }

    static let rules: [Rule] = [
        // Issue 12: read transactions without system calls.
        Rule(benchmark: "point-reads", metric: "throughput", peer: .lmdb, bound: 1.0, atLeast: true),
        Rule(benchmark: "point-reads", metric: "latency p50", peer: .lmdb, bound: 1.5, atLeast: false),
        Rule(benchmark: "readers-while-writing", metric: "throughput", peer: .lmdb, bound: 0.8, atLeast: true),
        Rule(benchmark: "point-reads", metric: "throughput", peer: .sqlite, bound: 1.5, atLeast: true),
        Rule(benchmark: "scan", metric: "throughput", peer: .lmdb, bound: 0.5, atLeast: true),
        Rule(benchmark: "scan", metric: "throughput", peer: .sqlite, bound: 1.5, atLeast: true),
        // Issue 25 raised bulk insert against LMDB from 1.0x (issue 12) to 1.2x.
        Rule(benchmark: "bulk-insert", metric: "throughput", peer: .lmdb, bound: 1.2, atLeast: true),
        Rule(benchmark: "bulk-insert", metric: "throughput", peer: .sqlite, bound: 1.0, atLeast: true),
        // Issue 12: cheaper commits (CPU per commit with durability none; pages per durable commit).
        Rule(benchmark: "small-txns.none", metric: "throughput", peer: .lmdb, bound: 0.8, atLeast: true),
        Rule(benchmark: "small-txns.full", metric: "throughput", peer: .lmdb, bound: 1.0, atLeast: true),
        Rule(benchmark: "bulk-insert", metric: "peak memory", peer: .lmdb, bound: 2.0, atLeast: false),
        // Issue 12: group commit (Fief's `batch` against LMDB's one commit per writer).
        Rule(benchmark: "small-txns.concurrent.16", metric: "throughput", peer: .lmdb, bound: 3.0, atLeast: true),
        // Issue 24 (object storage v2): the object layer against SQLite in the same run.
        Rule(benchmark: "obj.insert", metric: "throughput", peer: .sqlite, bound: 2.0, atLeast: true),
        Rule(benchmark: "obj.count", metric: "throughput", peer: .sqlite, bound: 5.0, atLeast: true),
        Rule(benchmark: "obj.query", metric: "throughput", peer: .sqlite, bound: 2.0, atLeast: true),
        Rule(benchmark: "obj.pk-get", metric: "throughput", peer: .sqlite, bound: 2.0, atLeast: true),
        Rule(benchmark: "obj.enumerate", metric: "throughput", peer: .sqlite, bound: 1.5, atLeast: true),
        Rule(benchmark: "obj.sort-limit", metric: "throughput", peer: .sqlite, bound: 5.0, atLeast: true),
        Rule(benchmark: "obj.links", metric: "throughput", peer: .sqlite, bound: 2.0, atLeast: true),
        Rule(benchmark: "obj.update", metric: "throughput", peer: .sqlite, bound: 1.5, atLeast: true),
        Rule(benchmark: "obj.delete-cascade", metric: "throughput", peer: .sqlite, bound: 1.5, atLeast: true),
        Rule(benchmark: "obj.file-size", metric: "size", peer: .sqlite, bound: 1.2, atLeast: false),
        // Issue 10: learning what changed (a change set) against running the query again.
        Rule(benchmark: "obj.notify", metric: "throughput", peer: .sqlite, bound: 20.0, atLeast: true),
        // Issue 10: a commit reaches another process's observers within 5 ms (p99).
        Rule(
            benchmark: "obj.notify.cross-process", metric: "latency p99", peer: .fief, bound: 5.0, atLeast: false,
            unit: "ms"),
        // Issue 10: encryption's cost, against plain Fief in the same repetitions, and the
        // encrypted store against plain SQLite.
        Rule(benchmark: "obj.encrypted.insert", metric: "vs plain Fief", peer: .fief, bound: 0.8, atLeast: true),
        Rule(benchmark: "obj.encrypted.pk-get", metric: "vs plain Fief", peer: .fief, bound: 0.8, atLeast: true),
        Rule(benchmark: "obj.encrypted.count", metric: "vs plain Fief", peer: .fief, bound: 0.8, atLeast: true),
        Rule(benchmark: "obj.encrypted.pk-get", metric: "throughput", peer: .sqlite, bound: 1.2, atLeast: true),
        Rule(benchmark: "obj.encrypted.count", metric: "throughput", peer: .sqlite, bound: 0.9, atLeast: true),
        // Against Fief's own raw engine, measured in the same repetitions.
        Rule(benchmark: "obj.small-txns", metric: "vs raw engine", peer: .fief, bound: 0.85, atLeast: true)
    ]

    public static func evaluate(_ benchmarks: [BenchmarkResult]) -> [TargetStatus] {
        rules.compactMap { rule in
            guard let b = benchmarks.first(where: { $0.id == rule.benchmark }) else { return nil }
            var ratio: Double?
            if rule.unit == "ms", rule.metric == "latency p99" {
                // Every delivery of every repetition, in one histogram (microseconds).
                ratio = b.result(.fief)?.latency.map { $0.p99 / 1000 }
            } else if rule.metric == "peak memory" {
                if let f = b.result(.fief)?.peakMemory?.median, let p = b.result(rule.peer)?.peakMemory?.median, p > 0 {
                    ratio = f / p
                }
            } else if rule.metric == "size" {
                if let f = b.result(.fief)?.value.median, let p = b.result(rule.peer)?.value.median, p > 0 {
                    ratio = f / p
                }
            } else if rule.metric == "vs raw engine" || rule.metric == "vs plain Fief" {
                let key = rule.metric == "vs raw engine" ? "rawEngineOpsPerSecond" : "plainOpsPerSecond"
                if let f = b.result(.fief)?.value.median, let other = b.result(.fief)?.extra?[key], other > 0 {
                    ratio = f / other
                }
            } else if rule.metric == "latency p50" {
                // The benchmark's latency samples: one get in its own read transaction.
                if let f = b.result(.fief)?.latency?.p50, let p = b.result(rule.peer)?.latency?.p50, p > 0 {
                    ratio = f / p
                }
            } else {
                ratio = b.advantage(.fief, over: rule.peer)
            }
            let met = ratio.map { rule.atLeast ? $0 >= rule.bound : $0 <= rule.bound }
            return TargetStatus(
                benchmark: rule.benchmark, metric: rule.metric, peer: rule.peer, bound: rule.bound,
                atLeast: rule.atLeast, ratio: ratio, met: met, unit: rule.unit)
        }
    }
}
