import SeededRandomness

/// The lists of the isolation scenario as one store holds them inside one transaction; Fief's
/// worker keeps them in an `Int64 → bytes` table, a target's in string pairs.
protocol ListAppendLists {
    /// How a failed check names this snapshot.
    var snapshotName: String { get }
    func list(_ key: Int64) throws -> [UInt64]
    func setList(_ key: Int64, _ list: [UInt64]) throws
}

/// One list-append transaction (Elle's model), the same for Fief's worker and a target's: drawn
/// from `rng`, it reads one to three pairs (four in ten read-only), or reads then appends
/// `element` to both keys of a pair (one in ten rolled back on purpose). Every append goes to
/// both keys of a pair, so inside any snapshot the two lists of a pair hold the same elements;
/// a reader that sees them differ has seen a torn or uncommitted state.
struct ListAppendTransaction {
    struct Rollback: Error {}

    static let pairs: Int64 = 6

    let process: Int
    let thread: Int
    let index: Int
    let element: UInt64

    func run<Lists: ListAppendLists>(
        rng: inout SeededRandom,
        read: ((Lists) throws -> [HistoryOp]) throws -> [HistoryOp],
        write: ((Lists) throws -> Void) throws -> Void
    ) throws -> HistoryTxn {
        let readPairs = (0..<Int.random(in: 1...3, using: &rng)).map { _ in
            Int64.random(in: 0..<Self.pairs, using: &rng)
        }
        let kind = Int.random(in: 0..<10, using: &rng)
        if kind < 4 {
            return txn(committed: true, ops: try read { lists in try Self.readBoth(readPairs, in: lists) })
        }
        let pair = Int64.random(in: 0..<Self.pairs, using: &rng)
        var ops: [HistoryOp] = []
        do {
            try write { lists in
                ops = try appendToPair(pair, reading: readPairs, in: lists)
                if kind == 9 { throw Rollback() }
            }
            return txn(committed: true, ops: ops)
        } catch is Rollback {
            return txn(committed: false, ops: ops)
        }
    }

    func txn(committed: Bool, ops: [HistoryOp]) -> HistoryTxn {
        HistoryTxn(process: process, thread: thread, index: index, committed: committed, ops: ops)
    }

    /// Reads both lists of each pair, checking that they hold the same elements.
    static func readBoth(_ pairs: [Int64], in lists: some ListAppendLists) throws -> [HistoryOp] {
        var ops: [HistoryOp] = []
        for p in pairs {
            let a = try lists.list(2 * p), b = try lists.list(2 * p + 1)
            if Set(a) != Set(b) {
                throw TortureError.invalid("\(lists.snapshotName): pair \(p) lists differ: \(a) vs \(b)")
            }
            ops.append(.read(key: 2 * p, list: a))
            ops.append(.read(key: 2 * p + 1, list: b))
        }
        return ops
    }

    /// Reads the first list of the other pairs, then reads and appends to both lists of `pair`.
    func appendToPair(_ pair: Int64, reading pairs: [Int64], in lists: some ListAppendLists) throws -> [HistoryOp] {
        var ops: [HistoryOp] = []
        for p in pairs where p != pair {
            ops.append(.read(key: 2 * p, list: try lists.list(2 * p)))
        }
        for k in [2 * pair, 2 * pair + 1] {
            let current = try lists.list(k)
            ops.append(.read(key: k, list: current))
            try lists.setList(k, current + [element])
            ops.append(.append(key: k, element: element))
        }
        return ops
    }
}
