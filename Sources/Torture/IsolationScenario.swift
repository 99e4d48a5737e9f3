import Engine
import Foundation
import TortureSchema

/// Reader and writer threads in several processes run list-append transactions; the merged
/// history is checked for G0, G1a, G1b, G1c, G-single and lost updates, readers check an
/// invariant inside every snapshot, and the file must check clean afterwards. The history is
/// kept in Elle's format (history.edn) beside the results when a cycle fails.
public struct IsolationScenario: Scenario {
    public var name: String { "isolation" }
    public init() {}

    public func plannedCycles(_ profile: TortureProfile) -> Int { 4 * profile.scale }

    public func runCycle(_ index: Int, seed: UInt64, dir: String, context: ScenarioContext) throws -> CycleOutcome {
        var outcome = try run(Plan(), seed: seed, dir: dir, environment: context.writerEnvironment)
        if let e = outcome.events.indices.last {
            outcome.events[e].description = "isolation cycle \(index), " + outcome.events[e].description
        }
        return outcome
    }

    /// A cycle's workers: processes, threads in each, transactions per thread.
    public struct Plan: Codable, Sendable, Equatable {
        public var processes = 3
        public var threads = 3
        public var transactions = 120
    }

    func run(_ plan: Plan, seed: UInt64, dir: String, environment: [String: String]) throws -> CycleOutcome {
        var outcome = CycleOutcome()
        let processes = plan.processes
        let db = dir + "/lists.fief"
        _ = try Database(path: db, options: TortureEncryption.options())
        var children: [ChildProcess] = []
        for p in 0..<processes {
            children.append(
                try ChildProcess(
                    .listAppend(
                        ListAppendWorker(
                            dbPath: db, historyPath: "\(dir)/history-\(p).jsonl", process: p, seed: seed,
                            threads: plan.threads, transactions: plan.transactions)),
                    environment: environment, output: "\(dir)/worker-\(p).out", label: "list-append worker"))
        }
        var violations: [Violation] = []
        for (p, c) in children.enumerated() {
            let ending = c.wait()
            if ending != .exited(0) {
                let out = (try? String(contentsOfFile: "\(dir)/worker-\(p).out", encoding: .utf8)) ?? ""
                let last = out.split(separator: "\n").last ?? ""
                // A worker stops at the first snapshot whose two reads of a pair disagree.
                let kind: ViolationKind = last.contains("lists differ") ? .isolation : .harness
                violations.append(Violation(kind: kind, text: "worker \(p) \(ending): \(last)"))
            }
        }
        var history: [HistoryTxn] = []
        for p in 0..<processes { history += (try? HistoryFile.read("\(dir)/history-\(p).jsonl")) ?? [] }
        try? HistoryFile.elle(history).write(toFile: dir + "/history.edn", atomically: true, encoding: .utf8)
        let anomalies = HistoryChecker(history).check()
        violations += anomalies.prefix(20).map { Violation(kind: .isolation, text: $0.description) }
        // Half of all transactions, at least, commit (the rest roll back on purpose or conflict).
        if history.filter(\.committed).count < processes * plan.threads * plan.transactions / 2 {
            violations.append(.harness("only \(history.filter(\.committed).count) committed transactions recorded"))
        }
        do {
            let report = try Database(path: db, options: TortureEncryption.options(create: false)).check()
            violations += report.problems.map { Violation(.integrity, "\($0)") }
        } catch {
            violations.append(Violation(kind: .integrity, text: "database does not open: \(error)"))
        }
        outcome.events.append(CycleEvent("list-append", violations, "\(history.count) transactions"))
        return outcome
    }
}
