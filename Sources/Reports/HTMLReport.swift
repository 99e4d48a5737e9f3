import Foundation
import TortureSchema

/// One self-contained HTML page: context, throughput against peers, latency percentiles, the
/// file-size curves (bench churn and the torture growth scenario), the torture pass/fail
/// matrix, and a comparison when one is given. Inline CSS and SVG only; no script, no fetch.
public enum HTMLReport {
    static let style = """
        body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#111;padding:0 16px}
        h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}
        table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}
        td:first-child,th:first-child,td.l{text-align:left}.met{color:#15803d}.missed{color:#b91c1c;font-weight:600}
        .grid-charts{display:flex;flex-wrap:wrap;gap:12px}\
        .chart{background:#fafafa;border:1px solid #e5e7eb;border-radius:6px}
        .ct{font-weight:600;font-size:13px}.cl{font-size:12px}.cv{font-size:11px;fill:#333}.ax{font-size:10px;fill:#555}
        .grid{stroke:#e5e7eb}.axis{stroke:#333;fill:none}.marker{stroke:#7c3aed;stroke-dasharray:3 3}\
        .bound{stroke:#dc2626;stroke-dasharray:6 3}
        .ctx{color:#444}.reg{color:#b91c1c;font-weight:600}
        """

    static func esc(_ s: String) -> String { SVGChart.esc(s) }

    /// An element, its attribute values escaped, `body` (markup, its text escaped already) inside.
    static func tag(_ name: String, _ attributes: [(String, String)] = [], _ body: String) -> String {
        SVGChart.tag(name, attributes, body)
    }

    /// `text`, escaped, as code.
    static func code(_ text: String) -> String { tag("code", [], esc(text)) }

    /// A table cell; `left` aligns it left, as the text columns are.
    static func td(_ body: String, left: Bool = false) -> String { tag("td", left ? [("class", "l")] : [], body) }

    static func tr(_ cells: [String]) -> String { tag("tr", [], cells.joined()) }

    /// A table's header row, the names escaped.
    static func headerRow(_ names: [String]) -> String { tr(names.map { tag("th", [], esc($0)) }) }

    /// `yes` in green when `ok`, else `no` in red.
    static func verdict(_ ok: Bool, _ yes: String, _ no: String) -> String {
        ok ? tag("span", [("class", "met")], yes) : tag("span", [("class", "missed")], no)
    }

    public static func page(
        bench: BenchResults?, torture: TortureResults?, comparison: Comparison? = nil,
        targetRuns: [TortureResults] = [],
        detection: [DetectionRow] = []
    ) -> String {
        let head = "<meta charset=\"utf-8\">" + tag("title", [], "Fief report") + tag("style", [], style)
        var h = "<!doctype html><html lang=\"en\">" + tag("head", [], head) + "<body>"
        h += "<h1>Fief report</h1>"
        if let comparison { h += comparisonSection(comparison) }
        if let bench { h += benchSections(bench) }
        if let torture { h += tortureSections(torture) }
        if !detection.isEmpty { h += detectionSection(detection) }
        if targetRuns.count > 1 || targetRuns.contains(where: { $0.target.spec != "fief" }) {
            h += TargetMatrix.section(targetRuns)
        }
        if bench == nil && torture == nil && comparison == nil && targetRuns.isEmpty { h += "<p>No results given.</p>" }
        return h + "</body></html>\n"
    }

    // MARK: Bench

