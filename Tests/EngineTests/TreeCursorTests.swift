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
}
