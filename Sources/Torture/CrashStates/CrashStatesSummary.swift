import Foundation
import TortureSchema

/// The crash-states section of summary.md: per size of commit (its unsynced operations, or
/// its unsynced sectors for results written before the operation level), how many states
/// were explored of how many, and the share of crashed commits explored exhaustively.
enum CrashStatesSummary {
    static func markdown(_ s: ScenarioResult) -> String {
        var md = "\n## Crash states explored (\(s.name))\n\n"
        if let share = s.crashStates.operationLevelExhaustiveShare {
            let all = s.crashStates.filter { $0.operations != nil }
            md +=
                "Operation level: \(all.filter(\.exhaustive).count) of \(all.count) crashed commits "
                + "(\(String(format: "%.1f", share * 100)) %) explored exhaustively.\n\n"
            md +=
                "| unsynced operations | commits | states explored | states possible | exhaustive |\n"
                + "|---:|---:|---:|---:|---|\n"
            let byCount = Dictionary(grouping: all, by: { $0.operations ?? 0 })
            for n in byCount.keys.sorted() {
                let rows = byCount[n]!
                let possible = rows.compactMap(\.operationStatesPossible).reduce(0, +)
                md +=
                    "| \(n) | \(rows.count) | \(rows.map(\.statesExplored).reduce(0, +)) | "
                    + "\(possible < 1e15 ? String(Int(possible)) : String(format: "%.3g", possible)) | "
                    + "\(exhaustive(rows)) |\n"
            }
            return md
        }
        md +=
            "| unsynced sectors (+ size) | commits | states explored | states possible | exhaustive |\n"
            + "|---:|---:|---:|---:|---|\n"
        let bySize = Dictionary(grouping: s.crashStates, by: \.choices)
        for choices in bySize.keys.sorted() {
            let rows = bySize[choices]!
            let explored = rows.map(\.statesExplored).reduce(0, +)
            let possible = choices <= 20 ? String(rows.count * (1 << choices)) : "\(rows.count) × 2^\(choices)"
            md += "| \(choices) | \(rows.count) | \(explored) | \(possible) | \(exhaustive(rows)) |\n"
        }
        return md
    }

    static func exhaustive(_ rows: [CrashStateCoverage]) -> String {
        rows.allSatisfy(\.exhaustive) ? "yes" : rows.contains(where: \.exhaustive) ? "some" : "sampled"
    }
}
