#if canImport(Glibc)
    import Glibc
#endif

/// The one-writer-per-database lock: a process-shared, robust POSIX mutex in the `.lock`
/// file's shared mapping, as LMDB's `mti_wmutex`. Taking and releasing it uncontended is an
/// atomic instruction each, where the `fcntl` byte lock it replaces was two system calls per
/// commit. Robust: when its owner dies (SIGKILL mid-commit), the kernel marks it and the next
/// `lock` succeeds with `EOWNERDEAD`; the commit protocol needs no repair from the lock (the
/// files are as any crash leaves them), so the mutex is simply made consistent again.
/// Error-checking: a thread that already holds it through another handle gets `EDEADLK`, not
/// a hang.
///
/// A mutex word can only be trusted while some process has the file open: after a power cut
/// or a crash of every process it may name an owner that no robust list will ever release.
/// So `LockFile` initialises it again whenever it finds itself the only handle (as LMDB does
/// when it gets the exclusive lock on its lock file).
struct WriterMutex {
    static let size = 64
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init(at base: UnsafeMutableRawPointer) {
        precondition(MemoryLayout<pthread_mutex_t>.size <= WriterMutex.size)
        mutex = base.bindMemory(to: pthread_mutex_t.self, capacity: 1)
    }

    /// Only while no other process or handle has the lock file open.
    func initialise(path: String) throws {
        var attr = pthread_mutexattr_t()
        try check(pthread_mutexattr_init(&attr), path, "init mutex attributes")
        defer { pthread_mutexattr_destroy(&attr) }
        try check(
            pthread_mutexattr_setpshared(&attr, Int32(PTHREAD_PROCESS_SHARED)), path,
            "make the writer mutex process-shared")
        try check(pthread_mutexattr_setrobust(&attr, Int32(PTHREAD_MUTEX_ROBUST)), path, "make the writer mutex robust")
        try check(
            pthread_mutexattr_settype(&attr, Int32(PTHREAD_MUTEX_ERRORCHECK)), path,
            "make the writer mutex error-checking")
        UnsafeMutableRawPointer(mutex).initializeMemory(as: UInt8.self, repeating: 0, count: WriterMutex.size)
        try check(pthread_mutex_init(mutex, &attr), path, "init the writer mutex")
    }

    func lock(path: String) throws {
        while true {
            switch pthread_mutex_lock(mutex) {
            case 0:
                return
            case EOWNERDEAD:
                // The previous writer died holding it; what it left on disk is recovered by
                // the commit protocol itself (I12), not by the lock.
                try check(pthread_mutex_consistent(mutex), path, "recover the writer mutex")
                return
            case EDEADLK:
                throw EngineError.nestedWrite
            case EINTR, EAGAIN:
                continue
            case let e:
                throw EngineError.io(path: path, operation: "lock the writer mutex", errno: e)
            }
        }
    }

    func unlock() { pthread_mutex_unlock(mutex) }

    private func check(_ rc: Int32, _ path: String, _ operation: String) throws {
        guard rc == 0 else { throw EngineError.io(path: path, operation: operation, errno: rc) }
    }
}
