#if canImport(Glibc)
    import Glibc
#endif

/// Nanoseconds on CLOCK_MONOTONIC: a vDSO call, tens of nanoseconds. The engine times its
/// commit's syncs with it (`Database.commitCounts`), `fief bench` its workloads.
package enum MonotonicClock {
    @inline(__always)
    package static func nanos() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
