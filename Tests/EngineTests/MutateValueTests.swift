import XCTest
@testable import Engine

/// `mutateValue` / `Table.update`: a same-length change lands in the leaf this write copied,
/// never in a page an older version still reads.
final class MutateValueTests: XCTestCase {
    func testAnUpdateInPlaceLeavesThePinnedVersionAsItWas() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("m.fief"))
        try db.write { tx in
            let t = try tx.createTable("t", key: Int64.self, value: Int64.self)
            for k in 0..<2_000 { try t.put(Int64(k), Int64(k)) }
        }
        let old = try db.beginRead()
        defer { old.end() }
        try db.write { tx in
            let t = try tx.openTable("t", key: Int64.self, value: Int64.self)
            for k in stride(from: 0, to: 2_000, by: 7) { XCTAssertTrue(try t.update(Int64(k)) { $0 += 1_000_000 }) }
            // Read back inside the write: the change is in the copied leaf.
            XCTAssertEqual(try t.get(7), 1_000_007)
            XCTAssertFalse(try t.update(5_000) { _ in XCTFail("no value to change") })
        }
        let pinned = try old.table("t", key: Int64.self, value: Int64.self)
        for k in stride(from: 0, to: 2_000, by: 7) {
            XCTAssertEqual(try pinned.get(Int64(k)), Int64(k), "the pinned version changed at \(k)")
        }
        try db.read { tx in
            let t = try tx.table("t", key: Int64.self, value: Int64.self)
            XCTAssertEqual(try t.get(14), 1_000_014)
            XCTAssertEqual(try t.get(15), 15)
            XCTAssertEqual(try t.count(), 2_000)
        }
        XCTAssertTrue(try db.check().problems.isEmpty)
    }

    func testAnAbsentKeyCopiesNothing() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("a.fief"))
        try db.write { tx in
            let t = try tx.createTable("t", key: Int64.self, value: Int64.self)
            for k in 0..<5_000 { try t.put(Int64(k * 2), 1) }
        }
        let before = db.commitCounts
        try db.write { tx in
            let t = try tx.openTable("t", key: Int64.self, value: Int64.self)
            for k in 0..<200 { XCTAssertFalse(try t.update(Int64(k * 2 + 1)) { $0 = 9 }) }
            for k in 0..<200 {
                XCTAssertFalse(
                    try t.delete(Int64(k * 2 + 1)), "a delete of a missing key descends once and copies nothing")
            }
        }
        let after = db.commitCounts
        XCTAssertLessThanOrEqual(
            after.pages - before.pages, 1, "missing keys copied \(after.pages - before.pages) pages")
    }

    func testALengthChangeAndAnOverflowValueFallBackToAPut() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("o.fief"))
        let big = [UInt8](repeating: 1, count: 20_000)
        try db.write { tx in
            let t = try tx.createTable("t", key: Int64.self, value: [UInt8].self)
            try t.put(1, big)
            try t.put(2, [1, 2, 3])
        }
        try db.write { tx in
            let t = try tx.openTable("t", key: Int64.self, value: [UInt8].self)
            XCTAssertTrue(try t.update(1) { $0[19_999] = 7 })
            XCTAssertTrue(try t.update(2) { $0.append(4) })
            XCTAssertTrue(
                try tx.mutateValue(table: "t", key: Int64(1).keyBytes) {
                    XCTAssertEqual($0.count, 20_000); $0[0] = 5
                })
        }
        try db.read { tx in
            let t = try tx.table("t", key: Int64.self, value: [UInt8].self)
            let v = try XCTUnwrap(try t.get(1))
            XCTAssertEqual(v.count, 20_000)
            XCTAssertEqual(v[0], 5)
            XCTAssertEqual(v[19_999], 7)
            XCTAssertEqual(try t.get(2), [1, 2, 3, 4])
        }
        XCTAssertTrue(try db.check().problems.isEmpty)
    }

    /// `withValue(owned:)` hands out a value's bytes to change in place only from a node this
    /// write copied, never from a mapped page, and `claimOwned` refuses them once anything
    /// changed since the lookup.
    func testOwnedBytesComeOnlyFromACopiedNodeAndOnlyUntilTheNextChange() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("w.fief"))
        try db.write { tx in
            let t = try tx.createTable("t", key: Int64.self, value: Int64.self)
            for k in 0..<2_000 { try t.put(Int64(k), Int64(k)) }
        }
        let old = try db.beginRead()
        defer { old.end() }
        func owned(_ tx: Transaction, _ k: Int64) throws -> (UnsafeMutableRawBufferPointer?, Int) {
            try k.withKeyBytes { key in
                try tx.withValue(table: "t", keyBytes: key) { v, o in
                    XCTAssertEqual(v.map { Array($0) }, Int64(k).valueBytes)
                    return (o, tx.writes)
                }
            }
        }
        try db.write { tx in
            // Still on its page (the committed version's): not owned.
            XCTAssertNil(try owned(tx, 10).0, "a value on a mapped page was handed out to change")
            XCTAssertTrue(try tx.openTable("t", key: Int64.self, value: Int64.self).update(11) { $0 += 0 })
            // Its leaf is copied now: owned, and changed in place through the claim.
            let (bytes, at) = try owned(tx, 10)
            let b = try XCTUnwrap(bytes, "a value in a copied leaf was not handed out")
            XCTAssertTrue(tx.claimOwned(at: at))
            b.storeBytes(of: Int64(1_000_010).littleEndian, as: Int64.self)
            XCTAssertFalse(tx.claimOwned(at: at), "a second claim on the same lookup")
            // A change after the lookup: refused.
            let (_, at2) = try owned(tx, 12)
            try tx.openTable("t", key: Int64.self, value: Int64.self).put(5_000, 1)
            XCTAssertFalse(tx.claimOwned(at: at2), "a claim after another change")
            XCTAssertEqual(try tx.openTable("t", key: Int64.self, value: Int64.self).get(10), 1_000_010)
        }
        XCTAssertEqual(try old.table("t", key: Int64.self, value: Int64.self).get(10), 10, "the pinned version changed")
        try db.read { tx in
            let t = try tx.table("t", key: Int64.self, value: Int64.self)
            XCTAssertEqual(try t.get(10), 1_000_010)
            XCTAssertEqual(try t.get(12), 12)
        }
        try db.read { tx in XCTAssertFalse(tx.claimOwned(at: tx.writes)) }
        XCTAssertTrue(try db.check().problems.isEmpty)
    }

    func testAReadTransactionRefusesToMutate() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("r.fief"))
        try db.write { tx in _ = try tx.createTable("t", key: Int64.self, value: Int64.self) }
        try db.read { tx in
            XCTAssertThrowsError(try tx.mutateValue(table: "t", key: Int64(1).keyBytes) { _ in })
        }
    }
}
