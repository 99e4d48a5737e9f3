import Foundation
import SeededRandomness
import XCTest
@testable import Engine

/// What read transactions cache between them (the validated top node, the version's table
/// records, the last table looked up) never shows one version's tables to another.
final class ReadPathTests: XCTestCase {
    private func put(_ db: Database, _ table: String, _ keys: Range<Int64>) throws {
        try db.write { tx in
            let t = try tx.openTable(table, key: Int64.self, value: Int64.self)
            for k in keys { try t.put(k, k * 10) }
        }
    }

    func testTableRecordsFollowTheVersion() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("v.fief"), options: DatabaseOptions(durability: .none))
        try put(db, "t", 0..<5)
        let old = try db.beginRead()
        XCTAssertEqual(try old.table("t", key: Int64.self, value: Int64.self).count(), 5)
        // Fills the cache of that version.
        _ = try db.read { try $0.table("t", key: Int64.self, value: Int64.self).count() }

        try put(db, "t", 5..<8)
        try put(db, "u", 0..<1)
        try db.read { tx in
            XCTAssertEqual(try tx.table("t", key: Int64.self, value: Int64.self).count(), 8)
            XCTAssertEqual(try tx.table("t", key: Int64.self, value: Int64.self).get(7), 70)
            XCTAssertEqual(try tx.tableNames(), ["t", "u"])
        }
        // The old transaction still reads its own version, cached records and all.
        XCTAssertEqual(try old.table("t", key: Int64.self, value: Int64.self).count(), 5)
        XCTAssertNil(try old.table("t", key: Int64.self, value: Int64.self).get(7))
        XCTAssertThrowsError(try old.table("u", key: Int64.self, value: Int64.self)) { e in
            guard case .tableNotFound? = e as? EngineError else { return XCTFail("\(e)") }
        }
        try old.refresh()
        XCTAssertEqual(try old.table("t", key: Int64.self, value: Int64.self).count(), 8)
        XCTAssertEqual(try old.table("u", key: Int64.self, value: Int64.self).count(), 1)
        old.end()
    }

    /// `read` begins again in the transaction the last one ended: on a newer version it must
    /// forget the table it found (here dropped and made again with other kinds), and a
    /// transaction the body kept is never handed out again.
    func testARecycledReadTransactionStartsOverOnTheNewestVersion() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("r.fief"), options: DatabaseOptions(durability: .none))
        try put(db, "t", 0..<5)
        XCTAssertEqual(try db.read { try $0.table("t", key: Int64.self, value: Int64.self).count() }, 5)
        XCTAssertTrue(db.hasSpareRead, "a read whose transaction nothing kept leaves it for the next")
        XCTAssertEqual(try db.read { try $0.table("t", key: Int64.self, value: Int64.self).get(4) }, 40)

        try db.write { tx in
            try tx.dropTable("t")
            let t = try tx.createTable("t", key: Int64.self, value: String.self)
            try t.put(1, "one")
        }
        try db.read { tx in
            XCTAssertThrowsError(try tx.table("t", key: Int64.self, value: Int64.self)) { e in
                guard case .tableTypeMismatch? = e as? EngineError else { return XCTFail("\(e)") }
            }
            let t = try tx.table("t", key: Int64.self, value: String.self)
            XCTAssertEqual(try t.count(), 1)
            XCTAssertEqual(try t.get(1), "one")
        }

        var kept: ReadTransaction?
        try db.read { kept = $0 }
        XCTAssertThrowsError(try kept!.table("t", key: Int64.self, value: String.self)) { e in
            guard case .transactionClosed? = e as? EngineError else { return XCTFail("\(e)") }
        }
        for _ in 0..<3 {
            try db.read { tx in
                XCTAssertFalse(tx === kept)
                XCTAssertEqual(try tx.table("t", key: Int64.self, value: String.self).get(1), "one")
            }
        }
        // The kept transaction's version is not pinned any more: writes reuse its pages.
        XCTAssertEqual(try db.readers.livePins().count, 0)
    }

    /// The spare transaction holds no reference to its handle: dropping the handle releases it.
    func testTheSpareReadTransactionDoesNotKeepItsHandle() throws {
        let dir = TempDir()
        weak var released: Database?
        try {
            let db = try Database(path: dir.file("h.fief"), options: DatabaseOptions(durability: .none))
            try put(db, "t", 0..<3)
            _ = try db.read { try $0.table("t", key: Int64.self, value: Int64.self).count() }
            XCTAssertTrue(db.hasSpareRead)
            released = db
        }()
        XCTAssertNil(released)
    }

    /// Threads reading through one handle while a writer commits: the spare transaction goes
    /// to one thread at a time, and each read sees one version whole (two tables written in
    /// the same commits agree) and never an older one than the thread saw before.
    func testConcurrentReadsOnOneHandleShareNoTransaction() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("c.fief"), options: DatabaseOptions(durability: .none))
        try db.write { tx in
            try tx.createTable("a", key: Int64.self, value: Int64.self).put(0, 0)
            try tx.createTable("b", key: Int64.self, value: Int64.self).put(0, 0)
        }
        let lock = NSLock()
        var inUse = Set<ObjectIdentifier>()
        let failures = FailureLog()
        @Sendable func fail(_ s: String) { failures.append(s) }
        let writer = Thread {
            do {
                for v in Int64(1)...300 {
                    try db.write { tx in
                        try tx.openTable("a", key: Int64.self, value: Int64.self).put(0, v)
                        try tx.openTable("b", key: Int64.self, value: Int64.self).put(0, v)
                    }
                }
            } catch { fail("writer: \(error)") }
        }
        writer.start()
        DispatchQueue.concurrentPerform(iterations: 4) { t in
            var last: Int64 = 0
            for _ in 0..<3_000 {
                do {
                    try db.read { tx in
                        let id = ObjectIdentifier(tx)
                        lock.lock(); let fresh = inUse.insert(id).inserted; lock.unlock()
                        if !fresh { fail("thread \(t): a transaction in use by another thread was handed out") }
                        defer { lock.lock(); inUse.remove(id); lock.unlock() }
                        let a = try tx.table("a", key: Int64.self, value: Int64.self).get(0) ?? -1
                        let b = try tx.table("b", key: Int64.self, value: Int64.self).get(0) ?? -2
                        if a != b { fail("thread \(t): a = \(a), b = \(b) in one read") }
                        if a < last { fail("thread \(t): read \(a) after \(last)") }
                        last = a
                    }
                } catch { fail("thread \(t): \(error)") }
            }
        }
        while writer.isExecuting || !writer.isFinished { usleep(1_000) }
        XCTAssertEqual(failures.all.prefix(5), [])
        XCTAssertEqual(try db.read { try $0.table("a", key: Int64.self, value: Int64.self).get(0) }, 300)
        XCTAssertEqual(try db.readers.livePins().count, 0)
    }

    /// In an encrypted file an ended transaction is not kept: its snapshot holds every page
    /// it decrypted.
    func testAnEncryptedReadIsNotKeptForTheNext() throws {
        let dir = TempDir()
        let db = try Database(
            path: dir.file("e.fief"),
            options: DatabaseOptions(durability: .none, encryptionKey: [UInt8]((0..<64).map { UInt8($0) })))
        try put(db, "t", 0..<3)
        XCTAssertEqual(try db.read { try $0.table("t", key: Int64.self, value: Int64.self).get(2) }, 20)
        XCTAssertFalse(db.hasSpareRead)
    }

    func testAlternatingTablesInOneTransaction() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("a.fief"), options: DatabaseOptions(durability: .none))
        try put(db, "a", 0..<3)
        try db.write { tx in
            let b = try tx.openTable("b", key: Int64.self, value: Int64.self)
            for k in Int64(0)..<3 { try b.put(k, -k) }
        }
        try db.read { tx in
            let a = try tx.table("a", key: Int64.self, value: Int64.self)
            let b = try tx.table("b", key: Int64.self, value: Int64.self)
            for k in Int64(0)..<3 {
                XCTAssertEqual(try a.get(k), k * 10)
                XCTAssertEqual(try b.get(k), -k)
            }
        }
        // In a write, a table dropped and made again is the new one, not a remembered one.
        try db.write { tx in
            XCTAssertEqual(try tx.table("a", key: Int64.self, value: Int64.self).count(), 3)
            try tx.dropTable("a")
            let a = try tx.openTable("a", key: Int64.self, value: Int64.self)
            XCTAssertEqual(try a.count(), 0)
            try a.put(1, 1)
        }
        XCTAssertEqual(try db.read { try $0.table("a", key: Int64.self, value: Int64.self).count() }, 1)
    }

    func testInt64KeysSortNumericallyAndRoundTrip() throws {
        let keys: [Int64] = [3, -5, .min, 0, .max, -1, 1]
        for k in keys {
            XCTAssertEqual(try k.keyBytes.withUnsafeBytes { try Int64(keyBytes: $0) }, k)
        }
        let dir = TempDir()
        let db = try Database(path: dir.file("k.fief"), options: DatabaseOptions(durability: .none))
        try db.write { tx in
            let t = try tx.openTable("k", key: Int64.self, value: Int64.self)
            for k in keys { try t.put(k, k) }
        }
        let scanned = try db.read { try $0.table("k", key: Int64.self, value: Int64.self).entries().map(\.key) }
        XCTAssertEqual(scanned, keys.sorted())
        XCTAssertEqual(try db.read { try $0.table("k", key: Int64.self, value: Int64.self).get(-5) }, -5)
    }

    func testCompareBytesIsLexicographicAtEveryLength() {
        var rng = SeededRandom(seed: 12)
        for _ in 0..<5_000 {
            // Short lengths and few distinct bytes, so equal prefixes and the 8-byte case are common.
            let a = (0..<Int.random(in: 0...10, using: &rng)).map { _ in UInt8.random(in: 0...2, using: &rng) &* 127 }
            let b = (0..<Int.random(in: 0...10, using: &rng)).map { _ in UInt8.random(in: 0...2, using: &rng) &* 127 }
            let expected = a == b ? 0 : (a.lexicographicallyPrecedes(b) ? -1 : 1)
            XCTAssertEqual(compareBytes(a, b), expected, "\(a) \(b)")
        }
    }
}
