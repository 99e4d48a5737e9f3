import Engine

#if canImport(Glibc)
    import Glibc
#endif

/// Monotonic time and this process's memory, straight from the kernel.
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

    /// Peak resident set of this process so far, in bytes (ru_maxrss is in KiB on Linux).
    static func peakRSSBytes() -> UInt64 {
        var ru = rusage()
        getrusage(RUSAGE_SELF.rawValue, &ru)
        return UInt64(ru.ru_maxrss) * 1024
    }
}
