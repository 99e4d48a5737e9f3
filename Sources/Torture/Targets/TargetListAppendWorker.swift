import SeededRandomness

/// A process of the generic isolation scenario (`fief torture target-list-append`): one
/// connection runs list-append transactions (Elle's model) against a target and records them
/// for `HistoryChecker`: reads in read transactions, read-then-append in write transactions,
/// some rolled back on purpose. Every append goes to both keys of a pair, so inside any
/// snapshot the two lists of a pair hold the same elements; a reader that sees them differ
/// has seen a torn or uncommitted state.
public struct TargetListAppendWorker {
    public let spec: TargetSpec
    public let directory: String
    public let historyPath: String
    public let process: Int
    public let seed: UInt64
    public let transactions: Int
    static let pairs: Int64 = 6

    public init(spec: TargetSpec, directory: String, historyPath: String, process: Int, seed: UInt64, transactions: Int)
    {
        self.spec = spec
        self.directory = directory
        self.historyPath = historyPath
        self.process = process
        self.seed = seed
        self.transactions = transactions
    }

    struct Rollback: Error {}

    static func key(_ k: Int64) -> String { "l/" + TargetWorkload.padded(k, 2) }
    static func decode(_ text: String?) -> [UInt64] { (text ?? "").split(separator: " ").compactMap { UInt64($0) } }
    static func encode(_ list: [UInt64]) -> String { list.map(String.init).joined(separator: " ") }

    public func run() throws {
        let target = try spec.open(directory: directory)
        defer { target.close() }
        var rng = SeededRandom.derive(seed, UInt64(process))
        var history: [HistoryTxn] = []
        defer { try? HistoryFile.write(history, to: historyPath) }
        for i in 0..<transactions {
            let element = (UInt64(process) << 40) | UInt64(i + 1)
            let readPairs = (0..<Int.random(in: 1...3, using: &rng)).map { _ in
                Int64.random(in: 0..<TargetListAppendWorker.pairs, using: &rng)
            }
            let kind = Int.random(in: 0..<10, using: &rng)
            if kind < 4 {
                let ops: [HistoryOp] = try target.read { tx in
                    var ops: [HistoryOp] = []
                    for p in readPairs {
                        let a = TargetListAppendWorker.decode(try tx.get(TargetListAppendWorker.key(2 * p)))
                        let b = TargetListAppendWorker.decode(try tx.get(TargetListAppendWorker.key(2 * p + 1)))
                        if Set(a) != Set(b) {
                            throw TortureError.invalid(
                                "isolation: in one snapshot, pair \(p) lists differ: \(a) vs \(b)")
                        }
                        ops.append(.read(key: 2 * p, list: a))
                        ops.append(.read(key: 2 * p + 1, list: b))
                    }
                    return ops
                }
                history.append(HistoryTxn(process: process, thread: 0, index: i, committed: true, ops: ops))
            } else {
                let pair = Int64.random(in: 0..<TargetListAppendWorker.pairs, using: &rng)
                var ops: [HistoryOp] = []
                do {
                    try target.write { tx in
                        ops = []
                        for p in readPairs where p != pair {
                            ops.append(
                                .read(
                                    key: 2 * p,
                                    list: TargetListAppendWorker.decode(try tx.get(TargetListAppendWorker.key(2 * p)))))
                        }
                        for k in [2 * pair, 2 * pair + 1] {
                            let current = TargetListAppendWorker.decode(try tx.get(TargetListAppendWorker.key(k)))
                            ops.append(.read(key: k, list: current))
                            try tx.put(
                                TargetListAppendWorker.key(k), TargetListAppendWorker.encode(current + [element]))
                            ops.append(.append(key: k, element: element))
                        }
                        if kind == 9 { throw Rollback() }
                    }
                    history.append(HistoryTxn(process: process, thread: 0, index: i, committed: true, ops: ops))
                } catch is Rollback {
                    history.append(HistoryTxn(process: process, thread: 0, index: i, committed: false, ops: ops))
                }
            }
        }
    }
}
