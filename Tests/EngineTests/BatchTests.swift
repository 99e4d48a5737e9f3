import XCTest
@testable import Engine

/// `Database.batch`: calls from many threads share commits, and one call's failure is its own.
final class BatchTests: XCTestCase {
    struct Refused: Error, Equatable { let caller: Int }

    /// Runs `body(i)` on `n` threads at once and waits for all of them.
    func onThreads(_ n: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let done = DispatchGroup()
        for i in 0..<n {
            done.enter()
            Thread {
                body(i)
                done.leave()
            }.start()
        }
        done.wait()
    }

    /// Holds the writer role while `n` threads call `batch`, so their calls queue up; then
    /// lets them go. Returns each caller's result.
    func queuedBehindAWriter(
        _ db: Database, _ n: Int, _ body: @escaping @Sendable (Int, WriteTransaction) throws -> UInt64
    ) -> [Result<UInt64, Error>] {
        let results = LockedResults(n)
        let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let writer = Thread {
            // Rolls back, so the only commits are the callers'.
            try? db.write { _ in
                holding.signal()
                release.wait()
                throw Refused(caller: -1)
            }
        }
        writer.start()
        holding.wait()
        let callers = DispatchGroup()
        let deadline = Date().addingTimeInterval(10)
        for i in 0..<n {
            callers.enter()
            Thread {
                results.set(i, Result { try db.batch { tx in try body(i, tx) } })
                callers.leave()
            }.start()
            // Caller 0 leads (its call alone, blocked on the writer lock); the others queue
            // behind it and share the next transaction. Waited for, not slept: a loaded
            // machine can start threads in any order.
            if i == 0 { while !db.batches.isLeading && Date() < deadline { usleep(1_000) } }
        }
        while db.batches.waitingCount < n - 1 && Date() < deadline { usleep(2_000) }
        usleep(20_000)
        release.signal()
        callers.wait()
        return results.all
    }

