import SeededRandomness
import XCTest

@testable import FiefObjects

/// The sorted fact lists `ObjectStore.check()` compares, against a set and a dictionary built
/// from the same random facts (fixed seeds, printed).
final class CheckFactsTests: XCTestCase {
    func testByteStringsCountWhatEachSideLacksAsSetsWould() {
        let seed: UInt64 = 37
        print("CheckFactsTests seed \(seed)")
        var rng = SeededRandom(seed: seed)
        for round in 0..<200 {
            // Short strings over few byte values: prefixes of one another and repeats are common.
            func strings() -> [[UInt8]] {
                (0..<rng.below(40)).map { _ in (0..<rng.below(4)).map { _ in UInt8(rng.below(3)) } }
            }
            // Every other round one side comes in order, as an index scan does.
            let a = strings(), b = round % 2 == 0 ? strings() : strings().sorted { $0.lexicographicallyPrecedes($1) }
            var sa = ByteStrings(), sb = ByteStrings()
            for s in a { s.withUnsafeBytes { sa.append($0) } }
            for s in b { s.withUnsafeBytes { sb.append($0) } }
            let (onlyA, onlyB) = ByteStrings.differences(sa, sb)
            XCTAssertEqual(onlyA, multisetMinus(a, b), "seed \(seed) round \(round)")
            XCTAssertEqual(onlyB, multisetMinus(b, a), "seed \(seed) round \(round)")
            XCTAssertEqual(sa.repeats, a.count - Set(a).count, "seed \(seed) round \(round)")
            let cut = sa.mapped { UnsafeRawBufferPointer(rebasing: $0.prefix(1)) }
            XCTAssertEqual(
                cut.repeats, a.count - Set(a.map { Array($0.prefix(1)) }).count, "seed \(seed) round \(round)")
        }
    }

    func testBacklinkCountsCompareAsDictionariesWould() {
        let seed: UInt64 = 38
        print("CheckFactsTests seed \(seed)")
        var rng = SeededRandom(seed: seed)
        for round in 0..<200 {
            func fact() -> BacklinkFact {
                BacklinkFact(
                    target: Int64(rng.below(4)), cid: UInt32(rng.below(2)), pid: UInt32(rng.below(2)),
                    origin: Int64(rng.below(3)))
            }
            struct Key: Hashable {
                let t: Int64, c: UInt32, p: UInt32, o: Int64
                init(_ f: BacklinkFact) { (t, c, p, o) = (f.target, f.cid, f.pid, f.origin) }
            }
            // Links add 1 each (summed); rows and the table keep a count each, unique facts.
            var want = BacklinkCounts(), wantD: [Key: Int64] = [:]
            for _ in 0..<rng.below(30) {
                let f = fact()
                want.add(f, 1)
                wantD[Key(f), default: 0] += 1
            }
            var rows = BacklinkCounts(), table = BacklinkCounts(), foundD: [Key: Int64] = [:], both = 0
            var rowD: [Key: Int64] = [:], tableD: [Key: Int64] = [:]
            for _ in 0..<rng.below(20) { rowD[Key(fact())] = Int64(rng.below(3)) }
            for _ in 0..<rng.below(20) { tableD[Key(fact())] = Int64(rng.below(3)) }
            for (k, v) in rowD { rows.add(BacklinkFact(target: k.t, cid: k.c, pid: k.p, origin: k.o), v) }
            for (k, v) in tableD { table.add(BacklinkFact(target: k.t, cid: k.c, pid: k.p, origin: k.o), v) }
            foundD = rowD
            for (k, v) in tableD where foundD.updateValue(v, forKey: k) != nil { both += 1 }
            want.settle()
            let (found, bothSeen) = BacklinkCounts.union(rows, table)
            XCTAssertEqual(bothSeen, both, "seed \(seed) round \(round)")
            XCTAssertEqual(found.facts.count, foundD.count, "seed \(seed) round \(round)")
            let (stale, missing) = BacklinkCounts.differences(found: found, want: want)
            XCTAssertEqual(stale, foundD.filter { wantD[$0.key] != $0.value }.count, "seed \(seed) round \(round)")
            XCTAssertEqual(missing, wantD.filter { foundD[$0.key] != $0.value }.count, "seed \(seed) round \(round)")
        }
    }

    func testSortedKeysContain() {
        let keys: [Int64] = [-5, 0, 3, 3, 9]
        for k: Int64 in -7...11 { XCTAssertEqual(ObjectCheck.sorted(keys, contains: k), keys.contains(k), "\(k)") }
        XCTAssertFalse(ObjectCheck.sorted([], contains: 0))
    }

    private func multisetMinus(_ a: [[UInt8]], _ b: [[UInt8]]) -> Int {
        var left = Dictionary(b.map { ($0, 1) }, uniquingKeysWith: +)
        var n = 0
        for s in a {
            if let c = left[s], c > 0 { left[s] = c - 1 } else { n += 1 }
        }
        return n
    }
}

extension SeededRandom {
    fileprivate mutating func below(_ n: Int) -> Int { n <= 0 ? 0 : Int.random(in: 0..<n, using: &self) }
}
