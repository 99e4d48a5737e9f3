import XCTest
@testable import Engine
import SeededRandomness

/// Random put/delete/commit/rollback/reopen sequences checked against an in-memory model.
final class ModelTests: XCTestCase {
    struct Rollback: Error {}

    func testBasicRoundTrip() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("a.fief"))
        try db.write { tx in
            let t = try tx.createTable("t", key: Int64.self, value: String.self)
            try t.put(1, "one")
            try t.put(2, "two")
        }
        try db.read { tx in
            let t = try tx.table("t", key: Int64.self, value: String.self)
            XCTAssertEqual(try t.get(1), "one")
            XCTAssertEqual(try t.get(2), "two")
            XCTAssertNil(try t.get(3))
            XCTAssertEqual(try t.count(), 2)
        }
    }

    func testRandomOperationsMatchModel() throws {
        let seed = testSeed("model", default: 20261122)
        for round in 0..<6 {
            var rng = SeededRandom(seed: seed &+ UInt64(round))
            try runModel(
                rng: &rng, steps: 40, opsPerTx: round % 2 == 0 ? 400 : 60, keySpace: round % 2 == 0 ? 20_000 : 600)
        }
    }

    /// Byte keys of every length up to 12 over the bytes 0, 1 and 255: many share their first
    /// 8 bytes, or differ only by trailing zeros, so dirty nodes' key prefixes tie and pad.
    /// Inside one transaction (dirty nodes) and after it, every get and the scan order match.
    func testShortAndTiedByteKeysKeepTheirOrder() throws {
        var rng = SeededRandom(seed: testSeed("byte-keys", default: 20261123))
        let dir = TempDir()
        let db = try Database(path: dir.file("b.fief"), options: DatabaseOptions(durability: .none))
        var model: [[UInt8]: [UInt8]] = [:]
        func check(_ t: Table<[UInt8], [UInt8]>) throws {
            let sorted = model.keys.sorted { $0.lexicographicallyPrecedes($1) }
            let scanned = try t.entries().map(\.key)
            if let i = (0..<max(scanned.count, sorted.count)).first(where: {
                $0 >= scanned.count || $0 >= sorted.count || scanned[$0] != sorted[$0]
            }) {
                let scannedHere = scanned.dropFirst(i).first.map { "\($0)" } ?? "end"
                let modelHere = sorted.dropFirst(i).first.map { "\($0)" } ?? "end"
                XCTFail(
                    "scan order differs at \(i) of \(sorted.count): \(scannedHere) where the model has \(modelHere)")
            }
            for k in sorted.prefix(200) { XCTAssertEqual(try t.get(k), model[k]) }
        }
        for _ in 0..<4 {
            try db.write { tx in
                let t = try tx.openTable("b", key: [UInt8].self, value: [UInt8].self)
                for _ in 0..<3_000 {
                    let k = (0..<Int.random(in: 0...12, using: &rng)).map { _ in
                        [0, 1, 255][Int.random(in: 0..<3, using: &rng)] as UInt8
                    }
                    if Int.random(in: 0..<4, using: &rng) == 0 {
                        XCTAssertEqual(try t.delete(k), model.removeValue(forKey: k) != nil)
                    } else {
                        let v = [UInt8](repeating: UInt8(k.count), count: Int.random(in: 0..<40, using: &rng))
                        try t.put(k, v)
                        model[k] = v
                    }
                }
                try check(t)
            }
            try db.read { tx in try check(tx.table("b", key: [UInt8].self, value: [UInt8].self)) }
        }
        XCTAssertTrue(try db.check().isSound)
    }

    /// Keys from 1 byte to the largest allowed, in random order, in one transaction a round:
    /// evening out an overfull leaf with its neighbour puts a new separator in the parent, which
    /// can be far longer than the one it replaces, so the parent itself may overflow and must
    /// split even though no child did. Every get, the scan order and `check()` hold after each round.
    func testSeparatorsOfEveryLengthKeepBranchesWithinAPage() throws {
        var rng = SeededRandom(seed: testSeed("long-separators", default: 20261127))
        let dir = TempDir()
        let db = try Database(path: dir.file("s.fief"), options: DatabaseOptions(durability: .none))
        var model: [[UInt8]: [UInt8]] = [:]
        for _ in 0..<6 {
            try db.write { tx in
                let t = try tx.openTable("s", key: [UInt8].self, value: [UInt8].self)
                for _ in 0..<400 {
                    let long = Int.random(in: 0..<3, using: &rng) == 0
                    let n =
                        long
                        ? Int.random(in: 200...Layout.maxKeySize, using: &rng) : Int.random(in: 1...16, using: &rng)
                    let k = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
                    let v = [UInt8](repeating: UInt8(n & 0xff), count: Int.random(in: 0..<64, using: &rng))
                    try t.put(k, v)
                    model[k] = v
                }
            }
            XCTAssertTrue(try db.check().isSound)
            try db.read { tx in
                let t = try tx.table("s", key: [UInt8].self, value: [UInt8].self)
                let sorted = model.keys.sorted { $0.lexicographicallyPrecedes($1) }
                XCTAssertEqual(try t.entries().map(\.key), sorted)
                for (k, v) in model { XCTAssertEqual(try t.get(k), v) }
            }
        }
    }

    func runModel(rng: inout SeededRandom, steps: Int, opsPerTx: Int, keySpace: Int64) throws {
        let dir = TempDir()
        let path = dir.file("m.fief")
        var db: Database? = try Database(path: path)
        var model: [Int64: [UInt8]] = [:]
        try db!.write { tx in _ = try tx.createTable("t", key: Int64.self, value: [UInt8].self) }
        for _ in 0..<steps {
            let roll = Int.random(in: 0..<10, using: &rng)
            if roll == 0 {
                db = nil
                db = try Database(path: path)
                continue
            }
            var next = model
            let rollback = roll == 1
            var localRng = rng
            do {
                try db!.write { tx in
                    let t = try tx.table("t", key: Int64.self, value: [UInt8].self)
                    for _ in 0..<opsPerTx {
                        let k = Int64.random(in: 0..<keySpace, using: &localRng)
                        if Int.random(in: 0..<3, using: &localRng) == 0 {
                            let removed = try t.delete(k)
                            XCTAssertEqual(removed, next.removeValue(forKey: k) != nil)
                        } else {
                            let big = Int.random(in: 0..<50, using: &localRng) == 0
                            let len =
                                big
                                ? Int.random(in: 2000..<20_000, using: &localRng)
                                : Int.random(in: 0..<60, using: &localRng)
                            let v = [UInt8](repeating: UInt8(truncatingIfNeeded: k &+ Int64(len)), count: len)
                            try t.put(k, v)
                            next[k] = v
                        }
                    }
                    XCTAssertEqual(try t.count(), next.count)
                    if rollback { throw Rollback() }
                }
            } catch is Rollback {}
            rng = localRng
            if !rollback { model = next }
            try verify(db!, model)
        }
        let report = try db!.check()
        XCTAssertTrue(report.isSound, report.problems.joined(separator: "\n"))
    }

    func verify(_ db: Database, _ model: [Int64: [UInt8]]) throws {
        try db.read { tx in
            let t = try tx.table("t", key: Int64.self, value: [UInt8].self)
            XCTAssertEqual(try t.count(), model.count)
            let all = try t.entries()
            XCTAssertEqual(all.map(\.key), model.keys.sorted())
            for (k, v) in all where model[k] != v { XCTFail("key \(k): value differs") }
            let back = try t.entries(reverse: true)
            XCTAssertEqual(back.map(\.key), model.keys.sorted().reversed())
            let keys = model.keys.sorted()
            if keys.count > 10 {
                let lo = keys[keys.count / 4], hi = keys[keys.count / 2]
                let range = try t.entries(from: lo, to: hi)
                XCTAssertEqual(range.map(\.key), keys.filter { $0 >= lo && $0 < hi })
                let rrange = try t.entries(from: lo, to: hi, reverse: true)
                XCTAssertEqual(rrange.map(\.key), keys.filter { $0 >= lo && $0 < hi }.reversed())
            }
        }
    }
}
