/// SplitMix64: every random choice of a bench run (insert order, read keys, churn victims)
/// comes from streams derived from the one printed seed, so a run repeats exactly and every
/// system sees the same keys in the same order.
struct BenchRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64, stream: UInt64) {
        state = seed ^ (stream &* 0xD6E8_FEB8_6659_FD93)
        _ = next()
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Named streams, so adding draws to one workload never shifts another's.
    enum Stream: UInt64 {
        case insertOrder = 1, readKeys, values, churn, concurrent, smallTxns
    }

    init(seed: UInt64, _ stream: Stream) { self.init(seed: seed, stream: stream.rawValue) }

    /// 0..<n in a seeded random order.
    static func permutation(_ n: Int, seed: UInt64, _ stream: Stream) -> [Int64] {
        var rng = BenchRandom(seed: seed, stream)
        var keys = (0..<Int64(n)).map { $0 }
        keys.shuffle(using: &rng)
        return keys
    }

    /// `count` keys drawn uniformly from 0..<n.
    static func keys(_ count: Int, below n: Int, seed: UInt64, _ stream: Stream) -> [Int64] {
        var rng = BenchRandom(seed: seed, stream)
        return (0..<count).map { _ in Int64.random(in: 0..<Int64(max(n, 1)), using: &rng) }
    }
}
