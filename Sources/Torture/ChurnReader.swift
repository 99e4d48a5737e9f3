import Engine
import Foundation

/// A reader process of the `readers` scenario: many short read transactions, each checked
/// against the exact state of the commit it sees (data, bank invariants), while a writer
/// commits as fast as it can. The expected state is kept incrementally, since the commits a
/// reader sees only move forward.
public struct ChurnReader {
    public let dbPath: String
    public let seed: UInt64
    public let seconds: Double
    public let threads: Int

    /// The number of reads made, or the first wrong read.
    public func run() throws -> Result<Int, TortureError> {
        let db = try Database(path: dbPath, options: TortureEncryption.options(create: false))
        let workload = CommitWorkload(seed: seed)
        let failure = FirstError()
        let reads = Counter()
        let group = ThreadGroup()
        let end = Date().addingTimeInterval(seconds)
        for _ in 0..<threads {
            group.spawn {
                var state: [Int64: [UInt8]] = [:]
                var at: UInt64 = 0
                do {
                    while Date() < end && failure.error == nil {
                        try db.read { tx in
                            let k = try CommitWorkload.committed(in: tx)
                            guard k >= at else {
                                throw TortureError.invalid(
                                    "a read transaction saw commit \(k) after one that saw \(at)")
                            }
                            while at < k {
                                at += 1
                                for (key, v) in workload.changes(forCommit: at) { state[key] = v }
                            }
                            var found: [Int64: [UInt8]] = [:]
                            if try tx.tableInfo(CommitWorkload.dataTable) != nil {
                                try tx.table(CommitWorkload.dataTable, key: Int64.self, value: [UInt8].self).scan {
                                    key, v in
                                    found[key] = v; return true
                                }
                            }
                            if found != state {
                                throw TortureError.invalid(
                                    "a read of version \(tx.version) claims commit \(k) but holds another state")
                            }
                            if let bad = try BankTransfers(seed: seed).verify(in: tx, afterCommit: k).first {
                                throw TortureError.invalid("a read of commit \(k): \(bad)")
                            }
                        }
                        reads.add(1)
                    }
                } catch {
                    failure.record(error)
                }
            }
        }
        group.join()
        if let e = failure.error { return .failure(e as? TortureError ?? .invalid("\(error: e)")) }
        return .success(reads.value)
    }
}

/// A thread-safe running total.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var n = 0
    func add(_ k: Int) { lock.lock(); n += k; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return n }
}

extension String.StringInterpolation {
    mutating func appendInterpolation(error e: Error) { appendLiteral(String(describing: e)) }
}
