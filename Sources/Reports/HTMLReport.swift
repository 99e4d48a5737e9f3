import Foundation

/// One self-contained HTML page: context, throughput against peers, latency percentiles, the
/// file-size curves (bench churn and the torture growth scenario), the torture pass/fail
/// matrix, and a comparison when one is given. Inline CSS and SVG only; no script, no fetch.
public enum HTMLReport {
    static let style = """
        body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#111;padding:0 16px}
        h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}
        table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}
        td:first-child,th:first-child,td.l{text-align:left}.met{color:#15803d}.missed{color:#b91c1c;font-weight:600}
        .grid-charts{display:flex;flex-wrap:wrap;gap:12px}.chart{background:#fafafa;border:1px solid #e5e7eb;border-radius:6px}
        .ct{font-weight:600;font-size:13px}.cl{font-size:12px}.cv{font-size:11px;fill:#333}.ax{font-size:10px;fill:#555}
        .grid{stroke:#e5e7eb}.axis{stroke:#333;fill:none}.marker{stroke:#7c3aed;stroke-dasharray:3 3}.bound{stroke:#dc2626;stroke-dasharray:6 3}
        .ctx{color:#444}.reg{color:#b91c1c;font-weight:600}
        """

    static func esc(_ s: String) -> String { SVGChart.esc(s) }

    public static func page(bench: BenchResults?, torture: TortureSummary?, comparison: Comparison? = nil, targetRuns: [TortureSummary] = [],
                            detection: [TortureSummary.DetectionRow] = []) -> String {
        var h = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Fief report</title><style>\(style)</style></head><body>"
        h += "<h1>Fief report</h1>"
        if let comparison { h += comparisonSection(comparison) }
        if let bench { h += benchSections(bench) }
        if let torture { h += tortureSections(torture) }
        if !detection.isEmpty { h += detectionSection(detection) }
        if targetRuns.count > 1 || targetRuns.contains(where: { $0.target.spec != "fief" }) { h += TargetMatrix.section(targetRuns) }
        if bench == nil && torture == nil && comparison == nil && targetRuns.isEmpty { h += "<p>No results given.</p>" }
        return h + "</body></html>\n"
    }

    // MARK: Bench

