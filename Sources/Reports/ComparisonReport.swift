import Foundation

/// A comparison as a terminal table and as Markdown. Each row: the medians, the change (the
/// test's estimate) with its confidence interval and p-value, and for Fief the change
/// against its peers, which is what tells a slower Fief from a slower machine.
public enum ComparisonReport {
    static func verdictText(_ r: Comparison.Row) -> String {
        r.failsGate ? "REGRESSION" : r.verdict.rawValue
    }

    static func interval(_ t: Change?) -> String {
        guard let t else { return "exact" }
        return "[\(Format.percent(t.low, signed: true)), \(Format.percent(t.high, signed: true))]"
    }

    static func p(_ t: Change?) -> String {
        guard let t else { return "" }
        return t.pValue < 0.001 ? "<0.001" : String(format: "%.3f", t.pValue)
    }

    /// "-9.8% p=0.008" for Fief's change against all its peers; empty for the peers' rows.
    static func againstPeers(_ r: Comparison.Row) -> String {
        guard let c = r.control else { return "" }
        return "\(Format.percent(c.test.change, signed: true)) p=\(p(c.test))"
    }

    static func summary(_ c: Comparison) -> String {
        let rule = "threshold \(Format.percent(c.threshold)), p < \(c.alpha), at least \(c.minSamples) samples a side"
        return c.regressions.isEmpty
            ? "no regression of Fief (\(rule))"
            : "\(c.regressions.count) regression(s) of Fief (\(rule)): "
                + "\(c.regressions.map { "\($0.benchmark) \($0.metric)" }.joined(separator: ", "))"
    }

    public static func terminal(_ c: Comparison) -> String {
        var t = TextTable(
            header: ["benchmark", "metric", "system", "base", "new", "change", "95% CI", "p", "vs peers", "verdict"],
            rightAligned: [3, 4, 5, 6, 7, 8])
        for r in c.rows {
            t.add([
                r.benchmark, r.metric, r.system.rawValue, Format.value(r.base, unit: r.unit),
                Format.value(r.new, unit: r.unit),
                Format.percent(r.change, signed: true), interval(r.test), p(r.test), againstPeers(r), verdictText(r)
            ])
        }
        var out = "base \(c.baseLabel) -> new \(c.newLabel)\n\n" + t.render()
        for w in c.warnings { out += "warning: \(w)\n" }
        for u in c.unmatched { out += "unmatched: \(u)\n" }
        return out + "\n" + summary(c) + "\n"
    }

    public static func markdown(_ c: Comparison) -> String {
        var md = "# Fief: \(c.newLabel) against \(c.baseLabel)\n\n"
        md += c.regressions.isEmpty ? "**No regression** of Fief" : "**\(c.regressions.count) regression(s)** of Fief"
        md +=
            " (threshold \(Format.percent(c.threshold)), p < \(c.alpha), at least \(c.minSamples) samples a side).\n\n"
        md += """
            | benchmark | metric | system | base | new | change | 95% CI | p | vs peers | verdict |
            |---|---|---|---:|---:|---:|---:|---:|---:|---|

            """
        for r in c.rows {
            let v = r.failsGate ? "**regression**" : r.verdict.rawValue
            let cells = [
                r.benchmark, r.metric, r.system.label, Format.value(r.base, unit: r.unit),
                Format.value(r.new, unit: r.unit),
                Format.percent(r.change, signed: true), interval(r.test), p(r.test), againstPeers(r), v
            ]
            md += "| " + cells.joined(separator: " | ") + " |\n"
        }
        let fief = c.rows.filter { !$0.relative.isEmpty }
        if !fief.isEmpty {
            md += """

                ## Fief against its peers, per repetition

                | benchmark | metric | against | change of Fief's ratio | 95% CI | p |
                |---|---|---|---:|---:|---:|

                """
            for r in fief {
                for pc in r.relative {
                    let cells = [
                        r.benchmark, r.metric, pc.against, Format.percent(pc.test.change, signed: true),
                        interval(pc.test), p(pc.test)
                    ]
                    md += "| " + cells.joined(separator: " | ") + " |\n"
                }
            }
        }
        md += """

            Change: positive is better (for sizes and times, smaller is better); the Hodges–Lehmann \
            estimate of the shift, with its confidence interval and the two-sided Mann–Whitney U \
            p-value over the repetitions. Sizes are deterministic for a seed and compare exactly. \
            A row of Fief fails when its own numbers and its ratio to its peers (measured in the \
            same repetitions) both got worse beyond the threshold with p < \(c.alpha); \
            *drift* marks a change that is not Fief's own (the peers moved alike, or only they moved). \
            The peers' rows never gate.

            """
        if !c.warnings.isEmpty { md += "\n" + c.warnings.map { "- warning: \($0)\n" }.joined() }
        if !c.unmatched.isEmpty { md += "\n" + c.unmatched.map { "- unmatched: \($0)\n" }.joined() }
        return md
    }
}