    func testManyThreadsAllCommit() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("b.fief"))
        try db.write { try $0.createTable("t", key: Int64.self, value: Int64.self) }
        let before = try db.latestVersion()
        let failures = LockedList()
        let threads = 8, calls = 25
        onThreads(threads) { t in
            for c in 0..<calls {
                do {
                    let key = Int64(t * 1000 + c)
                    let version = try db.batch { tx in
                        try tx.table("t", key: Int64.self, value: Int64.self).put(key, key * 2)
                        return tx.version
                    }
                    // Acknowledged means committed: a new read sees it, at that version or later.
                    let seen = try db.read { tx in
                        (try tx.table("t", key: Int64.self, value: Int64.self).get(key), tx.version)
                    }
                    if seen.0 != key * 2 || seen.1 < version {
                        failures.append("thread \(t) call \(c): read \(seen) after commit at \(version)")
                    }
                } catch { failures.append("thread \(t) call \(c): \(error)") }
            }
        }
        XCTAssertEqual(failures.items, [])
        try db.read { tx in
            let t = try tx.table("t", key: Int64.self, value: Int64.self)
            XCTAssertEqual(try t.count(), threads * calls)
            XCTAssertEqual(tx.version - before <= UInt64(threads * calls), true)
        }
        XCTAssertTrue(try db.check().problems.isEmpty)
    }

    func testThrowingCallsAmongManyThreadsFailAlone() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("b.fief"))
        try db.write { try $0.createTable("t", key: Int64.self, value: Int64.self) }
        let failures = LockedList()
        let committed = LockedResults(1)
        onThreads(8) { t in
            for c in 0..<40 {
                let key = Int64(t * 1000 + c)
                let refuse = (t + c) % 5 == 0
                do {
                    try db.batch { tx in
                        try tx.table("t", key: Int64.self, value: Int64.self).put(key, key)
                        if refuse { throw Refused(caller: t) }
                    }
                    if refuse {
                        failures.append("thread \(t) call \(c): should have thrown")
                    } else {
                        committed.count(0)
                    }
                } catch let e as Refused where refuse && e.caller == t {
                } catch { failures.append("thread \(t) call \(c): \(error)") }
            }
        }
        XCTAssertEqual(failures.items, [])
        try db.read { tx in
            let keys = try tx.table("t", key: Int64.self, value: Int64.self).entries().map(\.key)
            XCTAssertEqual(keys.count, committed.runs(0))
            XCTAssertTrue(keys.allSatisfy { ($0 / 1000 + $0 % 1000) % 5 != 0 })
        }
        XCTAssertTrue(try db.check().problems.isEmpty)
    }

    /// Two handles on one file take turns through the writer lock, as two processes do.
    func testTwoHandlesBatchingOnOneFile() throws {
        let dir = TempDir()
        let path = dir.file("b.fief")
        let handles = [try Database(path: path), try Database(path: path)]
        try handles[0].write { try $0.createTable("t", key: Int64.self, value: Int64.self) }
        let failures = LockedList()
        onThreads(6) { t in
            let db = handles[t % 2]
            for c in 0..<30 {
                let key = Int64(t * 1000 + c)
                do {
                    try db.batch { try $0.table("t", key: Int64.self, value: Int64.self).put(key, key) }
                } catch { failures.append("thread \(t) call \(c): \(error)") }
            }
        }
        XCTAssertEqual(failures.items, [])
        for db in handles {
            try db.read { XCTAssertEqual(try $0.table("t", key: Int64.self, value: Int64.self).count(), 180) }
        }
        XCTAssertTrue(try handles[1].check().problems.isEmpty)
    }

    func testQueuedCallsShareOneCommit() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("b.fief"))
        try db.write { try $0.createTable("t", key: Int64.self, value: Int64.self) }
        let before = try db.latestVersion()
        let results = queuedBehindAWriter(db, 8) { i, tx in
            try tx.table("t", key: Int64.self, value: Int64.self).put(Int64(i), 1)
            return tx.version
        }
        let versions = try results.map { try $0.get() }
        // The first caller leads a commit of its own call; the seven that queued behind it
        // share the next.
        XCTAssertLessThanOrEqual(Set(versions).count, 2, "versions \(versions)")
        XCTAssertLessThanOrEqual(try db.latestVersion() - before, 2)
        try db.read { XCTAssertEqual(try $0.table("t", key: Int64.self, value: Int64.self).count(), 8) }
    }

    func testAThrowingBodyFailsOnlyItsCaller() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("b.fief"))
        try db.write { try $0.createTable("t", key: Int64.self, value: Int64.self) }
        let runs = LockedResults(8)
        let results = queuedBehindAWriter(db, 8) { i, tx in
            runs.count(i)
            // Its write must not survive: the transaction is rolled back, not committed.
            try tx.table("t", key: Int64.self, value: Int64.self).put(Int64(i), 1)
            if i == 3 || i == 5 { throw Refused(caller: i) }
            return tx.version
        }
        for (i, r) in results.enumerated() {
            if i == 3 || i == 5 {
                XCTAssertThrowsError(try r.get()) { XCTAssertEqual($0 as? Refused, Refused(caller: i)) }
            } else {
                XCTAssertNoThrow(try r.get(), "caller \(i)")
            }
        }
        try db.read { tx in
            let t = try tx.table("t", key: Int64.self, value: Int64.self)
            XCTAssertEqual(try t.entries().map(\.key), [0, 1, 2, 4, 6, 7])
        }
        // A thrower runs at most twice: in the shared transaction and alone.
        XCTAssertLessThanOrEqual(runs.runs(3), 2)
        XCTAssertTrue(try db.check().problems.isEmpty)
    }

    func testABodyThatThrowsOnceSucceedsAlone() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("b.fief"))
        try db.write { try $0.createTable("t", key: Int64.self, value: Int64.self) }
        let runs = LockedResults(4)
        let results = queuedBehindAWriter(db, 4) { i, tx in
            let n = runs.count(i)
            try tx.table("t", key: Int64.self, value: Int64.self).put(Int64(i), Int64(n))
            if i == 2 && n == 1 { throw Refused(caller: i) }
            return tx.version
        }
        for r in results { XCTAssertNoThrow(try r.get()) }
        try db.read { tx in
            XCTAssertEqual(try tx.table("t", key: Int64.self, value: Int64.self).count(), 4)
        }
    }

    func testNestingIsRefusedWithATypedError() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("b.fief"))
        try db.write { tx in
            _ = try tx.createTable("t", key: Int64.self, value: Int64.self)
            XCTAssertThrowsError(try db.batch { _ in }) { XCTAssertEqual($0 as? EngineError, .nestedWrite) }
        }
        XCTAssertThrowsError(try db.batch { _ in try db.batch { _ in } }) {
            XCTAssertEqual($0 as? EngineError, .nestedWrite)
        }
        XCTAssertThrowsError(try db.batch { _ in try db.write { _ in } }) {
            XCTAssertEqual($0 as? EngineError, .nestedWrite)
        }
        // A body may read through its own transaction and return a value.
        let v = try db.batch { tx in
            try tx.table("t", key: Int64.self, value: Int64.self).put(1, 10)
            return try tx.table("t", key: Int64.self, value: Int64.self).get(1)
        }
        XCTAssertEqual(v, 10)
        // write and batch from two threads at once both commit.
        onThreads(2) { i in
            for k in 0..<20 {
                let key = Int64(100 + i * 100 + k)
                if i == 0 {
                    try! db.write { try $0.table("t", key: Int64.self, value: Int64.self).put(key, key) }
                } else {
                    try! db.batch { try $0.table("t", key: Int64.self, value: Int64.self).put(key, key) }
                }
            }
        }
        try db.read { XCTAssertEqual(try $0.table("t", key: Int64.self, value: Int64.self).count(), 41) }
    }

    func testBatchAfterCloseThrows() throws {
        let dir = TempDir()
        let path = dir.file("b.fief")
        let db = try Database(path: path)
        try db.batch { try $0.createTable("t", key: Int64.self, value: Int64.self) }
        db.close()
        XCTAssertThrowsError(try db.batch { _ in }) { XCTAssertEqual($0 as? EngineError, .closed(path: path)) }
        XCTAssertThrowsError(try db.write { _ in }) { XCTAssertEqual($0 as? EngineError, .closed(path: path)) }
        XCTAssertThrowsError(try db.read { _ in }) { XCTAssertEqual($0 as? EngineError, .closed(path: path)) }
        db.close()  // twice is fine
        let other = try Database(path: path)
        try other.batch { _ in other.close() }  // inside its own batch: no deadlock; that commit still lands
        XCTAssertThrowsError(try other.batch { _ in }) { XCTAssertEqual($0 as? EngineError, .closed(path: path)) }
        let again = try Database(path: path)
        XCTAssertNotNil(try again.read { try $0.tableInfo("t") })
    }

    func testReadOnlyHandleRefusesBatch() throws {
        let dir = TempDir()
        let path = dir.file("b.fief")
        _ = try Database(path: path)
        var o = DatabaseOptions(create: false)
        o.readOnly = true
        let ro = try Database(path: path, options: o)
        XCTAssertThrowsError(try ro.batch { _ in }) { XCTAssertEqual($0 as? EngineError, .readOnly(path: path)) }
    }
}

/// One slot per caller, filled from its thread; and how often each body ran.
final class LockedResults: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [Result<UInt64, Error>?]
    private var counts: [Int]

    init(_ n: Int) {
        results = Array(repeating: nil, count: n)
        counts = Array(repeating: 0, count: n)
    }

    func set(_ i: Int, _ r: Result<UInt64, Error>) { lock.withLock { results[i] = r } }
    var all: [Result<UInt64, Error>] { lock.withLock { results.map { $0! } } }
    @discardableResult func count(_ i: Int) -> Int {
        lock.withLock {
            counts[i] += 1; return counts[i]
        }
    }
    func runs(_ i: Int) -> Int { lock.withLock { counts[i] } }
}
