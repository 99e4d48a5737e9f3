import Engine
import SeededRandomness
import TortureSchema

/// Bank transfers riding on every commit of `CommitWorkload`: commit 1 opens the accounts,
/// each commit moves money between two of them and records both legs in a per-account
/// history. Whatever version a crash leaves, the total never changes, every balance equals
/// the replayed one, and each account's history (a range scan) adds up to its balance.
public struct BankTransfers: Sendable {
    public static let accountsTable = "accounts"
    public static let historyTable = "history"
    static let accounts: Int64 = 16
    static let opening: Int64 = 1_000

    public let seed: UInt64
    /// The commits that make a transfer (a replay's schedule may leave some out); nil: all.
    /// The first of them opens the accounts.
    public let transferCommits: Set<UInt64>?

    public init(seed: UInt64, transferCommits: Set<UInt64>? = nil) {
        self.seed = seed
        self.transferCommits = transferCommits
    }

    func transfers(_ i: UInt64) -> Bool { transferCommits?.contains(i) ?? true }
    /// The commit that opens the accounts.
    var openingCommit: UInt64? {
        guard let transferCommits else { return 1 }
        return transferCommits.min()
    }

    func transfer(forCommit i: UInt64) -> (from: Int64, to: Int64, amount: Int64) {
        var rng = SeededRandom.derive(seed ^ 0xBA4C, i)
        let from = Int64.random(in: 0..<BankTransfers.accounts, using: &rng)
        let to = (from + Int64.random(in: 1..<BankTransfers.accounts, using: &rng)) % BankTransfers.accounts
        return (from, to, Int64.random(in: 1...50, using: &rng))
    }

    /// History keys: the account in the high half, the commit in the low, so one account's
    /// legs are one contiguous range.
    static func historyKey(account: Int64, commit: UInt64) -> Int64 { account << 32 | Int64(commit & 0xFFFF_FFFF) }

    public func apply(commit i: UInt64, in tx: WriteTransaction) throws {
        guard transfers(i) else { return }
        let accounts = try tx.openTable(BankTransfers.accountsTable, key: Int64.self, value: Int64.self)
        let history = try tx.openTable(BankTransfers.historyTable, key: Int64.self, value: Int64.self)
        if i == openingCommit {
            for a in 0..<BankTransfers.accounts { try accounts.put(a, BankTransfers.opening) }
        }
        let t = transfer(forCommit: i)
        // Overdrafts are allowed: the invariant is the total, not the sign.
        // Balances change in place (`Table.update`, the engine's `mutateValue`): the one write
        // path where a leaf must still be copied before its bytes change.
        if try !accounts.update(t.from, { $0 -= t.amount }) { try accounts.put(t.from, -t.amount) }
        if try !accounts.update(t.to, { $0 += t.amount }) { try accounts.put(t.to, t.amount) }
        try history.put(BankTransfers.historyKey(account: t.from, commit: i), -t.amount)
        try history.put(BankTransfers.historyKey(account: t.to, commit: i), t.amount)
    }

    public func expectedBalances(afterCommit k: UInt64) -> [Int64: Int64] {
        guard let first = openingCommit, k >= first else { return [:] }
        var b = Dictionary(uniqueKeysWithValues: (0..<BankTransfers.accounts).map { ($0, BankTransfers.opening) })
        for i in first...k where transfers(i) {
            let t = transfer(forCommit: i)
            b[t.from]! -= t.amount
            b[t.to]! += t.amount
        }
        return b
    }

    /// The violations of the bank's invariants in the snapshot `tx`, which holds commit `k`.
    public func verify(in tx: Transaction, afterCommit k: UInt64) throws -> [Violation] {
        guard try tx.tableInfo(BankTransfers.accountsTable) != nil else {
            return openingCommit.map { k >= $0 } ?? false
                ? [.bank("commit \(k) is present but the accounts table is not")] : []
        }
        let accounts = try tx.table(BankTransfers.accountsTable, key: Int64.self, value: Int64.self)
        let history = try tx.table(BankTransfers.historyTable, key: Int64.self, value: Int64.self)
        var balances: [Int64: Int64] = [:]
        try accounts.scan { a, v in
            balances[a] = v; return true
        }
        var out: [Violation] = []
        let total = balances.values.reduce(0, +)
        if total != BankTransfers.accounts * BankTransfers.opening {
            out.append(.bank("the balances add up to \(total), not \(BankTransfers.accounts * BankTransfers.opening)"))
        }
        let expected = expectedBalances(afterCommit: k)
        if balances != expected {
            let wrong = expected.keys.sorted().filter { balances[$0] != expected[$0] }
            out.append(
                .bank(
                    "after commit \(k), accounts \(wrong.prefix(5)) hold "
                        + "\(wrong.prefix(5).map { balances[$0].map(String.init) ?? "nothing" }), "
                        + "expected \(wrong.prefix(5).map { expected[$0]! })"))
        }
        for (a, balance) in balances.sorted(by: { $0.key < $1.key }) {
            var sum: Int64 = 0, legs = 0
            try history.scan(from: a << 32, to: (a + 1) << 32) { _, delta in
                sum += delta; legs += 1; return true
            }
            if BankTransfers.opening + sum != balance {
                out.append(
                    .bank(
                        "account \(a)'s \(legs) history entries add up to "
                            + "\(BankTransfers.opening + sum), its balance is \(balance)"))
            }
        }
        return out
    }
}

extension Violation {
    /// A broken invariant of the bank: money made or lost is a state no commit made.
    static func bank(_ detail: String) -> Violation { Violation(kind: .atomicity, text: "bank: " + detail) }
}
