import TortureSchema

/// The torture verdicts of several runs side by side: one row per target and configuration,
/// one column per scenario, each cell the scenario's verdict (clean, durability loss,
/// atomicity/integrity violation) with its counts. Runs of the same target and configuration
/// (several scenarios run separately) share a row.
enum TargetMatrix {
    struct Row {
        var kind: String
        var configuration: String
        var cells: [String: ScenarioResult] = [:]
    }

    static func rows(_ runs: [TortureResults]) -> (rows: [Row], scenarios: [String]) {
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

    static func cell(_ s: ScenarioResult?) -> String {
        guard let s else { return HTMLReport.td("–", left: true) }
        let counts =
            "\(s.cycles) cycles · \(s.durabilityViolations) durability · "
            + "\(s.atomicityIntegrityViolations) atomicity/integrity"
        let verdict = HTMLReport.tag("span", [("class", s.passed ? "met" : "missed")], HTMLReport.esc(s.verdict))
        return HTMLReport.td(verdict + "<br>" + HTMLReport.tag("small", [], HTMLReport.esc(counts)), left: true)
    }

    static func section(_ runs: [TortureResults]) -> String {
        let (rows, scenarios) = rows(runs)
        var h = HTMLReport.tag("h2", [], "Torture verdicts by target, configuration and scenario")
        h += HTMLReport.tag(
            "p", [("class", "ctx")],
            "Durability: an acknowledged commit lost. Atomicity/integrity: a state no commit made, "
                + "or a failed integrity check.")
        var table = HTMLReport.headerRow(["target", "configuration"] + scenarios)
        for r in rows {
            let target = [
                HTMLReport.td(HTMLReport.esc(r.kind)), HTMLReport.td(HTMLReport.code(r.configuration), left: true)
            ]
            table += HTMLReport.tr(target + scenarios.map { cell(r.cells[$0]) })
        }
        h += HTMLReport.tag("table", [("class", "target-matrix")], table)
        return HTMLReport.tag("section", [("id", "targets")], h)
    }
}
