import Engine

/// Monotonic time, straight from the kernel.
enum BenchClock {
    /// Nanoseconds on CLOCK_MONOTONIC (the engine's clock, which times its syncs; the same for
    /// every system).
    @inline(__always)
    static func nanos() -> UInt64 { MonotonicClock.nanos() }

    /// Seconds `body` took.
    static func seconds(_ body: () throws -> Void) rethrows -> Double {
        let t0 = nanos()
        try body()
        return Double(nanos() - t0) / 1e9
    }
}