    static func benchSections(_ r: BenchResults) -> String {
        let c = r.context, p = r.parameters
        var h = "<section id=\"bench\"><h2>Benchmarks: Fief, SQLite, LMDB</h2><p class=\"ctx\">"
        h += "commit <code>\(esc(String(c.gitCommit.prefix(12))))</code>\(c.gitDirty == true ? " (with local changes)" : "")\(c.label.map { " · label <code>\(esc($0))</code>" } ?? "") · engine format \(c.engineFormatVersion.map(String.init) ?? "?") · \(esc(c.build)) build · \(esc(c.date))<br>"
        h += "\(c.machine.cores) cores, \(Format.bytes(Double(c.machine.memoryBytes))), \(esc(c.machine.kernel)), \(esc(c.machine.cpu))<br>"
        h += "profile <code>\(esc(p.profile))</code>, seed <code>\(p.seed)</code>, \(p.repetitions) repetitions interleaved, durability <code>\(esc(c.durability.rawValue))</code> (full: SQLite WAL synchronous=FULL, LMDB default; none: synchronous=OFF, MDB_NOSYNC), \(p.records) records of \(p.valueSize) bytes; SQLite \(esc(c.peerVersions["sqlite"] ?? "?")), LMDB \(esc(c.peerVersions["lmdb"] ?? "?")) · \(String(format: "%.0f", r.durationSeconds)) s</p>"

        h += "<h3>Throughput and sizes against peers</h3><p>Bars: medians; whiskers: min and max over repetitions.</p><div class=\"grid-charts\">"
        for b in r.benchmarks {
            let bars = b.systems.map { s -> SVGChart.Bar in
                var text = Format.value(s.value.median, unit: b.unit)
                if s.system != .fief, let a = b.advantage(.fief, over: s.system) { text += " (Fief \(Format.ratio(a)))" }
                return SVGChart.Bar(label: s.system.label, color: SVGChart.color(s.system), value: s.value.median, low: s.value.min, high: s.value.max, text: text)
            }
            h += SVGChart.bars(kind: "throughput", title: "\(b.title) — \(b.unit == "ops/s" ? "ops/s, higher is better" : b.unit + ", lower is better")", bars: bars)
        }
        if let b = r.benchmark("bulk-insert"), b.systems.contains(where: { $0.peakMemory != nil }) {
            let bars = b.systems.compactMap { s in
                s.peakMemory.map { SVGChart.Bar(label: s.system.label, color: SVGChart.color(s.system), value: $0.median, low: $0.min, high: $0.max, text: Format.bytes($0.median)) }
            }
            h += SVGChart.bars(kind: "memory", title: "Bulk insert peak memory above baseline — lower is better", bars: bars)
        }
        h += "</div>"

        let withLatency = r.benchmarks.filter { b in b.systems.contains { $0.latency != nil } }
        if !withLatency.isEmpty {
            h += "<h3>Latency percentiles</h3><div class=\"grid-charts\">"
            let labels = LatencySummary.percentiles.map(\.label)
            for b in withLatency {
                let series = b.systems.compactMap { s in
                    s.latency.map { l in
                        SVGChart.Series(name: s.system.label, color: SVGChart.color(s.system),
                                        points: LatencySummary.percentiles.enumerated().map { (Double($0.offset), l[keyPath: $0.element.key]) })
                    }
                }
                h += SVGChart.lines(kind: "latency", title: "\(b.title): \(b.latencyOf ?? "latency") (µs, log)", series: series, xLabels: labels, xTitle: "percentile", yFormat: { Format.micros($0) }, logY: true, width: 540, height: 280)
            }
            h += "</div>"
        }

        if let churn = r.benchmark("churn") {
            let series = churn.systems.compactMap { s in
                s.curve.map { SVGChart.Series(name: s.system.label, color: SVGChart.color(s.system), points: $0.enumerated().map { (Double($0.offset), $0.element) }) }
            }
            let live = churn.systems.first?.extra?["liveBytes"]
            h += "<h3>File size under insert/delete churn</h3>"
            h += SVGChart.lines(kind: "file-size", title: "File size after load (round 0) and each churn round", series: series, xTitle: "round", yFormat: { Format.bytes($0) }, hlines: live.map { [($0, "live data \(Format.bytes($0))")] } ?? [])
        }

        h += "<h3>Table</h3>" + benchTable(r)
        if !r.targets.isEmpty {
            h += "<h3>Targets</h3><table><tr><th>benchmark</th><th>metric</th><th>requirement</th><th>measured</th><th>status</th></tr>"
            for t in r.targets {
                let status = t.met.map { $0 ? "<span class=\"met\">met</span>" : "<span class=\"missed\">missed</span>" } ?? "not measured"
                h += "<tr><td>\(esc(t.benchmark))</td><td class=\"l\">\(esc(t.metric))</td><td class=\"l\">\(esc(t.requirement))</td><td>\(t.measured)</td><td class=\"l\">\(status)</td></tr>"
            }
            h += "</table>"
        }
        if !r.notes.isEmpty { h += "<ul>" + r.notes.map { "<li>\(esc($0))</li>" }.joined() + "</ul>" }
        return h + "</section>"
    }

