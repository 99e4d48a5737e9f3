import XCTest
import SeededRandomness
@testable import FiefObjects

/// Clusters (object-layer format 2): what `ClusterRows` encodes, `ClusterView` reads back slot
/// by slot, and damaged cluster bytes give `RowError`, never a trap.
final class ClusterTests: XCTestCase {
    func rows(_ rng: inout SeededRandom, shift: Int, fill: Double, long: Bool = false) -> ClusterRows {
        let c = ClusterRows(shift: shift)
        for s in 0..<(1 << shift) where Double.random(in: 0..<1, using: &rng) < fill {
            let n = long ? Int.random(in: 200...400, using: &rng) : Int.random(in: 0...40, using: &rng)
            c.put(slot: s, (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) })
        }
        return c
    }

    func testEncodedRowsReadBackBySlotAndInOrder() throws {
        var rng = SeededRandom(seed: 24)
        for round in 0..<300 {
            let shift = round % (ClusterView.maxShift + 1)
            let c = rows(&rng, shift: shift, fill: [0.05, 0.5, 1][round % 3], long: round % 50 == 0 && shift == 8)
            guard let bytes = c.encoded() else {
                XCTAssertEqual(c.count, 0)
                continue
            }
            try bytes.withUnsafeBytes { b in
                let v = try ClusterView(b, shift: shift)
                XCTAssertEqual(v.count, c.count)
                XCTAssertEqual(try v.slots(), c.slots)
                for s in 0..<(1 << shift) {
                    let want = c.withRow(slot: s) { $0.map { Array($0) } }
                    XCTAssertEqual(try v.row(slot: s).map { Array($0) }, want, "round \(round) slot \(s)")
                }
                XCTAssertThrowsError(try ClusterView(b, shift: (shift + 1) % (ClusterView.maxShift + 1)))
            }
        }
    }

    func testPutReplaceAndRemoveKeepSlotsInOrder() {
        let c = ClusterRows(shift: 4)
        XCTAssertTrue(c.put(slot: 9, [9]))
        XCTAssertTrue(c.put(slot: 2, [2]))
        XCTAssertFalse(c.put(slot: 9, [9, 9]))
        XCTAssertTrue(c.put(slot: 15, [15]))
        XCTAssertEqual(c.slots, [2, 9, 15])
        XCTAssertEqual(c.withRow(slot: 9) { $0.map { Array($0) } }, [9, 9])
        XCTAssertTrue(c.remove(slot: 2))
        XCTAssertFalse(c.remove(slot: 2))
        XCTAssertEqual(c.slots, [9, 15])
        XCTAssertTrue(c.remove(slot: 9) && c.remove(slot: 15))
        XCTAssertNil(c.encoded(), "an empty cluster is deleted, not stored")
    }

    /// Every cut and every changed byte of real clusters: the reader throws or reads rows
    /// inside the value, and never traps (a trap would end this test run).
    func testDamagedClustersThrowAndNeverTrap() throws {
        var rng = SeededRandom(seed: 2402)
        var thrown = 0
        for shift in [0, 3, 4, 8] {
            guard let good = rows(&rng, shift: shift, fill: 0.7).encoded() else { continue }
            var damaged: [[UInt8]] = (0..<good.count).map { Array(good.prefix($0)) }
            for i in 0..<good.count {
                for flip: UInt8 in [0x01, 0x80, 0xFF] {
                    var d = good
                    d[i] ^= flip
                    damaged.append(d)
                }
            }
            for d in damaged {
                d.withUnsafeBytes { b in
                    do {
                        let v = try ClusterView(b, shift: shift)
                        _ = try v.forEach { _, row in
                            XCTAssertLessThanOrEqual(row.count, b.count)
                            return true
                        }
                        for s in 0..<(1 << shift) { _ = try v.row(slot: s) }
                    } catch is RowError {
                        thrown += 1
                    } catch {
                        XCTFail("not a RowError: \(error)")
                    }
                }
            }
        }
        XCTAssertGreaterThan(thrown, 100, "damage must be seen, not only survived")
    }

    /// A batch's walk (`writeRows`) hands out what the row cursor does, and throws where it
    /// throws, on good clusters and on every cut and changed byte of them.
    func testWrittenRowsAgreeWithTheCursor() throws {
        var rng = SeededRandom(seed: 77)
        var compared = 0, thrown = 0
        for shift in [0, 2, 3, 5, 8] {
            guard let good = rows(&rng, shift: shift, fill: 0.6).encoded() else { continue }
            var all: [[UInt8]] = [good] + (0..<good.count).map { Array(good.prefix($0)) }
            for i in 0..<good.count {
                for flip: UInt8 in [0x01, 0x80] {
                    var d = good
                    d[i] ^= flip
                    all.append(d)
                }
            }
            for d in all {
                d.withUnsafeBytes { b in
                    guard let v = try? ClusterView(b, shift: shift) else { return }
                    var cursor = ClusterView.RowCursor(v)
                    var want: [(Int64, [UInt8])]? = []
                    do {
                        while let (s, r) = try cursor.next() { want!.append((1_000 | Int64(s), Array(r))) }
                    } catch { want = nil }
                    var keys = [Int64](repeating: 0, count: v.count)
                    let none = UnsafeRawBufferPointer(start: nil, count: 0)
                    var rows = [UnsafeRawBufferPointer](repeating: none, count: v.count)
                    do {
                        try v.writeRows(base: 1_000, keys: &keys, rows: &rows)
                        XCTAssertEqual(want?.map(\.0), keys, "shift \(shift)")
                        XCTAssertEqual(want?.map(\.1), rows.map { Array($0) }, "shift \(shift)")
                        compared += 1
                    } catch is RowError {
                        XCTAssertNil(want, "writeRows threw where the cursor did not (shift \(shift))")
                        thrown += 1
                    } catch {
                        XCTFail("not a RowError: \(error)")
                    }
                }
            }
        }
        XCTAssertGreaterThan(compared, 100)
        XCTAssertGreaterThan(thrown, 10, "damage must be seen, not only survived")
    }

    func testClusterSizeFollowsTheRowSize() throws {
        func schema(_ kinds: [PropertyKind]) -> ClassSchema {
            var c = ClassSchema(
                name: "C", cid: 1,
                properties: kinds.enumerated().map { Property(name: "p\($0.offset)", kind: $0.element) },
                layouts: [], nextPid: 1)
            c.assignPids()
            return c
        }
        let small = schema([.int, .int])
        let wide = schema(Array(repeating: .string, count: 40))
        let s1 = ClusterShift.choose(RowCodec(small).current), s2 = ClusterShift.choose(RowCodec(wide).current)
        XCTAssertGreaterThan(s1, s2)
        XCTAssertLessThanOrEqual(s1, ClusterView.maxShift)
        XCTAssertGreaterThanOrEqual(s2, 0)
    }
}
