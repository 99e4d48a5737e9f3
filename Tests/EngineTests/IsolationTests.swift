import XCTest
@testable import Engine
import SeededRandomness

/// Readers hold snapshots while writers commit; a reader's view never changes.
final class IsolationTests: XCTestCase {
    /// Bank transfers keep the total constant; every snapshot must see the same total, and a
    /// snapshot read twice must read the same.
    func testReaderThreadsSeeStableSnapshots() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("bank.fief"))
        let accounts: Int64 = 200
        try db.write { tx in
            let t = try tx.createTable("accounts", key: Int64.self, value: Int64.self)
            for a in 0..<accounts { try t.put(a, 1000) }
        }
        let total = accounts * 1000
        let stop = LockedFlag()
        let failures = LockedList()
        var threads: [Thread] = []
        let done = DispatchGroup()
        for r in 0..<3 {
            done.enter()
            let t = Thread {
                defer { done.leave() }
                do {
                    while !stop.value {
                        let tx = try db.beginRead()
                        let table = try tx.table("accounts", key: Int64.self, value: Int64.self)
                        let first = try table.entries()
                        usleep(200)
                        let second = try table.entries()
                        let sum = first.reduce(0) { $0 + $1.value }
                        if sum != total { failures.append("reader \(r): total \(sum) in version \(tx.version)") }
                        if first.map(\.value) != second.map(\.value) {
                            failures.append("reader \(r): snapshot \(tx.version) changed")
                        }
                        tx.end()
                    }
                } catch { failures.append("reader \(r): \(error)") }
            }
            threads.append(t)
            t.start()
        }
        var rng = SeededRandom(seed: testSeed("isolation", default: 99))
        for _ in 0..<300 {
            try db.write { tx in
                let t = try tx.table("accounts", key: Int64.self, value: Int64.self)
                let a = Int64.random(in: 0..<accounts, using: &rng), b = Int64.random(in: 0..<accounts, using: &rng)
                let amount = Int64.random(in: 1...50, using: &rng)
                try t.put(a, try t.get(a)! - amount)
                try t.put(b, try t.get(b)! + amount)
            }
        }
        stop.set()
        done.wait()
        XCTAssertEqual(failures.items, [])
        XCTAssertTrue(try db.check().isSound)
    }

    func testPinnedVersionIsReadableFromAnotherThreadAndUnchanged() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("p.fief"))
        try db.write { tx in try tx.createTable("t", key: Int64.self, value: Int64.self).put(1, 1) }
        let pinned = try db.pin()
        for i in 2...50 {
            try db.write { tx in try tx.table("t", key: Int64.self, value: Int64.self).put(1, Int64(i)) }
        }
        let seen = LockedList()
        let done = DispatchSemaphore(value: 0)
        Thread {
            do {
                try db.read(pinned) { tx in
                    seen.append("\(try tx.table("t", key: Int64.self, value: Int64.self).get(1)!)")
                }
            } catch { seen.append("error \(error)") }
            done.signal()
        }.start()
        done.wait()
        XCTAssertEqual(seen.items, ["1"])
        try db.read { tx in XCTAssertEqual(try tx.table("t", key: Int64.self, value: Int64.self).get(1), 50) }
        pinned.release()
        XCTAssertNil(pinned.version)
    }

    func testRefreshMovesToNewestVersion() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("r.fief"))
        try db.write { tx in try tx.createTable("t", key: String.self, value: String.self).put("k", "old") }
        let tx = try db.beginRead()
        try db.write { w in try w.table("t", key: String.self, value: String.self).put("k", "new") }
        XCTAssertEqual(try tx.table("t", key: String.self, value: String.self).get("k"), "old")
        try tx.refresh()
        XCTAssertEqual(try tx.table("t", key: String.self, value: String.self).get("k"), "new")
        tx.end()
        XCTAssertThrowsError(try tx.table("t", key: String.self, value: String.self)) {
            XCTAssertEqual($0 as? EngineError, .transactionClosed)
        }
    }
}

final class LockedFlag: @unchecked Sendable {
    private let l = NSLock()
    private var v = false
    var value: Bool { l.lock(); defer { l.unlock() }; return v }
    func set() { l.lock(); v = true; l.unlock() }
}

final class LockedList: @unchecked Sendable {
    private let l = NSLock()
    private var v: [String] = []
    var items: [String] { l.lock(); defer { l.unlock() }; return v }
    func append(_ s: String) { l.lock(); v.append(s); l.unlock() }
}
