import Engine
import Foundation
import SeededRandomness

/// A process of the isolation scenario: several threads run list-append transactions (Elle's
/// model) against one database, some read-only, some reading then appending, some rolled back
/// on purpose, and record every transaction in a history file. Inside each snapshot, readers
/// also check an invariant: every transaction appends its element to a pair of keys, so the
/// two lists of a pair always hold the same elements.
public struct ListAppendWorker: Codable, Sendable, Equatable {
    public let dbPath: String
    public let historyPath: String
    public let process: Int
    public let seed: UInt64
    public let threads: Int
    public let transactions: Int
    static let table = "lists"

    /// The lists in the `lists` table, as one transaction sees them.
    struct Lists: ListAppendLists {
        let table: Table<Int64, [UInt8]>
        let snapshotName: String

        init(_ tx: Transaction) throws {
            table = try tx.table(ListAppendWorker.table, key: Int64.self, value: [UInt8].self)
            snapshotName = "snapshot \(tx.version)"
        }

        func list(_ key: Int64) throws -> [UInt64] { ListAppendWorker.decode(try table.get(key)) }
        func setList(_ key: Int64, _ list: [UInt64]) throws { try table.put(key, ListAppendWorker.encode(list)) }
    }

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
                        let step = ListAppendTransaction(process: process, thread: t, index: i, element: element)
                        local.append(
                            try step.run(
                                rng: &rng,
                                read: { body in try db.read { tx in try body(try Lists(tx)) } },
                                write: { body in try db.write { tx in try body(try Lists(tx)) } }))
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