    static func benchSections(_ r: BenchResults) -> String {
        let c = r.context, p = r.parameters
        var h = tag("h2", [], "Benchmarks: Fief, SQLite, LMDB")
        let dirty = c.gitDirty == true ? " (with local changes)" : ""
        let label = c.label.map { " · label " + code($0) } ?? ""
        let format = c.engineFormatVersion.map(String.init) ?? "?"
        let commit =
            "commit \(code(String(c.gitCommit.prefix(12))))\(dirty)\(label) · engine format \(format) · "
            + "\(esc(c.build)) build · \(esc(c.date))"
        let machine =
            "\(c.machine.cores) cores, \(Format.bytes(Double(c.machine.memoryBytes))), "
            + "\(esc(c.machine.kernel)), \(esc(c.machine.cpu))"
        let durability =
            "durability \(code(c.durability.rawValue)) "
            + "(full: SQLite WAL synchronous=FULL, LMDB default; none: synchronous=OFF, MDB_NOSYNC)"
        let peers = "SQLite \(esc(c.peerVersions["sqlite"] ?? "?")), LMDB \(esc(c.peerVersions["lmdb"] ?? "?"))"
        let run =
            "profile \(code(p.profile)), seed \(code("\(p.seed)")), \(p.repetitions) repetitions interleaved, "
            + "\(durability), \(p.records) records of \(p.valueSize) bytes; \(peers) · "
            + "\(String(format: "%.0f", r.durationSeconds)) s"
        h += tag("p", [("class", "ctx")], [commit, machine, run].joined(separator: "<br>"))

        var charts = ""
        for b in r.benchmarks {
            let bars = b.systems.map { s -> SVGChart.Bar in
                var text = Format.value(s.value.median, unit: b.unit)
                if s.system != .fief, let a = b.advantage(.fief, over: s.system) {
                    text += " (Fief \(Format.ratio(a)))"
                }
                return SVGChart.Bar(
                    label: s.system.label, color: SVGChart.color(s.system), value: s.value.median, low: s.value.min,
                    high: s.value.max, text: text)
            }
            charts += SVGChart.bars(
                kind: "throughput",
                title: "\(b.title) — \(b.unit == "ops/s" ? "ops/s, higher is better" : b.unit + ", lower is better")",
                bars: bars)
        }
        // Each load measured in a process of its own: the engine's bulk insert, the objects' insert.
        for b in r.benchmarks where b.systems.contains(where: { $0.peakMemory != nil }) {
            let bars = b.systems.compactMap { s in
                s.peakMemory.map {
                    SVGChart.Bar(
                        label: s.system.label, color: SVGChart.color(s.system), value: $0.median, low: $0.min,
                        high: $0.max, text: Format.bytes($0.median))
                }
            }
            charts += SVGChart.bars(
                kind: "memory", title: "\(b.title): peak memory above baseline — lower is better", bars: bars)
        }
        h += tag("h3", [], "Throughput and sizes against peers")
        h += tag("p", [], "Bars: medians; whiskers: min and max over repetitions.")
        h += tag("div", [("class", "grid-charts")], charts)

        let withLatency = r.benchmarks.filter { b in b.systems.contains { $0.latency != nil } }
        if !withLatency.isEmpty {
            var charts = ""
            let labels = LatencySummary.percentiles.map(\.label)
            for b in withLatency {
                let series = b.systems.compactMap { s in
                    s.latency.map { l in
                        SVGChart.Series(
                            name: s.system.label, color: SVGChart.color(s.system),
                            points: LatencySummary.percentiles.enumerated().map {
                                (Double($0.offset), l[keyPath: $0.element.key])
                            })
                    }
                }
                charts += SVGChart.lines(
                    kind: "latency", title: "\(b.title): \(b.latencyOf ?? "latency") (µs, log)", series: series,
                    xLabels: labels, xTitle: "percentile", yFormat: { Format.micros($0) }, logY: true, width: 540,
                    height: 280)
            }
            h += tag("h3", [], "Latency percentiles") + tag("div", [("class", "grid-charts")], charts)
        }

        if let churn = r.benchmark("churn") {
            let series = churn.systems.compactMap { s in
                s.curve.map {
                    SVGChart.Series(
                        name: s.system.label, color: SVGChart.color(s.system),
                        points: $0.enumerated().map { (Double($0.offset), $0.element) })
                }
            }
            let live = churn.systems.first?.extra?["liveBytes"]
            h += tag("h3", [], "File size under insert/delete churn")
            h += SVGChart.lines(
                kind: "file-size", title: "File size after load (round 0) and each churn round", series: series,
                xTitle: "round", yFormat: { Format.bytes($0) },
                hlines: live.map { [($0, "live data \(Format.bytes($0))")] } ?? [])
        }

        h += tag("h3", [], "Table") + benchTable(r)
        let counters = MarkdownReport.counterRows(r)
        if !counters.isEmpty {
            let head = headerRow(["benchmark", "system"] + MarkdownReport.counterColumns.map(\.title))
            let rows = counters.map {
                tr([td(code($0.benchmark)), td(esc($0.system), left: true)] + $0.cells.map { td($0) })
            }
            h += tag("h3", [], "Counters")
            h += tag("p", [], "Medians over repetitions; per operation, or per commit where the column says so.")
            h += tag("table", [], head + rows.joined())
        }
        if !r.targets.isEmpty {
            let rows = r.targets.map { t in
                tr([
                    td(esc(t.benchmark)), td(esc(t.metric), left: true), td(esc(t.requirement), left: true),
                    td(t.measured), td(t.met.map { verdict($0, "met", "missed") } ?? "not measured", left: true)
                ])
            }
            let head = headerRow(["benchmark", "metric", "requirement", "measured", "status"])
            h += tag("h3", [], "Targets") + tag("table", [], head + rows.joined())
        }
        if !r.notes.isEmpty { h += tag("ul", [], r.notes.map { tag("li", [], esc($0)) }.joined()) }
        return tag("section", [("id", "bench")], h)
    }

