import XCTest
@testable import Engine

/// A version this handle committed starts its catalog cache with the tables its writer
/// opened, and the next writer copies them from there: every table they name must be the
/// version's, and a table dropped in a write must be gone for the rest of it.
final class CatalogCacheTests: XCTestCase {
    func testTablesCarriedFromAWriteToTheNextTransactionsAreTheVersions() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("catalog.fief"))
        try db.write { tx in
            let t = try tx.createTable("t", key: Int64.self, value: Int64.self)
            for k in Int64(0)..<500 { try t.put(k, k) }
            _ = try tx.createTable("u", key: Int64.self, value: Int64.self)
        }
        for round in 1...3 {
            try db.write { tx in
                let t = try tx.table("t", key: Int64.self, value: Int64.self)
                for k in 0..<Int64(100) { try t.put(500 * Int64(round) + k, k) }
                // Read, not changed: carried to the next version as it was.
                XCTAssertEqual(try tx.count(table: "u"), 0)
            }
            try db.read { tx in
                XCTAssertEqual(try tx.count(table: "t"), 500 + 100 * round, "round \(round)")
                XCTAssertEqual(try tx.table("t", key: Int64.self, value: Int64.self).get(500 * Int64(round)), 0)
            }
        }
        try db.write { tx in
            XCTAssertEqual(try tx.count(table: "t"), 800)
            try tx.dropTable("t")
            XCTAssertNil(try tx.tableInfo("t"), "a dropped table is gone, whatever the base version's cache holds")
            XCTAssertThrowsError(try tx.count(table: "t"))
            let t = try tx.createTable("t", key: Int64.self, value: Int64.self)
            try t.put(1, 1)
        }
        try db.read { tx in
            XCTAssertEqual(try tx.count(table: "t"), 1)
            XCTAssertEqual(try tx.tableNames(), ["t", "u"])
        }
        try db.write { tx in XCTAssertEqual(try tx.count(table: "t"), 1) }
        // Another handle reads the file as written, not the first handle's caches.
        let other = try Database(path: dir.file("catalog.fief"))
        try other.read { tx in
            XCTAssertEqual(try tx.count(table: "t"), 1)
            XCTAssertEqual(try tx.count(table: "u"), 0)
        }
        XCTAssertNoThrow(try db.check())
    }
}
