import Foundation

/// Two bench results side by side: per benchmark and system, the medians, the change with
/// its confidence interval and p-value (Mann–Whitney U on the repetitions), and a verdict.
/// CI fails (exit 2) on a regression of Fief itself, in its own numbers and against the
/// peers measured in the same runs, beyond the threshold (see `GatePolicy`). The peers' rows
/// are never gated: they show how far the machine itself drifted between the runs.
public struct Comparison: Codable, Equatable, Sendable {
    public enum Verdict: String, Codable, Sendable {
        case regression, improvement
        case withinNoise = "within noise"
        /// Not Fief's own change: its numbers and the peers' moved alike (the machine), or
        /// only the peers' did.
        case drift
        /// Fewer samples than the policy's minimum on a side: no decision.
        case tooFewSamples = "too few samples"
    }

    public struct Row: Codable, Equatable, Sendable {
        public var benchmark: String
        public var title: String
        /// "throughput", "time", "size" or "peak memory".
        public var metric: String
        public var system: SystemName
        public var unit: String
        /// Medians.
        public var base: Double
        public var new: Double
        /// new / base of the medians, raw.
        public var ratio: Double
        /// How much better NEW is, as a fraction: +0.10 is 10% better, whichever way the unit
        /// points. The test's estimate when there is one, else from the medians.
        public var change: Double
        /// The test of this system's own samples (nil for sizes, compared exactly).
        public var test: Change?
        /// Fief's rows only: its change against each peer and against all of them (last).
        public var relative: [PeerChange]
        public var verdict: Verdict
        /// A regression of Fief's own number beyond the threshold and against its peers: CI fails on these.
        public var failsGate: Bool

        /// The change against the peers that the gate reads: all of them together, or the only one.
        public var control: PeerChange? { relative.last }
    }

    public var baseLabel: String
    public var newLabel: String
    public var threshold: Double
    public var alpha: Double
    public var minSamples: Int
    public var rows: [Row]
    /// Benchmarks present in only one of the two results.
    public var unmatched: [String]
    /// Context differences that make the comparison less trustworthy.
    public var warnings: [String]

    public var policy: GatePolicy { GatePolicy(threshold: threshold, alpha: alpha, minSamples: minSamples) }
    public var regressions: [Row] { rows.filter { $0.failsGate } }
    /// 0 without a gating regression, 2 with one.
    public var exitCode: Int32 { regressions.isEmpty ? 0 : 2 }

    /// Parses "5%", "5", "2.5%" (percent) into a fraction; refuses anything else.
    public static func parseThreshold(_ text: String) throws -> Double {
        let t = text.trimmingCharacters(in: .whitespaces)
        let number = t.hasSuffix("%") ? String(t.dropLast()) : t
        guard let v = Double(number), v.isFinite, v >= 0, v < 100 else { throw BenchError.badThreshold(text) }
        return v / 100
    }

    public static func compare(base: BenchResults, new: BenchResults, threshold: Double) -> Comparison {
        compare(base: base, new: new, policy: GatePolicy(threshold: threshold))
    }