    static func benchTable(_ r: BenchResults) -> String {
        var h = headerRow([
            "benchmark", "system", "median", "spread", "p50", "p99", "p99.9", "peak memory", "Fief vs it"
        ])
        for b in r.benchmarks {
            for (i, s) in b.systems.enumerated() {
                let lat = s.latency
                let adv: Double? = s.system == .fief ? nil : b.advantage(.fief, over: s.system)
                h += tr([
                    td(i == 0 ? esc(b.title) : ""), td(s.system.label, left: true),
                    td(esc(Format.value(s.value.median, unit: b.unit))), td("±\(Format.percent(s.value.spread))"),
                    td(lat.map { Format.micros($0.p50) } ?? ""), td(lat.map { Format.micros($0.p99) } ?? ""),
                    td(lat.map { Format.micros($0.p999) } ?? ""),
                    td(s.peakMemory.map { Format.bytes($0.median) } ?? ""), td(adv.map(Format.ratio) ?? "")
                ])
            }
        }
        return tag("table", [], h)
    }

    // MARK: Torture

    static func tortureSections(_ t: TortureResults) -> String {
        var h = tag("h2", [], "Torture: " + (t.passed ? "passed" : tag("span", [("class", "missed")], "FAILED")))
        let encrypted = t.encrypted ? ", " + tag("b", [], "encrypted") + " (format 3)" : ""
        let started = t.started.isEmpty ? "" : ", started \(esc(t.started))"
        let context =
            "seed \(code("\(t.seed)")), profile \(code(t.profile)), FaultFS model \(code(t.fsModel))\(encrypted), "
            + "shard \(code(t.shard)), \(String(format: "%.0f", t.durationSeconds)) s\(started)"
        h += tag("p", [("class", "ctx")], context)
        let rows = t.matrix.map { r in
            (
                name: r.scenario,
                cells: r.cells.map {
                    (label: $0.name, passed: $0.passed, detail: "\($0.cycles) cycles, \($0.violations) violations")
                }
            )
        }
        h += SVGChart.matrix(title: "Pass/fail by scenario and mode", rows: rows)
        let scenarios = t.scenarios.map { s in
            tr([
                td(esc(s.name)), td(verdict(s.passed, "pass", "FAIL"), left: true), td("\(s.cycles)"),
                td("\(s.violations)"), td(String(format: "%.1f s", s.durationSeconds))
            ])
        }
        let head = headerRow(["scenario", "result", "cycles", "violations", "duration"])
        h += tag("table", [], head + scenarios.joined())
        for s in t.scenarios where !s.crashStates.isEmpty {
            let rows = s.crashStates.map { c in
                let sectors = c.choices <= 20 ? String(1 << c.choices) : "2^\(c.choices)"
                let possible = c.operationStatesPossible.map {
                    $0 < 1e15 ? String(Int($0)) : String(format: "%.3g", $0)
                }
                return tr([
                    td("\(c.cycle)"), td("\(c.commit)"), td(esc(c.crashPoint), left: true),
                    td(c.operations.map(String.init) ?? "–"),
                    td("\(c.unsyncedSectors)\(c.choices > c.unsyncedSectors ? " + size" : "")"),
                    td("\(c.statesExplored)"), td(possible ?? sectors),
                    td(c.exhaustive ? "all" : "seeded sample", left: true)
                ])
            }
            let head = headerRow([
                "cycle", "commit", "crash point", "unsynced operations", "unsynced sectors", "states explored",
                "states possible", ""
            ])
            let share = s.crashStates.operationLevelExhaustiveShare.map {
                tag(
                    "p", [],
                    "Operation level: \(String(format: "%.1f", $0 * 100)) % of crashed commits explored exhaustively.")
            }
            h +=
                tag("h3", [], "Crash states explored (\(esc(s.name)))") + (share ?? "")
                + tag("table", [], head + rows.joined())
        }
        if let g = t.growth, !g.sizes.isEmpty {
            var series = [
                SVGChart.Series(
                    name: "file size", color: "#2563eb",
                    points: g.sizes.enumerated().map { (Double($0.offset), Double($0.element)) })
            ]
            if !g.liveBytes.isEmpty {
                series.append(
                    SVGChart.Series(
                        name: "live bytes", color: "#16a34a",
                        points: g.liveBytes.enumerated().map { (Double($0.offset), Double($0.element)) }, dashed: true))
            }
            var markers: [(x: Double, label: String)] = []
            if g.pinnedAtCommit > 0 { markers.append((Double(g.pinnedAtCommit), "pinned")) }
            if g.releasedAtCommit > 0 { markers.append((Double(g.releasedAtCommit), "released")) }
            var hl: [(y: Double, label: String)] = []
            if g.boundBytes > 0 { hl.append((Double(g.boundBytes), "bound while pinned")) }
            if g.compactedSize > 0 { hl.append((Double(g.compactedSize), "after compact")) }
            h += tag("h3", [], "Growth scenario: file size per commit")
            h += SVGChart.lines(
                kind: "growth", title: "Torture growth: file size while a version is pinned, then released",
                series: series, xTitle: "commit", yFormat: { Format.bytes($0) }, markers: markers, hlines: hl,
                width: 760, height: 320)
        }
        return tag("section", [("id", "torture")], h)
    }

