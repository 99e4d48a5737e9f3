import SeededRandomness
import TortureSchema

/// `CommitWorkload` and `BankTransfers` as text keys and values in one ordered key space, so
/// any target runs the same commits Fief's engine runs and the state after commit k is known
/// exactly. Commit i, in one transaction: the data puts and deletes of `CommitWorkload`
/// (values up to 40 KB), a bank transfer with both legs in a per-account history, and the
/// progress key set to i.
///
///     p/commit            the last commit applied
///     d/NNN               data (NNN < 400)
///     a/NN                account balances (16 accounts, 1,000 each at commit 1)
///     h/NN/CCCCCCCCCC     history legs of account NN, one per commit that touched it
public struct TargetWorkload: Sendable {
    public let seed: UInt64
    let commits: CommitWorkload
    let bank: BankTransfers

    public static let progressKey = "p/commit"

    public init(seed: UInt64) {
        self.seed = seed
        commits = CommitWorkload(seed: seed)
        bank = BankTransfers(seed: seed)
    }

    static func dataKey(_ k: Int64) -> String { "d/" + padded(k, 3) }
    static func accountKey(_ a: Int64) -> String { "a/" + padded(a, 2) }
    static func historyKey(_ a: Int64, _ commit: UInt64) -> String {
        "h/" + padded(a, 2) + "/" + padded(Int64(commit), 10)
    }

    static func padded(_ n: Int64, _ width: Int) -> String {
        let s = String(n)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }

    /// The last commit `tx` holds (0 before the first).
    public static func committed(in tx: TargetTransaction) throws -> UInt64 {
        guard let text = try tx.get(progressKey) else { return 0 }
        guard let n = UInt64(text) else {
            throw TortureError.invalid("the progress key holds '\(text.prefix(40))', not a commit number")
        }
        return n
    }

    public func apply(commit i: UInt64, in tx: TargetTransaction) throws {
        for (k, v) in commits.changes(forCommit: i) {
            if let v {
                try tx.put(TargetWorkload.dataKey(k), String(decoding: v, as: UTF8.self))
            } else {
                try tx.delete(TargetWorkload.dataKey(k))
            }
        }
        if i == 1 {
            for a in 0..<BankTransfers.accounts {
                try tx.put(TargetWorkload.accountKey(a), String(BankTransfers.opening))
            }
        }
        let t = bank.transfer(forCommit: i)
        func balance(_ a: Int64) throws -> Int64 { Int64(try tx.get(TargetWorkload.accountKey(a)) ?? "0") ?? 0 }
        try tx.put(TargetWorkload.accountKey(t.from), String(try balance(t.from) - t.amount))
        try tx.put(TargetWorkload.accountKey(t.to), String(try balance(t.to) + t.amount))
        try tx.put(TargetWorkload.historyKey(t.from, i), String(-t.amount))
        try tx.put(TargetWorkload.historyKey(t.to, i), String(t.amount))
        try tx.put(TargetWorkload.progressKey, String(i))
    }

    /// The data keys after commits 1...k.
    public func expectedData(afterCommit k: UInt64) -> [String: String] {
        var out: [String: String] = [:]
        for (key, value) in commits.expectedState(afterCommit: k) {
            out[TargetWorkload.dataKey(key)] = String(decoding: value, as: UTF8.self)
        }
        return out
    }

    /// Everything wrong with the snapshot `tx`, which says it holds commit `k`: the data is not
    /// the data after commit k, or the bank's balances and histories do not add up.
    public func atomicityViolations(in tx: TargetTransaction, afterCommit k: UInt64) throws -> [Violation] {
        var out: [Violation] = []
        let found = Dictionary(
            try tx.scan(from: "d/", to: "d0").map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
        let expected = expectedData(afterCommit: k)
        if found != expected {
            let missing = expected.keys.filter { found[$0] == nil }.sorted()
            let extra = found.keys.filter { expected[$0] == nil }.sorted()
            let differ = expected.keys.filter { found[$0] != nil && found[$0] != expected[$0] }.sorted()
            out.append(
                Violation(
                    .atomicity,
                    "the data is not the data after commit \(k): \(missing.count) keys missing \(missing.prefix(5)), "
                        + "\(extra.count) unexpected \(extra.prefix(5)), "
                        + "\(differ.count) with other values \(differ.prefix(5))"
                ))
        }
        var balances: [Int64: Int64] = [:]
        for (key, value) in try tx.scan(from: "a/", to: "a0") {
            guard let a = Int64(key.dropFirst(2)), let v = Int64(value) else {
                out.append(Violation(.atomicity, "bank: account entry \(key) = '\(value.prefix(20))' does not parse"))
                continue
            }
            balances[a] = v
        }
        let expectedBalances = bank.expectedBalances(afterCommit: k)
        if balances != expectedBalances {
            let total = balances.values.reduce(0, +)
            let expectedTotal = BankTransfers.accounts * BankTransfers.opening
            let differing = expectedBalances.keys.filter { balances[$0] != expectedBalances[$0] }.count
            out.append(
                Violation(
                    .atomicity,
                    "bank: after commit \(k) the balances add up to \(total) (expected \(expectedTotal)) "
                        + "and \(differing) accounts differ from the replayed ones"
                ))
        }
        for (a, balance) in balances.sorted(by: { $0.key < $1.key }) {
            let legs = try tx.scan(
                from: "h/" + TargetWorkload.padded(a, 2) + "/", to: "h/" + TargetWorkload.padded(a, 2) + "0")
            let sum = legs.reduce(Int64(0)) { $0 + (Int64($1.value) ?? 0) }
            if BankTransfers.opening + sum != balance {
                out.append(
                    Violation(
                        .atomicity,
                        "bank: account \(a)'s \(legs.count) history legs add up to "
                            + "\(BankTransfers.opening + sum), its balance is \(balance)"
                    ))
            }
        }
        return out
    }
}
