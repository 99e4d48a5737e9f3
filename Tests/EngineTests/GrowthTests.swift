import XCTest
@testable import Engine
import SeededRandomness

/// A pinned version keeps its pages; once released, the space is reused and churn stops
/// growing the file; compact brings the file back near the live data.
final class GrowthTests: XCTestCase {
    func churn(_ db: Database, commits: Int, rng: inout SeededRandom) throws {
        for _ in 0..<commits {
            try db.write { tx in
                let t = try tx.table("t", key: Int64.self, value: [UInt8].self)
                for _ in 0..<20 {
                    try t.put(
                        Int64.random(in: 0..<2000, using: &rng),
                        [UInt8](repeating: 7, count: Int.random(in: 10...200, using: &rng)))
                }
            }
        }
    }

    /// A new database whose table `t` holds 2,000 records of 100 bytes.
    func loaded(_ path: String) throws -> Database {
        let db = try Database(path: path)
        try db.write { tx in
            let t = try tx.createTable("t", key: Int64.self, value: [UInt8].self)
            for k in 0..<2000 { try t.put(Int64(k), [UInt8](repeating: 1, count: 100)) }
        }
        return db
    }

    func testPinnedSpaceIsHeldThenReused() throws {
        let dir = TempDir()
        let db = try loaded(dir.file("g.fief"))
        var rng = SeededRandom(seed: testSeed("growth", default: 5))
        try churn(db, commits: 50, rng: &rng)
        let steady = try db.stats().fileSize

        let pinned = try db.pin()
        let pinnedView = try db.read(pinned) { try Fingerprint.of($0) }
        try churn(db, commits: 100, rng: &rng)
        let whilePinned = try db.stats()
        XCTAssertGreaterThan(whilePinned.bytesPinned, 0, "a pinned version should hold freed pages")
        XCTAssertEqual(whilePinned.oldestPinnedVersion, pinned.version)
        XCTAssertGreaterThan(whilePinned.fileSize, steady, "churn under a pin should grow the file")
        XCTAssertEqual(try db.read(pinned) { try Fingerprint.of($0) }, pinnedView, "the pinned snapshot changed")
        pinned.release()

        try churn(db, commits: 20, rng: &rng)
        let released = try db.stats()
        XCTAssertEqual(released.bytesPinned, 0)
        var sizes: [UInt64] = []
        for _ in 0..<5 {
            try churn(db, commits: 20, rng: &rng)
            sizes.append(try db.stats().fileSize)
        }
        XCTAssertLessThanOrEqual(
            sizes.last!, released.fileSize + 64 * 4096,
            "after release the file kept growing: \(released.fileSize) -> \(sizes)")
        XCTAssertTrue(try db.check().isSound)

        let live = try db.stats().bytesInUse
        try db.compact()
        let after = try db.stats()
        XCTAssertLessThanOrEqual(
            after.fileSize, live + 4096 * 4, "compact left \(after.fileSize) bytes for \(live) live")
        XCTAssertTrue(try db.check().isSound)
        try db.read { tx in XCTAssertEqual(try tx.count(table: "t"), 2000) }
    }

    /// A reader left at an old version holds that version's pages, not those of every commit
    /// after it: a stream of small commits reuses the pages it wrote itself and stops growing
    /// the file, while each of two pins (the old one and a newer one between the commits)
    /// keeps reading exactly what it pinned.
    func testSmallCommitsUnderOldPinsStopGrowingTheFile() throws {
        let dir = TempDir()
        let db = try loaded(dir.file("p.fief"))
        var rng = SeededRandom(seed: testSeed("pinned-churn", default: 9))
        let old = try db.pin()
        let oldView = try db.read(old) { try Fingerprint.of($0) }
        func commits(_ n: Int) throws {
            for _ in 0..<n {
                try db.write { tx in
                    let t = try tx.table("t", key: Int64.self, value: [UInt8].self)
                    let fill = UInt8.random(in: 0...255, using: &rng)
                    try t.put(Int64.random(in: 0..<4, using: &rng), [UInt8](repeating: fill, count: 100))
                }
            }
        }
        try commits(20)
        let newer = try db.pin()
        let newerView = try db.read(newer) { try Fingerprint.of($0) }
        try commits(20)
        let settled = try db.stats().fileSize
        try commits(300)
        let after = try db.stats().fileSize
        XCTAssertLessThanOrEqual(
            after, settled + 8 * 4096, "300 small commits under two pins grew the file \(settled) -> \(after)")
        XCTAssertEqual(try db.read(old) { try Fingerprint.of($0) }, oldView, "the old pinned snapshot changed")
        XCTAssertEqual(try db.read(newer) { try Fingerprint.of($0) }, newerView, "the newer pinned snapshot changed")
        XCTAssertTrue(try db.check().isSound)
        old.release()
        newer.release()
    }

    func testCompactRefusedWhileAnotherHandleIsOpen() throws {
        let dir = TempDir()
        let a = try Database(path: dir.file("c.fief"))
        try a.write { try $0.createTable("t", key: Int64.self, value: Int64.self).put(1, 1) }
        let b = try Database(path: dir.file("c.fief"))
        XCTAssertThrowsError(try a.compact()) { e in
            guard case EngineError.databaseInUse = e else { return XCTFail("\(e)") }
        }
        _ = b
    }

    func testWriteCopyIsACompactedEqualCopy() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("src.fief"))
        try db.write { tx in
            let t = try tx.createTable("t", key: Int64.self, value: [UInt8].self)
            for k in 0..<500 { try t.put(Int64(k), [UInt8](repeating: UInt8(k % 251), count: k == 7 ? 100_000 : 50)) }
        }
        try db.writeCopy(to: dir.file("copy.fief"))
        let copy = try Database(path: dir.file("copy.fief"), options: .init(create: false))
        XCTAssertTrue(try copy.check().isSound)
        XCTAssertEqual(try copy.read { try Fingerprint.of($0) }, try db.read { try Fingerprint.of($0) })
        XCTAssertThrowsError(try db.writeCopy(to: dir.file("copy.fief")))
    }
}

/// FNV-1a over every table, key and value of a snapshot.
enum Fingerprint {
    static func of(_ tx: Transaction) throws -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        func mix(_ b: UnsafeRawBufferPointer) {
            for x in b { h = (h ^ UInt64(x)) &* 0x100_0000_01B3 }; h = (h ^ 0xFF) &* 0x100_0000_01B3
        }
        for name in try tx.tableNames() {
            Array(name.utf8).withUnsafeBytes { mix($0) }
            try tx.scan(table: name) { k, v in
                mix(k); mix(v); return true
            }
        }
        return h
    }
}
