import Foundation
import TortureSchema

/// `isolation` for targets with transactions: four processes, one connection each, run
/// list-append transactions on one store; the merged history must show no G0, G1a, G1b, G1c,
/// G-single, lost update, incompatible order or garbage read, no reader may see the two lists
/// of a pair differ, and the store must check clean afterwards. A target that says it has no
/// transactions (an `exec` adapter answering `"transactions": false`) is noted and skipped.
public struct TargetIsolationScenario: Scenario {
    public var name: String { "isolation" }
    static let processes = 4
    static let transactions = 80
    public init() {}

    public func plannedCycles(_ profile: TortureProfile) -> Int { 2 * profile.scale }

    public func runCycle(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        var outcome = CycleOutcome()
        let spec = context.options.target
        let store = dir + "/store"
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
        let capabilities: TargetCapabilities
        do {
            let t = try spec.open(directory: store)
            capabilities = t.capabilities
            t.close()
        }
        guard capabilities.transactions && capabilities.multiProcess else {
            outcome.notes.append("isolation does not apply to \(spec): it declares no transactions across processes")
            outcome.events.append(CycleEvent("not-applicable", [], "isolation cycle \(index)"))
            return outcome
        }
        var children: [ChildProcess] = []
        for p in 0..<TargetIsolationScenario.processes {
            children.append(
                try ChildProcess(
                    .targetListAppend(
                        TargetListAppendWorker(
                            spec: spec, directory: store, historyPath: "\(dir)/history-\(p).jsonl", process: p,
                            seed: seed, transactions: TargetIsolationScenario.transactions)),
                    output: "\(dir)/worker-\(p).out", label: "list-append worker"))
        }
        var violations: [Violation] = []
        for (p, c) in children.enumerated() {
            let ending = c.wait(timeoutSeconds: 300)
            if ending != .exited(0) {
                let out = (try? String(contentsOfFile: "\(dir)/worker-\(p).out", encoding: .utf8)) ?? ""
                let last = String(out.split(separator: "\n").last ?? "")
                let kind: ViolationKind = last.contains("lists differ") ? .isolation : .harness
                violations.append(
                    Violation(kind, "worker \(p) \(ending.map { "\($0)" } ?? "hung"): \(last)"))
            }
        }
        var history: [HistoryTxn] = []
        for p in 0..<TargetIsolationScenario.processes {
            history += (try? HistoryFile.read("\(dir)/history-\(p).jsonl")) ?? []
        }
        try? HistoryFile.elle(history).write(toFile: dir + "/history.edn", atomically: true, encoding: .utf8)
        violations += HistoryChecker(history).check().prefix(20).map {
            Violation(kind: .isolation, text: $0.description)
        }
        let committed = history.filter(\.committed).count
        if committed < TargetIsolationScenario.processes * TargetIsolationScenario.transactions / 2 {
            violations.append(Violation(.harness, "only \(committed) committed transactions recorded"))
        }
        do {
            let t = try spec.open(directory: store)
            defer { t.close() }
            violations += (try t.integrityCheck() ?? []).map {
                Violation(.integrity, "the target's integrity check: \($0)")
            }
        } catch {
            violations.append(Violation(.integrity, "the store does not open after the run: \(error)"))
        }
        outcome.events.append(
            CycleEvent("list-append", violations, "isolation cycle \(index), \(history.count) transactions"))
        return outcome
    }
}
