import Engine
import Foundation
import SeededRandomness

/// A process of the isolation scenario: several threads run list-append transactions (Elle's
/// model) against one database, some read-only, some reading then appending, some rolled back
/// on purpose, and record every transaction in a history file. Inside each snapshot, readers
/// also check an invariant: every transaction appends its element to a pair of keys, so the
/// two lists of a pair always hold the same elements.
public struct ListAppendWorker {
    public let dbPath: String
    public let historyPath: String
    public let process: Int
    public let seed: UInt64
    public let threads: Int
    public let transactions: Int
    static let pairs: Int64 = 6
    static let table = "lists"

    public init(dbPath: String, historyPath: String, process: Int, seed: UInt64, threads: Int, transactions: Int) {
        self.dbPath = dbPath
        self.historyPath = historyPath
        self.process = process
        self.seed = seed
        self.threads = threads
        self.transactions = transactions
    }

    struct Rollback: Error {}

    static func decode(_ b: [UInt8]?) -> [UInt64] {
        guard let b else { return [] }
        return stride(from: 0, to: b.count - b.count % 8, by: 8).map { i in
            b[i..<(i + 8)].enumerated().reduce(UInt64(0)) { $0 | (UInt64($1.element) << (8 * UInt64($1.offset))) }
        }
    }

    static func encode(_ l: [UInt64]) -> [UInt8] {
        l.flatMap { v in (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) } }
    }

    public func run() throws {
        let db = try Database(path: dbPath, options: TortureEncryption.options())
        _ = try? db.write { tx in
            if try tx.tableInfo(ListAppendWorker.table) == nil {
                try tx.createTable(ListAppendWorker.table, key: Int64.self, value: [UInt8].self)
            }
        }
        let lock = NSLock()
        var history: [HistoryTxn] = []
        let failure = FirstError()
        let group = ThreadGroup()
        for t in 0..<threads {
            group.spawn { [self] in
                var rng = SeededRandom.derive(seed, UInt64(process * 64 + t))
                var local: [HistoryTxn] = []
                do {
                    for i in 0..<transactions {
                        let element = (UInt64(process) << 40) | (UInt64(t) << 32) | UInt64(i + 1)
                        let readPairs = (0..<Int.random(in: 1...3, using: &rng)).map { _ in
                            Int64.random(in: 0..<ListAppendWorker.pairs, using: &rng)
                        }
                        let kind = Int.random(in: 0..<10, using: &rng)
                        if kind < 4 {
                            let ops: [HistoryOp] = try db.read { tx in
                                let table = try tx.table(ListAppendWorker.table, key: Int64.self, value: [UInt8].self)
                                var ops: [HistoryOp] = []
                                for p in readPairs {
                                    let a = ListAppendWorker.decode(try table.get(2 * p)),
                                        b = ListAppendWorker.decode(try table.get(2 * p + 1))
                                    if Set(a) != Set(b) {
                                        throw TortureError.invalid(
                                            "snapshot \(tx.version): pair \(p) lists differ: \(a) vs \(b)")
                                    }
                                    ops.append(.read(key: 2 * p, list: a))
                                    ops.append(.read(key: 2 * p + 1, list: b))
                                }
                                return ops
                            }
                            local.append(HistoryTxn(process: process, thread: t, index: i, committed: true, ops: ops))
                        } else {
                            let target = Int64.random(in: 0..<ListAppendWorker.pairs, using: &rng)
                            let abort = kind == 9
                            var ops: [HistoryOp] = []
                            do {
                                try db.write { tx in
                                    ops = []
                                    let table = try tx.table(
                                        ListAppendWorker.table, key: Int64.self, value: [UInt8].self)
                                    for p in readPairs where p != target {
                                        ops.append(
                                            .read(key: 2 * p, list: ListAppendWorker.decode(try table.get(2 * p))))
                                    }
                                    for k in [2 * target, 2 * target + 1] {
                                        let cur = ListAppendWorker.decode(try table.get(k))
                                        ops.append(.read(key: k, list: cur))
                                        try table.put(k, ListAppendWorker.encode(cur + [element]))
                                        ops.append(.append(key: k, element: element))
                                    }
                                    if abort { throw Rollback() }
                                }
                                local.append(
                                    HistoryTxn(process: process, thread: t, index: i, committed: true, ops: ops))
                            } catch is Rollback {
                                local.append(
                                    HistoryTxn(process: process, thread: t, index: i, committed: false, ops: ops))
                            }
                        }
                    }
                } catch {
                    failure.record(error)
                }
                lock.lock()
                history += local
                lock.unlock()
            }
        }
        group.join()
        try HistoryFile.write(history, to: historyPath)
        if let e = failure.error { throw e }
    }
}
