import XCTest
@testable import Engine

/// `append` (`MDB_APPEND`): keys in order land as a put would put them and pack the leaves;
/// a key out of order is refused and changes nothing.
final class AppendTests: XCTestCase {
    func testAnOrderedLoadPacksItsLeavesAndReadsBack() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("a.fief"))
        try db.write { tx in
            let t = try tx.createTable("t", key: Int64.self, value: [UInt8].self)
            for k in 0..<10_000 { try t.append(Int64(k), [UInt8](repeating: UInt8(k & 0xFF), count: 30)) }
        }
        // A second write appends after the committed right edge (pages, not dirty nodes).
        try db.write { tx in
            let t = try tx.openTable("t", key: Int64.self, value: [UInt8].self)
            for k in 10_000..<20_000 { try t.append(Int64(k), [UInt8](repeating: UInt8(k & 0xFF), count: 30)) }
            XCTAssertEqual(try tx.lastKey(table: "t"), Int64(19_999).keyBytes)
        }
        try db.read { tx in
            let t = try tx.table("t", key: Int64.self, value: [UInt8].self)
            XCTAssertEqual(try t.count(), 20_000)
            var expected: Int64 = 0
            try t.scan { k, v in
                XCTAssertEqual(k, expected)
                XCTAssertEqual(v, [UInt8](repeating: UInt8(k & 0xFF), count: 30))
                expected += 1
                return true
            }
            XCTAssertEqual(expected, 20_000)
        }
        let space = try XCTUnwrap(try db.stats(space: true).space.first { $0.name == "t" })
        XCTAssertGreaterThanOrEqual(space.leafFill, 0.95)
        XCTAssertTrue(try db.check().problems.isEmpty)
    }

    func testAKeyOutOfOrderIsRefusedAndChangesNothing() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("o.fief"))
        try db.write { tx in
            let t = try tx.createTable("t", key: Int64.self, value: Int64.self)
            for k in stride(from: 0, to: 3_000, by: 2) { try t.put(Int64(k), Int64(k)) }
            for k: Int64 in [2_998, 1_001, -5] {
                XCTAssertThrowsError(try t.append(k, 7)) { e in
                    guard case EngineError.keyOutOfOrder(let table) = e else { return XCTFail("\(e)") }
                    XCTAssertEqual(table, "t")
                }
            }
            try t.append(3_001, 1)
            XCTAssertEqual(try t.count(), 1_501)
            XCTAssertEqual(try t.get(2_998), 2_998)
            XCTAssertNil(try t.get(1_001))
        }
        XCTAssertTrue(try db.check().problems.isEmpty)
        // Refused where the right edge is still on its pages: the descent that found the key
        // out of order copied that edge (freeing its pages), and the write that keeps going
        // and commits must leave a file that checks clean, holding what it held.
        try db.write { tx in
            let t = try tx.openTable("t", key: Int64.self, value: Int64.self)
            XCTAssertThrowsError(try t.append(1_001, 7))
        }
        try db.write { tx in
            let t = try tx.openTable("t", key: Int64.self, value: Int64.self)
            XCTAssertThrowsError(try t.append(3_001, 7))
            try t.append(4_000, 4)
        }
        XCTAssertTrue(try db.check().problems.isEmpty)
        try db.read { tx in
            let t = try tx.table("t", key: Int64.self, value: Int64.self)
            XCTAssertEqual(try t.count(), 1_502)
            XCTAssertNil(try t.get(1_001))
            XCTAssertEqual(try t.get(3_001), 1)
            XCTAssertEqual(try t.get(4_000), 4)
        }
    }
}
