import CFuse3
import Foundation

/// Reads FUSE requests on one thread and, while no fault rule is armed, handles each on that
/// same thread; with rules armed, it hands each to a pool of workers, as libfuse's
/// multi-threaded loop would.
///
/// Why not libfuse's loop: it keeps a spare thread blocked on /dev/fuse, and the kernel gives
/// each request to the thread that has waited longest, so every request woke a cold thread,
/// often on the other CPU. A program's write and the fdatasync after it then paid two such
/// wake-ups; one reader that goes straight back to /dev/fuse often finds the next request
/// already there. Armed rules can sleep (latency) or kill in the middle of an operation, so
/// under them other requests keep being served meanwhile, as before.
final class RequestLoop: @unchecked Sendable {
    private let session: OpaquePointer
    private let maxWorkers: Int
    private let handOff: () -> Bool

    private let jobsChanged = NSCondition()
    /// Guarded by `jobsChanged`.
    private var jobs: [UnsafeMutableRawBufferPointer] = []
    private var idle = 0
    private var workers = 0
    private var stopping = false

    /// `handOff` tells, per request, whether it goes to the workers (at most `maxWorkers` of
    /// them, started as needed) rather than being handled by the reader.
    init(session: OpaquePointer, maxWorkers: Int, handOff: @escaping () -> Bool) {
        self.session = session
        self.maxWorkers = max(1, maxWorkers)
        self.handOff = handOff
    }

    /// Serves until the session exits (unmount, or a signal libfuse's handlers caught), then
    /// waits for the workers to finish what they hold. Returns libfuse's loop result.
    func run() -> Int32 {
        var buf = fuse_buf()
        var res: Int32 = 0
        while fuse_session_exited(session) == 0 {
            res = fuse_session_receive_buf(session, &buf)
            if res == -EINTR { continue }
            if res <= 0 { break }
            // A request spliced into a pipe cannot be copied out for a worker.
            if buf.flags.rawValue & FUSE_BUF_IS_FD.rawValue == 0 && handOff() {
                submit(UnsafeRawBufferPointer(start: buf.mem, count: buf.size))
            } else {
                fuse_session_process_buf(session, &buf)
            }
        }
        free(buf.mem)
        stopWorkers()
        fuse_session_reset(session)
        return res > 0 ? 0 : res
    }

    private func submit(_ request: UnsafeRawBufferPointer) {
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: request.count, alignment: 16)
        copy.copyMemory(from: request)
        jobsChanged.lock()
        jobs.append(copy)
        // More jobs waiting than workers waiting for them (a worker just signalled still
        // counts as waiting until it wakes): start another.
        if jobs.count > idle && workers < maxWorkers {
            workers += 1
            // Workers start with every signal blocked (so inherit it), as libfuse's do: a
            // SIGTERM must reach the reader and break its read, or the loop never sees it.
            var all = sigset_t(), old = sigset_t()
            sigfillset(&all)
            pthread_sigmask(SIG_BLOCK, &all, &old)
            Thread { [self] in work() }.start()
            pthread_sigmask(SIG_SETMASK, &old, nil)
        }
        jobsChanged.signal()
        jobsChanged.unlock()
    }

    private func work() {
        jobsChanged.lock()
        while true {
            while jobs.isEmpty && !stopping {
                idle += 1
                jobsChanged.wait()
                idle -= 1
            }
            if jobs.isEmpty { break }
            let job = jobs.removeFirst()
            jobsChanged.unlock()
            var buf = fuse_buf()
            buf.size = job.count
            buf.mem = job.baseAddress
            buf.fd = -1
            fuse_session_process_buf(session, &buf)
            job.deallocate()
            jobsChanged.lock()
        }
        workers -= 1
        jobsChanged.broadcast()
        jobsChanged.unlock()
    }

    private func stopWorkers() {
        jobsChanged.lock()
        stopping = true
        jobsChanged.broadcast()
        while workers > 0 { jobsChanged.wait() }
        jobsChanged.unlock()
    }
}
