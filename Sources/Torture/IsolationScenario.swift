import Engine
import Foundation

/// Reader and writer threads in several processes run list-append transactions; the merged
/// history is checked for G0, G1a, G1b, G1c, G-single and lost updates, readers check an
/// invariant inside every snapshot, and the file must check clean afterwards. The history is
/// kept in Elle's format (history.edn) beside the results when a cycle fails.
public struct IsolationScenario: Scenario {
    public var name: String { "isolation" }
    public init() {}

    public func plannedCycles(_ profile: TortureProfile) -> Int { 4 * profile.scale }

    public func runCycle(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        var outcome = CycleOutcome()
        let processes = 3
        let db = dir + "/lists.fief"
        _ = try Database(path: db, options: TortureEncryption.options())
        var children: [ChildProcess] = []
        for p in 0..<processes {
            children.append(try ChildProcess(
                arguments: ["torture", "list-append", "--db", db, "--history", "\(dir)/history-\(p).jsonl",
                            "--process", String(p), "--seed", String(seed), "--threads", "3", "--transactions", "120"],
                environment: context.writerEnvironment, output: "\(dir)/worker-\(p).out", label: "list-append worker"))
        }
        var violations: [String] = []
        for (p, c) in children.enumerated() {
            let ending = c.wait()
            if ending != .exited(0) {
                let out = (try? String(contentsOfFile: "\(dir)/worker-\(p).out", encoding: .utf8)) ?? ""
                violations.append("worker \(p) \(ending): \(out.split(separator: "\n").last ?? "")")
            }
        }
        var history: [HistoryTxn] = []
        for p in 0..<processes { history += (try? HistoryFile.read("\(dir)/history-\(p).jsonl")) ?? [] }
        try? HistoryFile.elle(history).write(toFile: dir + "/history.edn", atomically: true, encoding: .utf8)
        let anomalies = HistoryChecker(history).check()
        violations += anomalies.prefix(20).map(\.description)
        if history.filter(\.committed).count < processes * 3 * 60 {
            violations.append("only \(history.filter(\.committed).count) committed transactions recorded")
        }
        do {
            let report = try Database(path: db, options: TortureEncryption.options(create: false)).check()
            violations += report.problems.map { "integrity: \($0)" }
        } catch {
            violations.append("database does not open: \(error)")
        }
        outcome.events.append(("list-append", violations, "isolation cycle \(index), \(history.count) transactions"))
        return outcome
    }
}