    public static func compare(base: BenchResults, new: BenchResults, policy: GatePolicy) -> Comparison {
        var rows: [Row] = []
        var unmatched: [String] = []
        for b in base.benchmarks {
            guard let n = new.benchmark(b.id) else { unmatched.append("\(b.id) (only in base)"); continue }
            let metric = b.unit == "bytes" ? "size" : b.unit == "ms" ? "time" : "throughput"
            let primary = Metric(name: metric, unit: b.unit, higherIsBetter: b.higherIsBetter) { $0.value }
            let memory = Metric(name: "peak memory", unit: "bytes", higherIsBetter: false) { $0.peakMemory }
            for m in [primary, memory] {
                rows += b.systems.compactMap { makeRow(b, n, $0.system, m, policy) }
            }
        }
        for n in new.benchmarks where base.benchmark(n.id) == nil { unmatched.append("\(n.id) (only in new)") }
        var warnings = contextWarnings(base, new)
        let undecided = rows.filter { $0.system == .fief && $0.verdict == .tooFewSamples }
        if !undecided.isEmpty {
            warnings.append(
                "\(undecided.count) of Fief's rows have fewer than \(policy.minSamples) samples a side "
                    + "and are not gated: run `fief bench` with --repetitions \(policy.minSamples) or more, "
                    + "or combine runs"
            )
        }
        if rows.contains(where: { $0.system == .fief && $0.test != nil && $0.relative.isEmpty }) {
            warnings.append(
                "some of Fief's rows have no peers measured in both runs: "
                    + "they are gated on Fief's own numbers alone, which machine drift moves too"
            )
        }
        return Comparison(
            baseLabel: label(base), newLabel: label(new), threshold: policy.threshold, alpha: policy.alpha,
            minSamples: policy.minSamples, rows: rows, unmatched: unmatched, warnings: warnings)
    }

    /// One number of a benchmark: the primary value, or peak memory.
    struct Metric {
        let name: String
        let unit: String
        let higherIsBetter: Bool
        let stats: (SystemResult) -> SampleStats?
    }

    static func makeRow(_ b: BenchmarkResult, _ n: BenchmarkResult, _ s: SystemName, _ m: Metric, _ policy: GatePolicy)
        -> Row?
    {
        guard let bs = b.result(s).flatMap(m.stats), let ns = n.result(s).flatMap(m.stats), bs.median > 0, ns.median > 0
        else { return nil }
        let ratio = ns.median / bs.median
        var row = Row(
            benchmark: b.id, title: b.title, metric: m.name, system: s, unit: m.unit, base: bs.median, new: ns.median,
            ratio: ratio,
            change: m.higherIsBetter ? ratio - 1 : 1 / ratio - 1, test: nil, relative: [], verdict: .withinNoise,
            failsGate: false)
        if m.name == "size" {
            // Deterministic for a seed: any change is real; the threshold alone gates.
            row.verdict = row.change == 0 ? .withinNoise : row.change < 0 ? .regression : .improvement
            row.failsGate = s == .fief && -row.change > policy.threshold
            return row
        }
        row.test = Change(base: bs.samples, new: ns.samples, higherIsBetter: m.higherIsBetter)
        guard let t = row.test, t.enoughSamples(policy) else {
            row.verdict = .tooFewSamples
            return row
        }
        row.change = t.change
        row.verdict = !t.significant(policy) ? .withinNoise : t.change < 0 ? .regression : .improvement
        guard s == .fief else { return row }
        func peers(_ r: BenchmarkResult) -> [(String, [Double])] {
            r.systems.filter { $0.system != .fief }.compactMap { p in m.stats(p).map { (p.system.label, $0.samples) } }
        }
        row.relative = PeerControl.changes(
            fiefBase: bs.samples, fiefNew: ns.samples, peersBase: peers(b), peersNew: peers(n),
            higherIsBetter: m.higherIsBetter)
        guard let control = row.control?.test else {
            row.failsGate = t.regressed(policy)
            return row
        }
        // With peers, the ratio to them decides (drift cancels out of it) and Fief's own
        // numbers must agree in direction; see `GatePolicy`.
        if control.significant(policy) && control.change * t.change > 0 {
            row.verdict = t.change < 0 ? .regression : .improvement
        } else if control.significant(policy) || t.significant(policy) {
            row.verdict = .drift
        } else {
            row.verdict = .withinNoise
        }
        row.failsGate = row.verdict == .regression && control.regressed(policy) && -t.change > policy.threshold
        return row
    }

    static func label(_ r: BenchResults) -> String {
        r.context.label ?? String(r.context.gitCommit.prefix(12))
    }