    static func detectionSection(_ rows: [DetectionRow]) -> String {
        let h = tag("h2", [], "Detection: \(rows.filter(\.caught).count) of \(rows.count) broken variants caught")
        var table = headerRow([
            "broken variant", "scenario", "caught", "cycles to detection", "shrunk to", "first violation"
        ])
        for r in rows {
            let shrunk =
                r.shrunk.map { s in
                    "\(s.before.commits) → \(s.after.commits) commits, "
                        + "\(s.before.deaths) → \(s.after.deaths) writers"
                        + (s.before.lostSectors.map { ", \($0) → \(s.after.lostSectors ?? 0) sectors lost" } ?? "")
                } ?? "-"
            table += tr([
                td(code(r.variant), left: true), td(esc(r.scenario), left: true),
                td(verdict(r.caught, "yes", "NO"), left: true), td(r.cyclesToDetection.map(String.init) ?? "-"),
                td(esc(shrunk)), td(esc(String((r.firstViolation?.text ?? "").prefix(200))), left: true)
            ])
        }
        return tag("section", [("id", "detection")], h + tag("table", [], table))
    }

    // MARK: Comparison

    static func comparisonSection(_ c: Comparison) -> String {
        var h = tag("h2", [], "\(esc(c.newLabel)) against \(esc(c.baseLabel))")
        let summary = esc(ComparisonReport.summary(c))
        h += tag("p", c.regressions.isEmpty ? [] : [("class", "reg")], "\(summary).")
        let rows = c.rows.filter { $0.system == .fief }.map { r in
            (
                label: "\(r.benchmark) \(r.metric)", change: r.change, low: r.test?.low ?? r.change,
                high: r.test?.high ?? r.change, bad: r.failsGate
            )
        }
        if !rows.isEmpty {
            h += SVGChart.changes(title: "Fief: change from base (grey band: 95% confidence interval)", rows: rows)
        }
        var table = headerRow([
            "benchmark", "metric", "system", "base", "new", "change", "95% CI", "p", "vs peers", "verdict"
        ])
        for r in c.rows {
            let v = r.failsGate ? tag("span", [("class", "missed")], "regression") : esc(r.verdict.rawValue)
            let numbers = [
                Format.value(r.base, unit: r.unit), Format.value(r.new, unit: r.unit),
                Format.percent(r.change, signed: true),
                ComparisonReport.interval(r.test), ComparisonReport.p(r.test), ComparisonReport.againstPeers(r)
            ]
            let cells =
                [td(esc(r.benchmark)), td(esc(r.metric), left: true), td(r.system.label, left: true)]
                + numbers.map { td(esc($0)) } + [td(v, left: true)]
            table += tr(cells) + "\n"
        }
        h += tag("table", [], table)
        if !c.warnings.isEmpty { h += tag("ul", [], c.warnings.map { tag("li", [], "warning: \(esc($0))") }.joined()) }
        return tag("section", [("id", "comparison")], h)
    }
}
