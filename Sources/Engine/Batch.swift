#if canImport(Glibc)
    import Glibc
#endif

// Group commit, after bbolt's `DB.Batch`. A durable commit costs two syncs however much it
// holds, so writers that would each pay them in turn share one commit instead.
//
// There is no timer: calls that arrive while a commit is running (mostly: syncing) queue up,
// and when it ends, one of their threads leads the next commit for all of them. A lone caller
// therefore commits at once, as `write` does. Across processes nothing changes: the leader
// takes the writer lock like any writer, and its queue keeps filling while it waits.
//
// Invariants (docs/FORMAT.md I23 sums them up):
// (1) A call is acknowledged (its `batch` returns normally) only after the transaction that
//     holds its effects passed the select-bit sync, i.e. after `write` returned.
// (2) A combined transaction commits all of its calls or none: a body that throws rolls the
//     whole transaction back, and the others run again without it.
// (3) A body that threw in a transaction shared with other calls runs once more alone, on its
//     caller's thread, in a transaction of its own; whatever that run throws goes to that
//     caller only. A body that threw alone is not run again.
// (4) The queue never holds a call's body after the call is answered, so `batch` can take a
//     non-escaping closure (see `withoutActuallyEscaping` in `Database.batch`).

extension Database {
    /// Runs `body` in a write transaction that may be shared with the `batch` calls of other
    /// threads; returns once that transaction is durable (under `.full`). Under contention this
    /// commits far more often per second than `write`: many calls, one pair of syncs.
    ///
    /// `body` may run more than once (when another call in its transaction throws, every body
    /// in it runs again), and on another thread that is calling `batch`. Keep what it does
    /// outside `tx` idempotent. If `body` throws, its transaction is rolled back; when it had
    /// shared that transaction, `body` runs once more alone. `batch` throws what `body` threw
    /// alone, and the other calls commit without it.
    /// Inside `write` or `batch` on the same file, it throws `EngineError.nestedWrite`.
    @discardableResult
    public func batch<T>(_ body: (WriteTransaction) throws -> T) throws -> T {
        guard !WriterRegistry.isWriting(currentFileID, thread: pthread_self()) else { throw EngineError.nestedWrite }
        try ensureOpen()
        return try withoutActuallyEscaping(body) { body in
            var result: T?
            let call = BatchCall { tx in result = try body(tx) }
            switch batches.submit(call, to: self) {
            case .committed: return result!
            case .failed(let error): throw error
            case .runAlone: return try write(body)
            }
        }
    }

    /// Runs `calls` in as few write transactions as (2) allows; one answer per call.
    func commitGroup(_ calls: [BatchCall]) -> [BatchCall.Outcome] {
        var outcomes = [BatchCall.Outcome?](repeating: nil, count: calls.count)
        var pending = Array(calls.indices)
        while !pending.isEmpty {
            var thrower: Int?
            do {
                try write { tx in
                    for (n, i) in pending.enumerated() {
                        do {
                            try calls[i].body!(tx)
                        } catch {
                            thrower = n
                            throw error
                        }
                    }
                    if BrokenVariant.on(.batchEarlyAck) { batches.acknowledgeEarly(pending.map { calls[$0] }) }
                }
                for i in pending { outcomes[i] = .committed }
                pending = []
            } catch {
                guard let n = thrower else {
                    // Beginning or committing failed: no call of the group is acknowledged
                    // (after a failed select-bit sync it may be durable all the same, as with
                    // `write`; the handle is then poisoned).
                    for i in pending { outcomes[i] = .failed(error) }
                    break
                }
                let i = pending.remove(at: n)
                // A body that threw alone has had its own transaction already.
                outcomes[i] = pending.isEmpty ? .failed(error) : .runAlone
            }
        }
        return outcomes.map { $0! }
    }
}

/// One `batch` call, from submission until its caller is answered.
final class BatchCall {
    enum Outcome {
        /// Its effects are in a durable commit.
        case committed
        /// Its group could not commit (or its body threw when it ran alone).
        case failed(Error)
        /// Its body threw inside a shared transaction: the caller runs it alone.
        case runAlone
    }

    /// nil once answered: see invariant (4).
    var body: ((WriteTransaction) throws -> Void)?
    var outcome: Outcome?
    /// Its thread is to lead the next combined transaction.
    var leads = false
    /// The caller has seen its outcome (only `batch-early-ack` waits for this).
    var left = false
    /// Signalled when `outcome` or `leads` is set: each caller sleeps on its own condition, so
    /// a commit wakes the threads it answers and the next leader, not every waiting thread.
    let wake = Condition()

    init(_ body: @escaping (WriteTransaction) throws -> Void) {
        self.body = body
    }
}

/// The calls waiting for the next combined transaction, and whether one is being led now.
/// The role passes from leader to leader as in LevelDB's writer queue: when a commit ends,
/// the oldest waiting call's thread leads the next one.
final class BatchQueue: @unchecked Sendable {
    private let lock = Lock()
    /// For `batch-early-ack` only: a caller has left.
    private let left = Condition()
    private var waiting: [BatchCall] = []
    private var leading = false
    /// At most this many calls share a transaction, so one commit stays a bounded amount of work.
    static let maxCalls = 1000

    /// Calls queued behind the one being led (for tests that need every caller in line).
    var waitingCount: Int { lock.withLock { waiting.count } }

    /// A call's thread is leading a combined transaction (for tests that need a known leader).
    var isLeading: Bool { lock.withLock { leading } }

    /// Queues `call` and returns its outcome: led by this thread, or by the thread whose call
    /// was oldest in the queue when the previous combined transaction ended.
    func submit(_ call: BatchCall, to db: Database) -> BatchCall.Outcome {
        lock.lock()
        defer { lock.unlock() }
        waiting.append(call)
        if leading {
            while call.outcome == nil && !call.leads { call.wake.wait(lock) }
        } else {
            leading = true
            call.leads = true
        }
        // Leading until our own call is answered (more than `maxCalls` may be ahead of it).
        while call.outcome == nil {
            let group = Array(waiting.prefix(BatchQueue.maxCalls))
            waiting.removeFirst(group.count)
            lock.unlock()
            let outcomes = db.commitGroup(group)
            lock.lock()
            for (c, o) in zip(group, outcomes) where c.outcome == nil { answer(c, o) }
        }
        if call.leads {
            if let next = waiting.first {
                next.leads = true
                next.wake.signal()
            } else {
                leading = false
            }
        }
        if BrokenVariant.on(.batchEarlyAck) {
            call.left = true
            left.broadcast()
        }
        return call.outcome!
    }

    /// Under `lock`.
    private func answer(_ call: BatchCall, _ outcome: BatchCall.Outcome) {
        call.outcome = outcome
        call.body = nil
        call.wake.signal()
    }

    /// `batch-early-ack`: tells the callers their calls committed before the commit is even
    /// written, and lets them go on (and log it) before it is.
    func acknowledgeEarly(_ calls: [BatchCall]) {
        lock.lock()
        defer { lock.unlock() }
        for c in calls { answer(c, .committed) }
        // The leader's own call cannot leave until this commit ends; the others can.
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        deadline.tv_nsec += 20_000_000
        if deadline.tv_nsec >= 1_000_000_000 { deadline.tv_sec += 1; deadline.tv_nsec -= 1_000_000_000 }
        while calls.filter({ !$0.left }).count > 1 {
            if !left.wait(lock, until: deadline) { break }
        }
    }
}
