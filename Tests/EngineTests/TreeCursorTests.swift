import XCTest
@testable import Engine
import SeededRandomness

/// `TreeCursor` answers every lookup as a plain get does, in any order, on committed pages
/// and on a writer's nodes.
final class TreeCursorTests: XCTestCase {
    func testLookupsAgreeWithGetInEveryOrder() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("c.fief"))
        var rng = SeededRandom(seed: testSeed("tree-cursor", default: 9))
        var model: [Int64: [UInt8]] = [:]
        for _ in 0..<4 {
            try db.write { tx in
                let t = try tx.openTable("t", key: Int64.self, value: [UInt8].self)
                for _ in 0..<5_000 {
                    let k = Int64.random(in: 0..<100_000, using: &rng)
                    // Now and then a value large enough for an overflow extent.
                    let v = [UInt8](
                        repeating: UInt8(k & 0xFF),
                        count: Int.random(in: 0..<60, using: &rng) == 0 ? 5_000 : Int(k % 40))
                    try t.put(k, v)
                    model[k] = v
                }
            }
        }
        let probes = (0..<6_000).map { _ in Int64.random(in: -10..<100_010, using: &rng) }
        func check(_ tx: Transaction, _ keys: [Int64], _ what: String) throws {
            var c = try tx.cursor(table: "t")
            for k in keys {
                let got = try k.withKeyBytes { kb in try c.withValue(kb) { $0.map { Array($0) } } }
                XCTAssertEqual(got, model[k], "\(what): key \(k)")
            }
        }
        try db.read { tx in
            try check(tx, probes.sorted(), "ascending")
            try check(tx, probes, "random order")
            try check(tx, probes.sorted().reversed(), "descending")
            try check(tx, model.keys.sorted(), "every key")
        }
        try db.write { tx in
            let t = try tx.openTable("t", key: Int64.self, value: [UInt8].self)
            for k in probes.prefix(500) { try t.put(k, [9]); model[k] = [9] }
            try check(tx, probes.sorted(), "in a write")
        }
    }

    /// `Transaction.descents` counts walks toward a leaf: one per get or scan, and for a cursor
    /// one per lookup that leaves the leaf it stands on (none for keys inside it).
    func testDescentsCountWalksFromTheRoot() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("d.fief"))
        try db.write { tx in
            let t = try tx.openTable("t", key: Int64.self, value: [UInt8].self)
            for k in Int64(0)..<20_000 { try t.put(k, [UInt8](repeating: 1, count: 40)) }
            XCTAssertEqual(tx.descents, 20_000, "a put walks from the root")
        }
        try db.read { tx in
            let before = tx.descents
            _ = try tx.get(table: "t", key: Int64(7).keyBytes)
            XCTAssertEqual(tx.descents, before + 1)
            try tx.scan(table: "t") { _, _ in true }
            XCTAssertEqual(tx.descents, before + 2, "a scan is one walk, however many leaves it visits")
            var c = try tx.cursor(table: "t")
            for k in Int64(0)..<10 { _ = try k.withKeyBytes { kb in try c.withValue(kb) { $0 != nil } } }
            XCTAssertEqual(tx.descents, before + 3, "ten neighbours in one leaf: one descent")
            _ = try Int64(19_000).withKeyBytes { kb in try c.withValue(kb) { $0 != nil } }
            XCTAssertEqual(tx.descents, before + 4, "a key far past the leaf climbs and descends")
        }
    }
}