    static func contextWarnings(_ a: BenchResults, _ b: BenchResults) -> [String] {
        var w: [String] = []
        let ca = a.context, cb = b.context
        if ca.machine.hostname != cb.machine.hostname || ca.machine.cpu != cb.machine.cpu
            || ca.machine.cores != cb.machine.cores
        {
            w.append(
                "different machines (\(ca.machine.hostname), \(ca.machine.cores) cores vs \(cb.machine.hostname), "
                    + "\(cb.machine.cores) cores): compare peers' rows to see the drift"
            )
        }
        if ca.build != cb.build { w.append("different build configurations: \(ca.build) vs \(cb.build)") }
        if ca.build == "debug" || cb.build == "debug" {
            w.append("a debug build is being compared: numbers are not representative")
        }
        if ca.durability != cb.durability { w.append("different durability: \(ca.durability) vs \(cb.durability)") }
        if ca.engineFormatVersion != cb.engineFormatVersion {
            w.append(
                "different engine format versions: \(ca.engineFormatVersion.map(String.init) ?? "?") "
                    + "vs \(cb.engineFormatVersion.map(String.init) ?? "?")"
            )
        }
        var pa = a.parameters, pb = b.parameters
        pa.seed = 0; pb.seed = 0; pa.repetitions = 0; pb.repetitions = 0
        if pa != pb {
            w.append(
                "different parameters (profile \(a.parameters.profile) vs "
                    + "\(b.parameters.profile)): ratios compare different work"
            )
        }
        return w
    }
}

extension BenchResults {
    /// Pools several results of the same build and parameters into one: every repetition's
    /// sample counts, so runs made apart in time (interleaved with another build's, as
    /// compare-versions.sh does) weigh as one. Latency percentiles are the median of the
    /// runs' percentiles (histograms are not kept in the JSON).
    public static func combine(_ runs: [BenchResults]) throws -> BenchResults {
        guard var out = runs.first else { throw BenchError.badArgument("nothing to combine") }
        guard runs.count > 1 else { return out }
        for r in runs.dropFirst() {
            var a = out.parameters, b = r.parameters
            a.repetitions = 0; b.repetitions = 0
            guard a == b else {
                throw BenchError.badArgument(
                    "cannot combine results made with different parameters (profile \(out.parameters.profile) "
                        + "vs \(r.parameters.profile), seed \(out.parameters.seed) vs \(r.parameters.seed))"
                )
            }
            guard r.context.gitCommit == out.context.gitCommit, r.context.build == out.context.build else {
                throw BenchError.badArgument(
                    "cannot combine results of different builds "
                        + "(\(out.context.gitCommit.prefix(12)) \(out.context.build) "
                        + "vs \(r.context.gitCommit.prefix(12)) \(r.context.build))"
                )
            }
        }
        out.benchmarks = out.benchmarks.map { b in
            var b = b
            b.systems = b.systems.map { s in
                var s = s
                let all = runs.compactMap { $0.benchmark(b.id)?.result(s.system) }
                s.value = SampleStats(all.flatMap(\.value.samples))
                let mems = all.compactMap(\.peakMemory).flatMap(\.samples)
                s.peakMemory = mems.isEmpty ? nil : SampleStats(mems)
                let lats = all.compactMap(\.latency)
                if lats.count == all.count, !lats.isEmpty {
                    func med(_ k: KeyPath<LatencySummary, Double>) -> Double {
                        SampleStats(lats.map { $0[keyPath: k] }).median
                    }
                    s.latency = LatencySummary(
                        count: lats.reduce(0) { $0 + $1.count }, p50: med(\.p50), p90: med(\.p90), p99: med(\.p99),
                        p999: med(\.p999), max: lats.map(\.max).max() ?? 0, mean: med(\.mean))
                }
                return s
            }
            return b
        }
        out.parameters.repetitions = runs.reduce(0) { $0 + $1.parameters.repetitions }
        out.durationSeconds = runs.reduce(0) { $0 + $1.durationSeconds }
        out.targets = Targets.evaluate(out.benchmarks)
        out.notes.append("combined from \(runs.count) runs")
        return out
    }
}
