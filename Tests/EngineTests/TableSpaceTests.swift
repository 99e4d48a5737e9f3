import XCTest
@testable import Engine
import SeededRandomness

/// `stats(space: true)`: every page a table's tree holds is counted once, by kind, and the
/// leaf fill says whether a load packed its pages.
final class TableSpaceTests: XCTestCase {
    func testSequentialLoadPacksLeavesAndPagesAddUp() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("s.fief"))
        var rng = SeededRandom(seed: testSeed("table-space", default: 3))
        try db.write { tx in
            let seq = try tx.createTable("seq", key: Int64.self, value: [UInt8].self)
            for k in 0..<20_000 { try seq.put(Int64(k), [UInt8](repeating: 1, count: 40)) }
            let rnd = try tx.createTable("rnd", key: Int64.self, value: [UInt8].self)
            for _ in 0..<20_000 {
                try rnd.put(Int64.random(in: 0..<Int64.max, using: &rng), [UInt8](repeating: 2, count: 40))
            }
            let big = try tx.createTable("big", key: Int64.self, value: [UInt8].self)
            for k in 0..<3 { try big.put(Int64(k), [UInt8](repeating: 3, count: 10_000)) }
        }
        let s = try db.stats(space: true)
        let space = Dictionary(uniqueKeysWithValues: s.space.map { ($0.name, $0) })
        let seq = try XCTUnwrap(space["seq"]), rnd = try XCTUnwrap(space["rnd"]), big = try XCTUnwrap(space["big"])
        XCTAssertEqual(seq.entries, 20_000)
        XCTAssertGreaterThanOrEqual(seq.leafFill, 0.95, "a sequential load should fill its leaves")
        // A full leaf evens out with a neighbour the write holds, at most half full, before it
        // splits (B*-trees do the same): halving splits alone left 66 % here.
        XCTAssertGreaterThanOrEqual(rnd.leafFill, 0.69, "a random load should fill its leaves to 69 %")
        XCTAssertLessThan(rnd.leafFill, seq.leafFill, "random inserts still split some leaves in the middle")
        XCTAssertEqual(
            big.overflowPages, 3 * Layout.pages(forBytes: 10_000 + Layout.pageHeaderSize),
            "each large value is one extent")
        XCTAssertGreaterThan(seq.depth, 1)
        XCTAssertGreaterThan(seq.branchPages, 0)
        // Every page in use belongs to one table, or is the header, the top node or the free list.
        let treePages = s.space.reduce(0) { $0 + $1.pages }
        XCTAssertLessThanOrEqual(UInt64(treePages * s.pageSize), s.bytesInUse)
        XCTAssertGreaterThan(UInt64(treePages * s.pageSize), s.bytesInUse - 8 * UInt64(s.pageSize))
    }
}
