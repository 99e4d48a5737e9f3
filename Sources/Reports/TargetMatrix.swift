/// The torture verdicts of several runs side by side: one row per target and configuration,
/// one column per scenario, each cell the scenario's verdict (clean, durability loss,
/// atomicity/integrity violation) with its counts. Runs of the same target and configuration
/// (several scenarios run separately) share a row.
enum TargetMatrix {
    struct Row {
        var kind: String
        var configuration: String
        var cells: [String: TortureSummary.Scenario] = [:]
    }

    static func rows(_ runs: [TortureSummary]) -> (rows: [Row], scenarios: [String]) {
        var rows: [Row] = []
        var scenarios: [String] = []
        for run in runs {
            var i = rows.firstIndex { $0.kind == run.target.kind && $0.configuration == run.target.configuration }
            if i == nil {
                rows.append(Row(kind: run.target.kind, configuration: run.target.configuration))
                i = rows.count - 1
            }
            for s in run.scenarios {
                if !scenarios.contains(s.name) { scenarios.append(s.name) }
                rows[i!].cells[s.name] = s
            }
        }
        return (rows, scenarios)
    }

    static func cell(_ s: TortureSummary.Scenario?) -> String {
        guard let s else { return "<td class=\"l\">–</td>" }
        let counts = "\(s.cycles) cycles · \(s.durabilityViolations) durability · \(s.atomicityIntegrityViolations) atomicity/integrity"
        let style = s.passed ? "met" : "missed"
        return "<td class=\"l\"><span class=\"\(style)\">\(HTMLReport.esc(s.verdict))</span><br><small>\(HTMLReport.esc(counts))</small></td>"
    }

    static func section(_ runs: [TortureSummary]) -> String {
        let (rows, scenarios) = rows(runs)
        var h = "<section id=\"targets\"><h2>Torture verdicts by target, configuration and scenario</h2>"
        h += "<p class=\"ctx\">Durability: an acknowledged commit lost. Atomicity/integrity: a state no commit made, "
        h += "or a failed integrity check.</p>"
        h += "<table class=\"target-matrix\"><tr><th>target</th><th>configuration</th>"
        h += scenarios.map { "<th>\(HTMLReport.esc($0))</th>" }.joined() + "</tr>"
        for r in rows {
            h += "<tr><td>\(HTMLReport.esc(r.kind))</td><td class=\"l\"><code>\(HTMLReport.esc(r.configuration))</code></td>"
            h += scenarios.map { cell(r.cells[$0]) }.joined() + "</tr>"
        }
        return h + "</table></section>"
    }
}
