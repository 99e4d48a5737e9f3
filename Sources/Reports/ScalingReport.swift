import Foundation

/// Objects-suite results of one build at several data-set sizes (`fief bench run --suite
/// objects --objects N`), side by side: each target at each size, how each system's cost per
/// operation grows with N, and each system's peak memory.
public enum ScalingReport {
    /// One results file at one size.
    public struct Run {
        public var path: String
        public var results: BenchResults
        public init(path: String, results: BenchResults) { (self.path, self.results) = (path, results) }
        var persons: Int { results.parameters.objectPersons ?? 0 }
    }

    /// The runs by size, smallest first; refuses what cannot be laid side by side.
    static func ordered(_ runs: [Run]) throws -> [Run] {
        for r in runs
        where r.results.parameters.objectPersons == nil || (r.results.parameters.suite ?? "engine") == "engine" {
            throw BenchError.badArgument(
                "\(r.path): not an objects-suite result (give results of `fief bench run --suite objects`)")
        }
        let sorted = runs.sorted { $0.persons < $1.persons }
        for (a, b) in zip(sorted, sorted.dropFirst()) where a.persons == b.persons {
            throw BenchError.badArgument(
                "\(a.path) and \(b.path) are both at \(a.persons) persons: give one result per size")
        }
        guard sorted.count >= 2 else {
            throw BenchError.badArgument("give results at two or more sizes (fief bench run --objects N)")
        }
        return sorted
    }

    public static func markdown(_ given: [Run]) throws -> String {
        let runs = try ordered(given)
        let sizes = runs.map { label($0.persons) }
        var md = "# Fief's object layer at \(sizes.joined(separator: ", ")) persons\n\n"
        for r in runs {
            let c = r.results.context
            md +=
                "- \(label(r.persons)): `\(r.path)`, \(c.label.map { "\($0), " } ?? "")commit \(c.gitCommit.prefix(12))"
                + "\(c.gitDirty == true ? " (dirty)" : ""), seed \(r.results.parameters.seed), "
                + "\(r.results.parameters.repetitions) repetitions\n"
        }
        let builds = Set(runs.map { "\($0.results.context.gitCommit)\($0.results.context.gitDirty == true)" })
        if builds.count > 1 { md += "\n**These results come from different builds**: sizes and builds both differ.\n" }
        md += targets(runs, sizes) + growth(runs, sizes) + memory(runs, sizes)
        return md
    }

    /// "20K", "1M", "1500".
    static func label(_ n: Int) -> String {
        if n >= 1_000_000 && n % 1_000_000 == 0 { return "\(n / 1_000_000)M" }
        if n >= 1000 && n % 1000 == 0 { return "\(n / 1000)K" }
        return "\(n)"
    }

    private static func header(_ first: [String], _ sizes: [String], _ last: [String] = []) -> String {
        let cols = first + sizes + last
        return "| " + cols.joined(separator: " | ") + " |\n|"
            + cols.indices.map { $0 < first.count ? "---|" : "---:|" }.joined() + "\n"
    }

    private static func row(_ cells: [String]) -> String { "| " + cells.joined(separator: " | ") + " |\n" }

    /// Every target any run evaluated, in the order the rules list them, measured at each size.
    static func targets(_ runs: [Run], _ sizes: [String]) -> String {
        var keys: [String] = []
        var byKey: [String: [Int: TargetStatus]] = [:]
        for (i, r) in runs.enumerated() {
            for t in r.results.targets where t.ratio != nil {
                let key = "\(t.benchmark) \(t.metric) \(t.requirement)"
                if byKey[key] == nil { keys.append(key) }
                byKey[key, default: [:]][i] = t
            }
        }
        guard !keys.isEmpty else { return "" }
        var md = "\n## Targets at each size\n\n" + header(["target", "requirement"], sizes)
        for key in keys {
            let at = byKey[key]!
            let any = at.values.first!
            var cells = ["`\(any.benchmark)` \(any.metric)", any.requirement]
            for i in runs.indices {
                guard let t = at[i] else {
                    cells.append("")
                    continue
                }
                cells.append(t.measured + (t.met == true ? " met" : t.met == false ? " **missed**" : ""))
            }
            md += row(cells)
        }
        return md
    }

