import Engine
import Foundation

/// What one run of one workload on one system measured.
struct Measurement {
    /// The primary metric (throughput in operations per second, bytes, or milliseconds).
    var value: Double
    var latency = LatencyRecorder()
    var extra: [String: Double] = [:]
    var curve: [Double]? = nil
}

/// The workloads, written once against `BenchStore` so the three systems run the very same
/// code on the very same keys. Each returns its measurement; none prints or decides order.
enum Workloads {
    /// Records per write transaction when loading or churning, so no system's single
    /// transaction grows without bound.
    static let loadBatch = 10_000

    /// Bulk insert: every key in one write transaction.
    static func bulkInsert<S: BenchStore>(_ store: S, keys: [Int64], value: [UInt8]) throws -> Measurement {
        let t = try BenchClock.seconds {
            try store.write { w in
                for k in keys { try w.put(k, value) }
            }
        }
        return Measurement(value: Double(keys.count) / t, extra: ["seconds": t, "fileBytes": Double(store.fileBytes())])
    }

    /// Loads keys in batches (not measured): the data the read workloads run on.
    static func load<S: BenchStore>(_ store: S, keys: [Int64], value: [UInt8]) throws {
        var i = 0
        while i < keys.count {
            let end = min(i + loadBatch, keys.count)
            try store.write { w in
                for k in keys[i..<end] { try w.put(k, value) }
            }
            i = end
        }
    }

    /// Random point reads. Throughput: gets in read transactions of 1,000, no per-operation
    /// clock. Latency: `latencySamples` lookups each in its own read transaction (begin, get,
    /// end), as an application doing single lookups pays.
    static func pointReads<S: BenchStore>(_ store: S, keys: [Int64], latencySamples: Int) throws -> Measurement {
        var found = 0
        let t = try BenchClock.seconds {
            var i = 0
            while i < keys.count {
                let end = min(i + 1000, keys.count)
                found += try store.read { r in
                    var n = 0
                    for k in keys[i..<end] where try r.get(k) >= 0 { n += 1 }
                    return n
                }
                i = end
            }
        }
        guard found == keys.count else {
            throw BenchError.peer(
                system: S.system.rawValue, operation: "point reads", detail: "found \(found) of \(keys.count) keys")
        }
        var m = Measurement(value: Double(keys.count) / t)
        for k in keys.prefix(latencySamples) {
            let t0 = BenchClock.nanos()
            _ = try store.read { r in try r.get(k) }
            m.latency.record(nanos: BenchClock.nanos() - t0)
        }
        return m
    }

    /// Full scans in key order, `passes` times; records per second, latency per pass.
    static func scan<S: BenchStore>(_ store: S, expected: Int, passes: Int) throws -> Measurement {
        var m = Measurement(value: 0)
        var total = 0
        let t = try BenchClock.seconds {
            for _ in 0..<passes {
                let t0 = BenchClock.nanos()
                let (n, _) = try store.read { r in try r.scanAll() }
                m.latency.record(nanos: BenchClock.nanos() - t0)
                guard n == expected else {
                    throw BenchError.peer(
                        system: S.system.rawValue, operation: "scan", detail: "saw \(n) records, expected \(expected)")
                }
                total += n
            }
        }
        m.value = Double(total) / t
        return m
    }

    /// Small transactions: one put per write transaction, each committed at the store's
    /// durability before the next begins. Commits per second, latency per commit.
    static func smallTransactions<S: BenchStore>(_ store: S, keys: [Int64], value: [UInt8]) throws -> Measurement {
        var m = Measurement(value: 0)
        let t = try BenchClock.seconds {
            for k in keys {
                let t0 = BenchClock.nanos()
                try store.write { w in try w.put(k, value) }
                m.latency.record(nanos: BenchClock.nanos() - t0)
            }
        }
        m.value = Double(keys.count) / t
        return m
    }

