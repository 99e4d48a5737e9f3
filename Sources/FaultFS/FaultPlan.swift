#if canImport(Glibc)
    import Glibc
#endif
import SeededRandomness

/// What a firing rule asks the operation to do.
public enum FaultAction: Equatable, Sendable {
    case fail(errno: Int32)
    case shortWrite(keep: Int)
    case delay(micros: UInt32)
    case flipBits(positions: [Int])
    case failFsync
    case lieFsync
    case killCaller(after: Bool)
}

/// The rules in force, each with its own match counter and random stream (derived from the
/// mount's seed and the rule's number), so the same workload meets the same faults.
public struct FaultPlan: Sendable {
    struct Armed: Sendable {
        var rule: FaultRule
        var number: Int
        var matched = 0
        var fired = 0
        var random: SeededRandom
    }

    public let seed: UInt64
    private(set) var armed: [Armed] = []
    private var added = 0
    /// Firings per fault kind since mount, for `status`.
    public private(set) var counters: [String: Int] = [:]

    public init(seed: UInt64) { self.seed = seed }

    public var rules: [(number: Int, rule: FaultRule, matched: Int, fired: Int)] {
        armed.map { ($0.number, $0.rule, $0.matched, $0.fired) }
    }

    @discardableResult
    public mutating func add(_ rule: FaultRule) -> Int {
        added += 1
        armed.append(Armed(rule: rule, number: added, random: SeededRandom.derive(seed, UInt64(added))))
        return added
    }

    public mutating func clear() { armed.removeAll() }

    /// Removes rule `number`; false when there is none.
    public mutating func remove(_ number: Int) -> Bool {
        let before = armed.count
        armed.removeAll { $0.number == number }
        return armed.count < before
    }

    /// The actions for one operation. `length` is the byte count of a read or write;
    /// `overQuota(q)` tells whether the operation would take the mount's data past `q` bytes.
    public mutating func decide(
        _ op: Operation, path: String, length: Int,
        overQuota: (Int64) -> Bool
    ) -> [(rule: FaultRule, number: Int, action: FaultAction)] {
        var out: [(FaultRule, Int, FaultAction)] = []
        for i in armed.indices {
            let rule = armed[i].rule
            guard rule.matches(op, path: path) else { continue }
            if let q = rule.quota, !overQuota(q) { continue }
            armed[i].matched += 1
            guard armed[i].matched >= rule.nth, !(rule.once && armed[i].fired > 0) else { continue }
            if rule.probability < 1 && Double.random(in: 0..<1, using: &armed[i].random) >= rule.probability {
                continue
            }
            let action: FaultAction
            switch rule.kind {
            case .eio: action = .fail(errno: EIO)
            case .enospc: action = .fail(errno: ENOSPC)
            case .edquot: action = .fail(errno: EDQUOT)
            case .shortWrite:
                guard length > 1 else { continue }
                action = .shortWrite(keep: Int.random(in: 1..<length, using: &armed[i].random))
            case .latency:
                action = .delay(
                    micros: UInt32.random(in: rule.minDelayMicros...rule.maxDelayMicros, using: &armed[i].random))
            case .bitflip:
                guard length > 0 else { continue }
                action = .flipBits(
                    positions: (0..<rule.bits).map { _ in Int.random(in: 0..<(length * 8), using: &armed[i].random) })
            case .fsyncFail: action = .failFsync
            case .fsyncLie: action = .lieFsync
            case .killCaller: action = .killCaller(after: rule.killAfter)
            }
            armed[i].fired += 1
            counters[rule.kind.rawValue, default: 0] += 1
            out.append((rule, armed[i].number, action))
        }
        if !out.isEmpty { armed.removeAll { $0.rule.once && $0.fired > 0 } }
        return out
    }
}
