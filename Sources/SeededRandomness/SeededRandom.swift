/// SplitMix64. Every random choice in the suite comes from one of these, seeded from the
/// run's printed seed, so a run repeats exactly.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    public private(set) var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// An independent stream for a sub-task, so adding draws in one place never shifts another.
    public static func derive(_ seed: UInt64, _ salt: UInt64) -> SeededRandom {
        var r = SeededRandom(seed: seed ^ (salt &* 0xD6E8_FEB8_6659_FD93))
        _ = r.next()
        return r
    }
}
