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

    func testAReadTransactionRefusesToMutate() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("r.fief"))
        try db.write { tx in _ = try tx.createTable("t", key: Int64.self, value: Int64.self) }
        try db.read { tx in
            XCTAssertThrowsError(try tx.mutateValue(table: "t", key: Int64(1).keyBytes) { _ in })
        }
    }
}
