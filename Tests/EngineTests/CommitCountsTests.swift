import XCTest
@testable import Engine

/// `Database.commitCounts`: what `fief bench` divides into pages and sync time per commit.
final class CommitCountsTests: XCTestCase {
    func testADurableCommitWaitsForTwoSyncsAndANonDurableOneForNone() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("c.fief"))
        try db.write { tx in
            let t = try tx.createTable("t", key: Int64.self, value: Int64.self)
            try t.put(0, 0)
        }
        let before = db.commitCounts
        for k in 1...5 {
            try db.write { tx in try tx.openTable("t", key: Int64.self, value: Int64.self).put(Int64(k), 1) }
        }
        let after = db.commitCounts
        XCTAssertEqual(after.commits - before.commits, 5)
        // The data's sync and the select bit's: the base's flip was synced by this handle.
        XCTAssertEqual(after.syncs - before.syncs, 10)
        XCTAssertGreaterThan(after.syncNanos, before.syncNanos)
        XCTAssertGreaterThanOrEqual(after.pages - before.pages, 10, "each commit writes a leaf and the top")
        db.close()

        let loose = try Database(path: dir.file("c.fief"), options: DatabaseOptions(durability: .none))
        let start = loose.commitCounts
        try loose.write { tx in try tx.openTable("t", key: Int64.self, value: Int64.self).put(9, 9) }
        XCTAssertEqual(loose.commitCounts.commits - start.commits, 1)
        XCTAssertEqual(loose.commitCounts.syncs, start.syncs, "durability none syncs nothing")
    }
}
