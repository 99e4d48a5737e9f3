import XCTest
import Engine
import SeededRandomness
@testable import FiefObjects

/// Pending index keys come out in the engine's byte order, ties in the first 8 bytes included.
final class PendingIndexEntriesTests: XCTestCase {
    func testKeysComeOutInByteOrder() {
        var rng = SeededRandom(seed: testSeed("pending-index", default: 5))
        var pending = PendingIndexEntries()
        var keys: [[UInt8]] = []
        for _ in 0..<3_000 {
            // Short keys, keys sharing 8 or more leading bytes, and zero bytes inside.
            let shared: [UInt8] = [5, 110, 97, 109, 101, 32, 49, 50]
            let head =
                Int.random(in: 0..<3, using: &rng) == 0 ? [] : Array(shared.prefix(Int.random(in: 0...8, using: &rng)))
            let tail = (0..<Int.random(in: 0..<12, using: &rng)).map { _ in UInt8.random(in: 0...3, using: &rng) }
            let k = head + tail
            keys.append(k)
            pending.append(k)
        }
        var out: [[UInt8]] = []
        pending.inKeyOrder { out.append(Array($0)) }
        XCTAssertEqual(out, keys.sorted { compareBytes($0, $1) < 0 })
    }

    /// Keys of any bytes, many or few: every byte of the 8 the radix sort orders by varies.
    func testKeysOfAnyBytesComeOutInByteOrder() {
        var rng = SeededRandom(seed: testSeed("pending-index-bytes", default: 6))
        for count in [0, 1, 63, 64, 65, 2_000] {
            var pending = PendingIndexEntries()
            var keys: [[UInt8]] = []
            for _ in 0..<count {
                let k = (0..<Int.random(in: 0..<16, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
                keys.append(k)
                pending.append(k)
                // Now and then the same key twice.
                if Int.random(in: 0..<10, using: &rng) == 0 {
                    keys.append(k)
                    pending.append(k)
                }
            }
            var out: [[UInt8]] = []
            pending.inKeyOrder { out.append(Array($0)) }
            XCTAssertEqual(out, keys.sorted { compareBytes($0, $1) < 0 }, "\(count) keys")
        }
    }

    func testApplyAppendsALoadAndPutsAmongExistingKeys() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("p.fief"))
        func entries(_ ks: [Int64]) -> PendingIndexEntries {
            var p = PendingIndexEntries()
            for k in ks { p.append(k.keyBytes) }
            return p
        }
        try db.write { tx in
            try tx.createTable("x", keyKind: .bytes, valueKind: .bytes)
            // Into an empty index, with one entry twice: appended, once.
            try entries([50, 10, 30, 30, 20, 15, 25, 35, 45]).apply(to: "x", in: tx)
            // Some below the last key: put.
            try entries([60, 5, 40, 41, 42, 43, 44, 46, 47]).apply(to: "x", in: tx)
            // All above: appended after the right edge.
            try entries([90, 70, 80, 100, 101, 102, 103, 104]).apply(to: "x", in: tx)
            // A few, put one by one (one twice).
            try entries([1, 95, 95]).apply(to: "x", in: tx)
        }
        try db.read { tx in
            var got: [Int64] = []
            try tx.scan(table: "x") { k, _ in
                got.append(try Int64(keyBytes: k)); return true
            }
            XCTAssertEqual(
                got,
                [1, 5, 10, 15, 20, 25, 30, 35, 40, 41, 42, 43, 44, 45, 46, 47, 50, 60, 70, 80, 90, 95]
                    + Array(100...104))
        }
    }

    /// An entry written straight into the pending buffer has the bytes of the index format
    /// (`KeyBytes`): the kind byte, the value in order-preserving form, then the object key.
    func testEntriesWrittenInPlaceHaveTheIndexFormat() {
        let date = Date(timeIntervalSinceReferenceDate: -2)
        let cases: [(ObjectValue, [UInt8])] = [
            (.null, [0]),
            (.bool(true), [1, 1]),
            (.int(1), [2, 0x80, 0, 0, 0, 0, 0, 0, 1]),
            (.link(-1), [2, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
            (.double(1), [3, 0xBF, 0xF0, 0, 0, 0, 0, 0, 0]),
            (.float(-1), [3, 0x40, 0x0F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
            (.date(date), [4, 0x3F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
            (.string("a\u{0}b"), [5, 97, 0, 1, 98, 0, 0]),
            (.data([7]), [5, 7, 0, 0])
        ]
        for (v, bytes) in cases {
            XCTAssertEqual(KeyBytes.indexValue(v), bytes, "\(v)")
            let tails: [(Int64, Bool, [UInt8])] = [
                (0x1234, true, [0x12, 0x34, 2]), (5, false, [0x80, 0, 0, 0, 0, 0, 0, 5])
            ]
            for (key, compact, tail) in tails {
                var p = PendingIndexEntries()
                p.append(value: v, key: key, compact: compact)
                var out: [[UInt8]] = []
                p.inKeyOrder { out.append(Array($0)) }
                XCTAssertEqual(out, [bytes + tail], "\(v) key \(key) compact \(compact)")
                XCTAssertEqual(KeyBytes.indexEntry(bytes, key, compact: compact), bytes + tail)
            }
        }
    }
}
