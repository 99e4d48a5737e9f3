import Foundation

/// Two bench results side by side: per benchmark and system, the ratio of the medians, the
/// noise of that ratio, and a verdict. A change is "within noise" when it is no larger than
/// the two runs' spreads combined; beyond that it is an improvement or a regression. CI
/// fails (exit 2) on a regression of Fief itself that also passes the threshold; the peers'
/// rows show how far the machine itself drifted between the runs.
public struct Comparison: Codable, Equatable, Sendable {
    public enum Verdict: String, Codable, Sendable {
        case regression, improvement
        case withinNoise = "within noise"
    }

    public struct Row: Codable, Equatable, Sendable {
        public var benchmark: String
        public var title: String
        /// "throughput", "time", "size" or "peak memory".
        public var metric: String
        public var system: SystemName
        public var unit: String
        public var base: Double
        public var new: Double
        /// new / base, raw.
        public var ratio: Double
        /// How much better NEW is, as a fraction: +0.10 is 10% better, whichever way the unit points.
        public var change: Double
        /// The combined relative spread of the two medians: sqrt(spread_base² + spread_new²).
        public var noise: Double
        public var verdict: Verdict
        /// A regression of Fief's own number beyond the threshold: CI fails on these.
        public var failsGate: Bool
    }

    public var baseLabel: String
    public var newLabel: String
    public var threshold: Double
    public var rows: [Row]
    /// Benchmarks present in only one of the two results.
    public var unmatched: [String]
    /// Context differences that make the comparison less trustworthy.
    public var warnings: [String]

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
        var rows: [Row] = []
        var unmatched: [String] = []
        for b in base.benchmarks {
            guard let n = new.benchmark(b.id) else { unmatched.append("\(b.id) (only in base)"); continue }
            let metric = b.unit == "bytes" ? "size" : b.unit == "ms" ? "time" : "throughput"
            for s in b.systems {
                guard let ns = n.result(s.system) else { continue }
                if let row = makeRow(b, metric, s.system, s.value, ns.value, b.higherIsBetter, b.unit, threshold) { rows.append(row) }
                if let bm = s.peakMemory, let nm = ns.peakMemory,
                   let row = makeRow(b, "peak memory", s.system, bm, nm, false, "bytes", threshold) {
                    rows.append(row)
                }
            }
        }
        for n in new.benchmarks where base.benchmark(n.id) == nil { unmatched.append("\(n.id) (only in new)") }
        return Comparison(
            baseLabel: label(base), newLabel: label(new), threshold: threshold, rows: rows, unmatched: unmatched,
            warnings: contextWarnings(base, new))
    }

    static func makeRow(_ b: BenchmarkResult, _ metric: String, _ s: SystemName, _ base: SampleStats, _ new: SampleStats, _ higherIsBetter: Bool, _ unit: String, _ threshold: Double) -> Row? {
        guard base.median > 0, new.median > 0 else { return nil }
        let ratio = new.median / base.median
        let change = higherIsBetter ? ratio - 1 : base.median / new.median - 1
        let noise = (base.spread * base.spread + new.spread * new.spread).squareRoot()
        let verdict: Verdict = abs(change) <= noise ? .withinNoise : change < 0 ? .regression : .improvement
        return Row(
            benchmark: b.id, title: b.title, metric: metric, system: s, unit: unit, base: base.median, new: new.median,
            ratio: ratio, change: change, noise: noise, verdict: verdict,
            failsGate: s == .fief && verdict == .regression && -change > threshold)
    }

    static func label(_ r: BenchResults) -> String {
        r.context.label ?? String(r.context.gitCommit.prefix(12))
    }

    static func contextWarnings(_ a: BenchResults, _ b: BenchResults) -> [String] {
        var w: [String] = []
        let ca = a.context, cb = b.context
        if ca.machine.hostname != cb.machine.hostname || ca.machine.cpu != cb.machine.cpu || ca.machine.cores != cb.machine.cores {
            w.append("different machines (\(ca.machine.hostname), \(ca.machine.cores) cores vs \(cb.machine.hostname), \(cb.machine.cores) cores): compare peers' rows to see the drift")
        }
        if ca.build != cb.build { w.append("different build configurations: \(ca.build) vs \(cb.build)") }
        if ca.build == "debug" || cb.build == "debug" { w.append("a debug build is being compared: numbers are not representative") }
        if ca.durability != cb.durability { w.append("different durability: \(ca.durability) vs \(cb.durability)") }
        if ca.engineFormatVersion != cb.engineFormatVersion {
            w.append("different engine format versions: \(ca.engineFormatVersion.map(String.init) ?? "?") vs \(cb.engineFormatVersion.map(String.init) ?? "?")")
        }
        var pa = a.parameters, pb = b.parameters
        pa.seed = 0; pb.seed = 0; pa.repetitions = 0; pb.repetitions = 0
        if pa != pb { w.append("different parameters (profile \(a.parameters.profile) vs \(b.parameters.profile)): ratios compare different work") }
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
            guard a == b else { throw BenchError.badArgument("cannot combine results made with different parameters (profile \(out.parameters.profile) vs \(r.parameters.profile), seed \(out.parameters.seed) vs \(r.parameters.seed))") }
            guard r.context.gitCommit == out.context.gitCommit, r.context.build == out.context.build else {
                throw BenchError.badArgument("cannot combine results of different builds (\(out.context.gitCommit.prefix(12)) \(out.context.build) vs \(r.context.gitCommit.prefix(12)) \(r.context.build))")
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
                    func med(_ k: KeyPath<LatencySummary, Double>) -> Double { SampleStats(lats.map { $0[keyPath: k] }).median }
                    s.latency = LatencySummary(count: lats.reduce(0) { $0 + $1.count }, p50: med(\.p50), p90: med(\.p90), p99: med(\.p99), p999: med(\.p999), max: lats.map(\.max).max() ?? 0, mean: med(\.mean))
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
