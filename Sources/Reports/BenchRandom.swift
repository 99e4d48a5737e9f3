import SeededRandomness

/// Every random choice of a bench run (insert order, read keys, churn victims) comes from
/// streams derived from the one printed seed, so a run repeats exactly and every system sees
/// the same keys in the same order.
enum BenchRandom {
    /// Named streams, so adding draws to one workload never shifts another's.
    enum Stream: UInt64 {
        case insertOrder = 1, readKeys, values, churn, concurrent, smallTxns, objects, objectQueries
    }

    static func stream(seed: UInt64, _ stream: Stream, offset: UInt64 = 0) -> SeededRandom {
        SeededRandom.derive(seed, stream.rawValue &+ offset)
    }

    /// 0..<n in a seeded random order.
    static func permutation(_ n: Int, seed: UInt64, _ stream: Stream) -> [Int64] {
        var rng = BenchRandom.stream(seed: seed, stream)
        var keys = (0..<Int64(n)).map { $0 }
        keys.shuffle(using: &rng)
        return keys
    }

    /// `count` keys drawn uniformly from 0..<n.
    static func keys(_ count: Int, below n: Int, seed: UInt64, _ stream: Stream) -> [Int64] {
        var rng = BenchRandom.stream(seed: seed, stream)
        return (0..<count).map { _ in Int64.random(in: 0..<Int64(max(n, 1)), using: &rng) }
    }
}