    /// Small durable transactions from `writers` threads at once for `seconds`, each thread
    /// on its own handle putting its own fresh keys (thread t: `keyBase + t << 24 + n`), one
    /// put per transaction, through `writeAmongMany` (Fief's `batch`). Commits per second over
    /// all threads (a commit here is one thread's transaction acknowledged); latency per call.
    static func concurrentSmallTransactions<S: BenchStore>(
        _ store: S, writers: Int, keyBase: Int64, value: [UInt8], seconds: Double
    ) throws -> Measurement {
        let handles = try (0..<writers).map { _ in try store.handleForAnotherThread() }
        let versionBefore = store.committedTransactions()
        let run = try timedLoops(handles, of: store, seconds: seconds, state: { $0 }) { t, n, handle in
            let k = keyBase + Int64(t) << 24 + Int64(n)
            try handle.writeAmongMany { w in try w.put(k, value) }
        }
        var m = run.measurement
        m.value = Double(run.ops) / run.elapsed
        m.extra["writers"] = Double(writers)
        if let a = versionBefore, let b = store.committedTransactions(), b > a {
            m.extra["callsPerCommit"] = Double(run.ops) / Double(b - a)
        }
        return m
    }

    /// Readers' latency while a writer commits: `readers` threads each run single-get read
    /// transactions on random keys for `seconds`, while one writer commits one-record
    /// transactions (new keys from `writeKeyBase` on) as fast as its durability allows.
    /// Reads per second over all readers; latency per read transaction; writer commits/s.
    /// Readers are bound to CPUs from the first one up and the writer to the last, the same
    /// for every system (`CPUPlacement`).
    static func readersWhileWriting<S: BenchStore>(
        _ store: S, records: Int, writeKeyBase: Int64, value: [UInt8], seconds: Double, readers: Int, seed: UInt64
    ) throws -> Measurement {
        let handles = try (0..<readers).map { _ in try store.handleForAnotherThread() }
        let writerHandle = try store.handleForAnotherThread()
        let writerResult = LockedBox<(Int, Error?)>((0, nil))
        let writer = { (stop: ManagedAtomicFlag) in
            var n = 0
            var failure: Error?
            do {
                while !stop.isSet {
                    try writerHandle.write { w in try w.put(writeKeyBase + Int64(n), value) }
                    n += 1
                }
            } catch { failure = error }
            if writerHandle !== store { writerHandle.close() }
            writerResult.mutate { $0 = (n, failure) }
        }
        let run = try timedLoops(
            handles, of: store, seconds: seconds, alongside: [writer], placement: CPUPlacement.current(),
            state: { BenchRandom.stream(seed: seed, .concurrent, offset: UInt64($0) &+ 100) }
        ) { rng, _, handle in
            let k = Int64.random(in: 0..<Int64(records), using: &rng)
            let len = try handle.read { r in try r.get(k) }
            if len < 0 {
                throw BenchError.peer(
                    system: S.system.rawValue, operation: "read while writing", detail: "key \(k) missing")
            }
        }
        let (commits, wfail) = writerResult.value
        if let wfail { throw wfail }
        var m = run.measurement
        m.value = Double(run.ops) / run.elapsed
        m.extra["writerCommitsPerSecond"] = Double(commits) / run.elapsed
        m.extra["writerCommits"] = Double(commits)
        return m
    }

