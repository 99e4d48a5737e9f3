#if canImport(Glibc)
    import Glibc
#endif

/// An in-process mutex. Cross-process exclusion lives in `LockFile`; this only orders the
/// threads of one process that share a `Database`.
final class Lock: @unchecked Sendable {
    /// Not private: a `Condition` waits on it.
    let mutex = pthreadObject(pthread_mutex_t()) { pthread_mutex_init($0, nil) }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inline(__always) func lock() { pthread_mutex_lock(mutex) }
    @inline(__always) func unlock() { pthread_mutex_unlock(mutex) }

    @inline(__always) func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// A pthread mutex or condition in memory of its own, made ready by `initialise`: neither may
/// move once initialised, and a Swift stored property can.
func pthreadObject<T>(_ empty: T, _ initialise: (UnsafeMutablePointer<T>) -> Int32) -> UnsafeMutablePointer<T> {
    let p = UnsafeMutablePointer<T>.allocate(capacity: 1)
    p.initialize(to: empty)
    _ = initialise(p)
    return p
}