    /// A benchmark's cost per operation: the time one takes (the inverse of a throughput), or
    /// the size or latency itself.
    static func cost(_ b: BenchmarkResult, _ s: SystemResult) -> Double? {
        let v = s.value.median
        guard v > 0 else { return nil }
        return b.unit == "ops/s" ? 1 / v : v
    }

    /// The exponent k in cost ∝ N^k between two sizes.
    static func exponent(cost a: Double, at n: Int, cost b: Double, at m: Int) -> Double? {
        guard a > 0, b > 0, n > 0, m > n else { return nil }
        return log(b / a) / log(Double(m) / Double(n))
    }

    /// Each benchmark's median on each system at each size, and how its cost grew from the
    /// smallest size measured to the largest.
    static func growth(_ runs: [Run], _ sizes: [String]) -> String {
        var ids: [String] = []
        for r in runs { for b in r.results.benchmarks where !ids.contains(b.id) { ids.append(b.id) } }
        guard !ids.isEmpty else { return "" }
        var md =
            "\n## How each workload grows with N\n\n"
            + "Medians at each size; then the cost of one operation (its time, the inverse of a throughput; "
            + "a size or a latency as it is) at the largest size measured over the smallest, and the exponent "
            + "k in cost ∝ N^k between them: 0 is flat, 1 grows as the data does. A count or a full scan is "
            + "one operation over every object (k near 1); an insert, a lookup or an update touches a few "
            + "(k near 0 until the data outgrows the caches).\n\n"
            + header(["benchmark", "system"], sizes, ["cost ×", "k"])
        for id in ids {
            let systems = runs.flatMap { $0.results.benchmark(id)?.systems.map(\.system) ?? [] }
            var seen: [SystemName] = []
            for s in systems where !seen.contains(s) { seen.append(s) }
            for s in seen {
                var cells = ["`\(id)`", s.label]
                var points: [(n: Int, cost: Double)] = []
                for r in runs {
                    guard let b = r.results.benchmark(id), let sr = b.result(s) else {
                        cells.append("")
                        continue
                    }
                    cells.append(Format.value(sr.value.median, unit: b.unit))
                    if let c = cost(b, sr) { points.append((r.persons, c)) }
                }
                if let first = points.first, let last = points.last,
                    let k = exponent(cost: first.cost, at: first.n, cost: last.cost, at: last.n)
                {
                    cells += [String(format: "%.2f", last.cost / first.cost), String(format: "%.2f", k)]
                } else {
                    cells += ["", ""]
                }
                md += row(cells)
            }
        }
        return md
    }

    /// Peak memory of each system's load (obj.insert, in a process of its own) and the file it
    /// left (obj.file-size), at each size.
    static func memory(_ runs: [Run], _ sizes: [String]) -> String {
        var md = ""
        for (id, what, pick) in [
            (
                "obj.insert", "peak memory of the load above the process's baseline",
                { (s: SystemResult) in s.peakMemory?.median }
            ),
            ("obj.file-size", "file size after the load", { (s: SystemResult) in s.value.median })
        ] {
            var systems: [SystemName] = []
            for r in runs {
                for s in r.results.benchmark(id)?.systems ?? [] where pick(s) != nil && !systems.contains(s.system) {
                    systems.append(s.system)
                }
            }
            guard !systems.isEmpty else { continue }
            if md.isEmpty { md = "\n## Memory and file size\n\n" + header(["measure", "system"], sizes) }
            for s in systems {
                md += row(
                    ["\(what) (`\(id)`)", s.label]
                        + runs.map { r in r.results.benchmark(id)?.result(s).flatMap(pick).map(Format.bytes) ?? "" })
            }
        }
        return md
    }
}
