#if canImport(Glibc)
    import Glibc
#endif

/// An in-process mutex. Cross-process exclusion lives in `LockFile`; this only orders the
/// threads of one process that share a `Database`.
final class Lock: @unchecked Sendable {
    private let m: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        m = .allocate(capacity: 1)
        m.initialize(to: pthread_mutex_t())
        pthread_mutex_init(m, nil)
    }

    deinit {
        pthread_mutex_destroy(m)
        m.deallocate()
    }

    @inline(__always) func lock() { pthread_mutex_lock(m) }
    @inline(__always) func unlock() { pthread_mutex_unlock(m) }

    @inline(__always) func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}