    static func benchTable(_ r: BenchResults) -> String {
        var h = "<table><tr><th>benchmark</th><th>system</th><th>median</th><th>spread</th><th>p50</th><th>p99</th><th>p99.9</th><th>peak memory</th><th>Fief vs it</th></tr>"
        for b in r.benchmarks {
            for (i, s) in b.systems.enumerated() {
                let lat = s.latency
                let adv: Double? = s.system == .fief ? nil : b.advantage(.fief, over: s.system)
                var row = "<tr><td>\(i == 0 ? esc(b.title) : "")</td><td class=\"l\">\(s.system.label)</td>"
                row += "<td>\(esc(Format.value(s.value.median, unit: b.unit)))</td><td>±\(Format.percent(s.value.spread))</td>"
                row += "<td>\(lat.map { Format.micros($0.p50) } ?? "")</td><td>\(lat.map { Format.micros($0.p99) } ?? "")</td><td>\(lat.map { Format.micros($0.p999) } ?? "")</td>"
                row += "<td>\(s.peakMemory.map { Format.bytes($0.median) } ?? "")</td><td>\(adv.map(Format.ratio) ?? "")</td></tr>"
                h += row
            }
        }
        return h + "</table>"
    }

    // MARK: Torture

    static func tortureSections(_ t: TortureSummary) -> String {
        var h = "<section id=\"torture\"><h2>Torture: \(t.passed ? "passed" : "<span class=\"missed\">FAILED</span>")</h2>"
        h += "<p class=\"ctx\">seed <code>\(t.seed)</code>, profile <code>\(esc(t.profile))</code>, FaultFS model <code>\(esc(t.fsModel))</code>\(t.encrypted ? ", <b>encrypted</b> (format 3)" : ""), shard <code>\(esc(t.shard))</code>, \(String(format: "%.0f", t.durationSeconds)) s\(t.started.isEmpty ? "" : ", started \(esc(t.started))")</p>"
        let rows = t.matrix.map { r in
            (name: r.scenario, cells: r.cells.map { (label: $0.name, passed: $0.passed, detail: "\($0.cycles) cycles, \($0.violations) violations") })
        }
        h += SVGChart.matrix(title: "Pass/fail by scenario and mode", rows: rows)
        h += "<table><tr><th>scenario</th><th>result</th><th>cycles</th><th>violations</th><th>duration</th></tr>"
        for s in t.scenarios {
            h += "<tr><td>\(esc(s.name))</td><td class=\"l\">\(s.passed ? "<span class=\"met\">pass</span>" : "<span class=\"missed\">FAIL</span>")</td><td>\(s.cycles)</td><td>\(s.violations)</td><td>\(String(format: "%.1f s", s.durationSeconds))</td></tr>"
        }
        h += "</table>"
        for s in t.scenarios where !s.crashStates.isEmpty {
            h += "<h3>Crash states explored (\(esc(s.name)))</h3><table><tr><th>cycle</th><th>commit</th><th>crash point</th><th>unsynced sectors</th><th>states explored</th><th>states possible</th><th></th></tr>"
            for c in s.crashStates {
                let possible = c.choices <= 20 ? String(1 << c.choices) : "2^\(c.choices)"
                h += "<tr><td>\(c.cycle)</td><td>\(c.commit)</td><td class=\"l\">\(esc(c.crashPoint))</td><td>\(c.unsyncedSectors)\(c.choices > c.unsyncedSectors ? " + size" : "")</td><td>\(c.statesExplored)</td><td>\(possible)</td><td class=\"l\">\(c.exhaustive ? "all" : "seeded sample")</td></tr>"
            }
            h += "</table>"
        }
        if let g = t.growth, !g.sizes.isEmpty {
            var series = [SVGChart.Series(name: "file size", color: "#2563eb", points: g.sizes.enumerated().map { (Double($0.offset), Double($0.element)) })]
            if !g.liveBytes.isEmpty {
                series.append(SVGChart.Series(name: "live bytes", color: "#16a34a", points: g.liveBytes.enumerated().map { (Double($0.offset), Double($0.element)) }, dashed: true))
            }
            var markers: [(x: Double, label: String)] = []
            if g.pinnedAtCommit > 0 { markers.append((Double(g.pinnedAtCommit), "pinned")) }
            if g.releasedAtCommit > 0 { markers.append((Double(g.releasedAtCommit), "released")) }
            var hl: [(y: Double, label: String)] = []
            if g.boundBytes > 0 { hl.append((Double(g.boundBytes), "bound while pinned")) }
            if g.compactedSize > 0 { hl.append((Double(g.compactedSize), "after compact")) }
            h += "<h3>Growth scenario: file size per commit</h3>"
            h += SVGChart.lines(kind: "growth", title: "Torture growth: file size while a version is pinned, then released", series: series, xTitle: "commit", yFormat: { Format.bytes($0) }, markers: markers, hlines: hl, width: 760, height: 320)
        }
        return h + "</section>"
    }

    static func detectionSection(_ rows: [TortureSummary.DetectionRow]) -> String {
        var h = "<section id=\"detection\"><h2>Detection: \(rows.filter(\.caught).count) of \(rows.count) broken variants caught</h2>"
        h += "<table><tr><th>broken variant</th><th>scenario</th><th>caught</th><th>cycles to detection</th><th>shrunk to</th><th>first violation</th></tr>"
        for r in rows {
            h += "<tr><td class=\"l\"><code>\(esc(r.variant))</code></td><td class=\"l\">\(esc(r.scenario))</td><td class=\"l\">\(r.caught ? "<span class=\"met\">yes</span>" : "<span class=\"missed\">NO</span>")</td>"
            let shrunk = r.shrunk.map { s in
                "\(s.before.commits) → \(s.after.commits) commits, \(s.before.deaths) → \(s.after.deaths) writers"
                    + (s.before.lostSectors.map { ", \($0) → \(s.after.lostSectors ?? 0) sectors lost" } ?? "")
            } ?? "-"
            h += "<td>\(r.cyclesToDetection.map(String.init) ?? "-")</td><td>\(esc(shrunk))</td><td class=\"l\">\(esc(String((r.firstViolation ?? "").prefix(200))))</td></tr>"
        }
        return h + "</table></section>"
    }

    // MARK: Comparison

    static func comparisonSection(_ c: Comparison) -> String {
        var h = "<section id=\"comparison\"><h2>\(esc(c.newLabel)) against \(esc(c.baseLabel))</h2>"
        let summary = esc(ComparisonReport.summary(c))
        h += c.regressions.isEmpty ? "<p>\(summary).</p>" : "<p class=\"reg\">\(summary).</p>"
        let rows = c.rows.filter { $0.system == .fief }.map { r in
            (label: "\(r.benchmark) \(r.metric)", change: r.change, low: r.test?.low ?? r.change, high: r.test?.high ?? r.change, bad: r.failsGate)
        }
        if !rows.isEmpty { h += SVGChart.changes(title: "Fief: change from base (grey band: 95% confidence interval)", rows: rows) }
        let head = ["benchmark", "metric", "system", "base", "new", "change", "95% CI", "p", "vs peers", "verdict"]
        h += "<table><tr>" + head.map { "<th>\($0)</th>" }.joined() + "</tr>"
        for r in c.rows {
            let v = r.failsGate ? "<span class=\"missed\">regression</span>" : esc(r.verdict.rawValue)
            let numbers = [
                Format.value(r.base, unit: r.unit), Format.value(r.new, unit: r.unit), Format.percent(r.change, signed: true),
                ComparisonReport.interval(r.test), ComparisonReport.p(r.test), ComparisonReport.againstPeers(r),
            ]
            h += "<tr><td>\(esc(r.benchmark))</td><td class=\"l\">\(esc(r.metric))</td><td class=\"l\">\(r.system.label)</td>"
            h += numbers.map { "<td>\(esc($0))</td>" }.joined() + "<td class=\"l\">\(v)</td></tr>\n"
        }
        h += "</table>"
        if !c.warnings.isEmpty { h += "<ul>" + c.warnings.map { "<li>warning: \(esc($0))</li>" }.joined() + "</ul>" }
        return h + "</section>"
    }
}
