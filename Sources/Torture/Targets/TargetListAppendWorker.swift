import SeededRandomness

/// A process of the generic isolation scenario (`fief torture target-list-append`): one
/// connection runs list-append transactions (Elle's model) against a target and records them
/// for `HistoryChecker`: reads in read transactions, read-then-append in write transactions,
/// some rolled back on purpose. Every append goes to both keys of a pair, so inside any
/// snapshot the two lists of a pair hold the same elements; a reader that sees them differ
/// has seen a torn or uncommitted state.
public struct TargetListAppendWorker: Codable, Sendable, Equatable {
    public let spec: TargetSpec
    public let directory: String
    public let historyPath: String
    public let process: Int
    public let seed: UInt64
    public let transactions: Int

    /// The lists as string pairs of one target transaction.
    struct Lists: ListAppendLists {
        let tx: TargetTransaction
        var snapshotName: String { "isolation: in one snapshot" }

        func list(_ key: Int64) throws -> [UInt64] {
            TargetListAppendWorker.decode(try tx.get(TargetListAppendWorker.key(key)))
        }
        func setList(_ key: Int64, _ list: [UInt64]) throws {
            try tx.put(TargetListAppendWorker.key(key), TargetListAppendWorker.encode(list))
        }
    }

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
            let step = ListAppendTransaction(
                process: process, thread: 0, index: i, element: (UInt64(process) << 40) | UInt64(i + 1))
            history.append(
                try step.run(
                    rng: &rng,
                    read: { body in try target.read { tx in try body(Lists(tx: tx)) } },
                    write: { body in try target.write { tx in try body(Lists(tx: tx)) } }))
        }
    }
}
