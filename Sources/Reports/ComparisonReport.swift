/// A comparison as a terminal table and as Markdown.
public enum ComparisonReport {
    static func verdictText(_ r: Comparison.Row) -> String {
        r.failsGate ? "REGRESSION" : r.verdict.rawValue
    }

    public static func terminal(_ c: Comparison) -> String {
        var t = TextTable(header: ["benchmark", "metric", "system", "base", "new", "new/base", "change", "noise", "verdict"], rightAligned: [3, 4, 5, 6, 7])
        for r in c.rows {
            t.add([r.benchmark, r.metric, r.system.rawValue, Format.value(r.base, unit: r.unit), Format.value(r.new, unit: r.unit),
                   String(format: "%.3f", r.ratio), Format.percent(r.change, signed: true), "±" + Format.percent(r.noise), verdictText(r)])
        }
        var out = "base \(c.baseLabel) -> new \(c.newLabel), threshold \(Format.percent(c.threshold))\n\n" + t.render()
        for w in c.warnings { out += "warning: \(w)\n" }
        for u in c.unmatched { out += "unmatched: \(u)\n" }
        out += c.regressions.isEmpty
            ? "\nno regression of Fief beyond noise and the \(Format.percent(c.threshold)) threshold\n"
            : "\n\(c.regressions.count) regression(s) of Fief beyond noise and the \(Format.percent(c.threshold)) threshold: \(c.regressions.map { "\($0.benchmark) \($0.metric)" }.joined(separator: ", "))\n"
        return out
    }

    public static func markdown(_ c: Comparison) -> String {
        var md = "# Fief: \(c.newLabel) against \(c.baseLabel)\n\n"
        md += c.regressions.isEmpty ? "**No regression** beyond noise and the \(Format.percent(c.threshold)) threshold.\n\n"
            : "**\(c.regressions.count) regression(s)** beyond noise and the \(Format.percent(c.threshold)) threshold.\n\n"
        md += "| benchmark | metric | system | base | new | new/base | change | noise | verdict |\n|---|---|---|---:|---:|---:|---:|---:|---|\n"
        for r in c.rows {
            let v = r.failsGate ? "**regression**" : r.verdict.rawValue
            md += "| \(r.benchmark) | \(r.metric) | \(r.system.label) | \(Format.value(r.base, unit: r.unit)) | \(Format.value(r.new, unit: r.unit)) | \(String(format: "%.3f", r.ratio)) | \(Format.percent(r.change, signed: true)) | ±\(Format.percent(r.noise)) | \(v) |\n"
        }
        md += "\nChange: positive is better (for sizes and times, smaller is better). Noise: the two runs' relative spreads combined. Only Fief's rows gate; the peers' show the machine's drift.\n"
        if !c.warnings.isEmpty { md += "\n" + c.warnings.map { "- warning: \($0)\n" }.joined() }
        if !c.unmatched.isEmpty { md += "\n" + c.unmatched.map { "- unmatched: \($0)\n" }.joined() }
        return md
    }
}