    /// Runs `op` over and over on each handle's own thread, with the thread's own `state`
    /// (made from its index), and `alongside` bodies on threads of their own, until `seconds`
    /// pass: how many ops ran in all, their latencies, the time taken. The one place for the
    /// start, stop and collection of the timed concurrent workloads; a handle that is not
    /// `store` itself is closed by its thread. With a `placement`, each handle's thread and
    /// each `alongside` thread is bound to its CPU before it starts.
    static func timedLoops<S: BenchStore, State>(
        _ handles: [S], of store: S, seconds: Double, alongside: [(ManagedAtomicFlag) -> Void] = [],
        placement: CPUPlacement? = nil, state: @escaping (Int) -> State,
        _ op: @escaping (_ state: inout State, _ n: Int, S) throws -> Void
    ) throws -> (ops: Int, measurement: Measurement, elapsed: Double) {
        let stop = ManagedAtomicFlag()
        let results = LockedBox<[(Int, LatencyRecorder, Error?)]>([])
        let done = DispatchGroup()
        var threads = handles.enumerated().map { t, handle in
            done.enter()
            return Thread {
                if let placement { CPUPlacement.pinCallingThread(to: placement.worker(t)) }
                var rec = LatencyRecorder()
                var n = 0
                var failure: Error?
                var own = state(t)
                do {
                    while !stop.isSet {
                        let t0 = BenchClock.nanos()
                        try op(&own, n, handle)
                        rec.record(nanos: BenchClock.nanos() - t0)
                        n += 1
                    }
                } catch { failure = error }
                if handle !== store { handle.close() }
                results.mutate { $0.append((n, rec, failure)) }
                done.leave()
            }
        }
        for (i, body) in alongside.enumerated() {
            done.enter()
            threads.append(
                Thread {
                    if let placement { CPUPlacement.pinCallingThread(to: placement.companion(i)) }
                    body(stop)
                    done.leave()
                })
        }
        let start = BenchClock.nanos()
        for t in threads { t.start() }
        usleep(useconds_t(seconds * 1_000_000))
        stop.set()
        done.wait()
        let elapsed = Double(BenchClock.nanos() - start) / 1e9
        var m = Measurement(value: 0)
        var ops = 0
        for (n, rec, failure) in results.value {
            if let failure { throw failure }
            ops += n
            m.latency.add(rec)
        }
        return (ops, m, elapsed)
    }

    /// File size under churn: load `records` keys, then each round delete a seeded random
    /// half of the live keys and insert as many new ones, in transactions of 1,000
    /// operations. The curve is the size after the load and after each round; the value is
    /// the final size in bytes.
    static func churn<S: BenchStore>(_ store: S, records: Int, rounds: Int, value: [UInt8], seed: UInt64) throws
        -> Measurement
    {
        var rng = BenchRandom.stream(seed: seed, .churn)
        var live = Array(0..<Int64(records))
        var next = Int64(records)
        try load(store, keys: live, value: value)
        var curve = [Double(store.fileBytes())]
        for _ in 0..<rounds {
            live.shuffle(using: &rng)
            let victims = live.suffix(records / 2)
            live.removeLast(records / 2)
            var ops: [(Int64, Bool)] = victims.map { ($0, false) }
            for _ in 0..<(records / 2) {
                ops.append((next, true))
                live.append(next)
                next += 1
            }
            var i = 0
            while i < ops.count {
                let end = min(i + 1000, ops.count)
                try store.write { w in
                    for (k, put) in ops[i..<end] {
                        if put { try w.put(k, value) } else { try w.delete(k) }
                    }
                }
                i = end
            }
            curve.append(Double(store.fileBytes()))
        }
        return Measurement(value: curve.last!, extra: ["liveBytes": Double(records * value.count)], curve: curve)
    }

    /// Time to open a file and read one key from it, in milliseconds (the file's pages are
    /// in the page cache: this measures the engine's own open path, not the disk).
    static func open(_ system: SystemName, directory: String, durability: Durability, key: Int64) throws -> Double {
        let t0 = BenchClock.nanos()
        let store = try StoreFactory.open(system, directory: directory, durability: durability)
        let len = try readOne(store, key)
        let t = Double(BenchClock.nanos() - t0) / 1e6
        store.close()
        guard len >= 0 else {
            throw BenchError.peer(system: system.rawValue, operation: "open", detail: "key \(key) missing after reopen")
        }
        return t
    }

    private static func readOne<S: BenchStore>(_ store: S, _ key: Int64) throws -> Int {
        try store.read { r in try r.get(key) }
    }
}

/// A flag threads poll to stop; a lock is cheap next to a read transaction.
final class ManagedAtomicFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var flag = false
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return flag }
    func set() { lock.lock(); flag = true; lock.unlock() }
}

final class LockedBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var v: T
    init(_ v: T) { self.v = v }
    var value: T { lock.lock(); defer { lock.unlock() }; return v }
    func mutate(_ f: (inout T) -> Void) { lock.lock(); f(&v); lock.unlock() }
}
