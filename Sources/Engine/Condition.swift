#if canImport(Glibc)
    import Glibc
#endif

/// A condition variable, waited on under a `Lock`.
final class Condition: @unchecked Sendable {
    private let c = pthreadObject(pthread_cond_t()) { pthread_cond_init($0, nil) }

    deinit {
        pthread_cond_destroy(c)
        c.deallocate()
    }

    /// Releases `lock` (held by the caller) until signalled, and holds it again on return.
    func wait(_ lock: Lock) { pthread_cond_wait(c, lock.mutex) }

    /// As `wait`, giving up at `deadline` (CLOCK_REALTIME); false when that came first.
    func wait(_ lock: Lock, until deadline: timespec) -> Bool {
        var deadline = deadline
        return pthread_cond_timedwait(c, lock.mutex, &deadline) != ETIMEDOUT
    }

    func signal() { pthread_cond_signal(c) }
    func broadcast() { pthread_cond_broadcast(c) }
}
