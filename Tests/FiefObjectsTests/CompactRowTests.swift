import XCTest
import Foundation
import SeededRandomness
@testable import FiefObjects

/// Compact rows (object-layer format 3): every kind reads back as written, integers take the
/// fewest bytes, a row written again in the fixed encoding and back is the same row, a patch
/// happens in place only when the bytes fit, and damaged bytes give `RowError`, never a trap.
final class CompactRowTests: XCTestCase {
    static let kinds: [PropertyKind] = [
        .bool, .int, .int8, .int32, .float, .double, .string, .data, .date, .uuid, .object
    ]

    /// A class with one property of each kind, each optional, and two lists.
    static func schema() -> ClassSchema {
        var props = kinds.enumerated().map {
            Property(name: "p\($0.offset)", kind: $0.element, optional: true, target: $0.element == .object ? "C" : nil)
        }
        props.append(Property(name: "ints", kind: .int, list: true))
        props.append(Property(name: "links", kind: .object, list: true, target: "C"))
        var c = ClassSchema(name: "C", cid: 1, properties: props, layouts: [], nextPid: 1)
        c.assignPids()
        return c
    }

    static func randomValue(_ k: PropertyKind, _ rng: inout SeededRandom) -> ObjectValue {
        if Int.random(in: 0..<6, using: &rng) == 0 { return .null }
        let ints: [Int64] = [0, 1, -1, 127, 128, -128, -129, 255, 256, 1 << 23, -(1 << 23), 1 << 40, .max, .min]
        switch k {
        case .bool: return .bool(Bool.random(using: &rng))
        case .int, .int8, .int32:
            return .int(
                Bool.random(using: &rng)
                    ? ints.randomElement(using: &rng)!
                    : Int64.random(in: .min ... .max, using: &rng) >> Int64.random(in: 0..<64, using: &rng))
        case .float: return .float(Float(Int.random(in: -1000...1000, using: &rng)) / 7)
        case .double: return .double(Double(Int.random(in: -1_000_000...1_000_000, using: &rng)) / 3)
        case .date:
            return .date(Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0...1_000_000, using: &rng))))
        case .uuid:
            return .uuid(
                UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, UInt8.random(in: 0...255, using: &rng))))
        case .string:
            return .string(
                String(
                    (0..<Int.random(in: 0...90, using: &rng)).map { _ in
                        Character(UnicodeScalar(UInt8.random(in: 97...122, using: &rng)))
                    }))
        case .data:
            return .data((0..<Int.random(in: 0...70, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })
        case .object: return .link(Int64.random(in: -1...1_000_000, using: &rng))
        default: return .null
        }
    }

    /// Random values of every property, the lists either kept in the row or counted only;
    /// some integers and links are the object's own `key`.
    static func randomRow(_ codec: RowCodec, _ c: ClassSchema, key: Int64, _ rng: inout SeededRandom)
        -> (values: PidMap<ObjectValue>, lists: PidMap<[UInt8]>)
    {
        var values: PidMap<ObjectValue> = [:], lists: PidMap<[UInt8]> = [:]
        for p in c.storedProperties {
            if p.list {
                let items: [ObjectValue] = (0..<Int.random(in: 0...40, using: &rng)).map { _ in
                    p.kind == .object
                        ? .link(Int64.random(in: 0...999, using: &rng)) : .int(Int64.random(in: -9...9, using: &rng))
                }
                values[p.pid] = .int(Int64(items.count))
                if let b = RowCodec.inlineBytes(items) { lists[p.pid] = b }
            } else if Int.random(in: 0..<4, using: &rng) == 0, p.kind.isInteger || p.kind == .object {
                values[p.pid] = p.kind == .object ? .link(key) : .int(key)
            } else {
                values[p.pid] = randomValue(p.kind, &rng)
            }
        }
        return (values, lists)
    }

    func testEveryKindReadsBackAndTheFixedEncodingRoundTrips() throws {
        let c = CompactRowTests.schema()
        let codec = RowCodec(c)
        var rng = SeededRandom(seed: 3)
        for round in 0..<500 {
            let key = Int64.random(in: -5...5_000_000, using: &rng)
            let (values, lists) = CompactRowTests.randomRow(codec, c, key: key, &rng)
            let (row, moved) = codec.encode(values, inlineLists: lists, key: key)
            XCTAssertEqual(row[0], CompactRow.tag)
            try row.withUnsafeBytes { r in
                XCTAssertNoThrow(try codec.fields(r, key: key), "round \(round)")
                for p in c.storedProperties {
                    let got = try codec.value(r, pid: p.pid, key: key, outOfRow: { moved[p.pid] })
                    XCTAssertEqual(got, values[p.pid] ?? .null, "round \(round) \(p.name)")
                }
                XCTAssertEqual(try codec.inlineLists(r), lists, "round \(round)")
                let fixed = try codec.transcode(r, compact: false, key: key)
                XCTAssertEqual(fixed[0], RowLayout.tag)
                let back = try fixed.withUnsafeBytes { f in
                    for p in c.storedProperties {
                        let got = try codec.value(f, pid: p.pid, key: key, outOfRow: { moved[p.pid] })
                        XCTAssertEqual(got, values[p.pid] ?? .null, "round \(round) fixed \(p.name)")
                    }
                    return try codec.transcode(f, compact: true, key: key)
                }
                XCTAssertEqual(back, row, "round \(round): compact → fixed → compact changed the row")
            }
        }
    }

    /// A row is measured only when it may pass the limit, and then moves out what the measure
    /// says: a string that leaves the row's bytes under the limit, but not its measure (each
    /// integer counted at its widest), moves out as it did when every row was measured first.
    func testAStringMovesOutWhenTheRowsMeasurePassesTheLimit() throws {
        var props = (0..<10).map { Property(name: "i\($0)", kind: .int) }
        props.append(Property(name: "s", kind: .string))
        var c = ClassSchema(name: "C", cid: 1, properties: props, layouts: [], nextPid: 1)
        c.assignPids()
        let codec = RowCodec(c)
        var values = PidMap<ObjectValue>()
        for p in c.storedProperties where p.kind == .int { values[p.pid] = .int(1) }
        let s = try XCTUnwrap(c.storedProperties.first { $0.kind == .string })
        // Measured: 6 for the header, 18 for each integer, the string's length and 3.
        for (n, movesOut) in [(1600, false), (1700, false), (1740, true), (1950, true)] {
            values[s.pid] = .string(String(repeating: "a", count: n))
            let (row, moved) = codec.encode(values, key: 5)
            XCTAssertEqual(moved[s.pid] != nil, movesOut, "a string of \(n) bytes")
            XCTAssertLessThanOrEqual(row.count, RowLayout.maxRowSize, "a string of \(n) bytes")
            try row.withUnsafeBytes { r in
                let got = try codec.value(r, pid: s.pid, key: 5, outOfRow: { moved[s.pid] })
                XCTAssertEqual(got, values[s.pid], "a string of \(n) bytes")
            }
        }
    }

    func testIntegersTakeTheFewestBytes() throws {
        let cases: [(Int64, Int)] = [
            (0, 0), (1, 1), (-1, 1), (127, 1), (-128, 1), (128, 2), (-129, 2), (32_767, 2), (32_768, 3),
            (200_000, 3), (1 << 31 - 1, 4), (1 << 31, 5), (.max, 8), (.min, 8)
        ]
        for (v, n) in cases {
            XCTAssertEqual(CompactRow.width(v), n, "\(v)")
            var row: [UInt8] = []
            CompactRow.Writer.build(layoutID: 0, room: 16, into: &row) { $0.int(v, key: v == 0 ? 1 : 0) }
            row.withUnsafeBytes { XCTAssertEqual(CompactRow.int($0, at: 3, bytes: n), v, "\(v)") }
        }
        // A bench person: id, a 6-byte name, an age, a 3-byte city, no dogs.
        var c = ClassSchema(
            name: "P", cid: 1,
            properties: [
                Property(name: "id", kind: .int, primaryKey: true), Property(name: "name", kind: .string),
                Property(name: "age", kind: .int), Property(name: "city", kind: .string),
                Property(name: "dogs", kind: .object, list: true, target: "D")
            ], layouts: [], nextPid: 1)
        c.assignPids()
        let codec = RowCodec(c)
        let pids = c.storedProperties.map(\.pid)
        let values: PidMap<ObjectValue> = [
            pids[0]: .int(123_456), pids[1]: .string("p12345"), pids[2]: .int(42), pids[3]: .string("c17"),
            pids[4]: .int(0)
        ]
        let row = codec.encode(values, key: 123_456).row
        XCTAssertEqual(
            row.count, 2 + 1 + 7 + 2 + 4 + 1, "tag, layout, then each slot's serial and bytes; the key is not repeated")
        try row.withUnsafeBytes { r in
            XCTAssertEqual(try codec.value(r, pid: pids[0], key: 123_456, outOfRow: { nil }), .int(123_456))
        }
    }

    func testAPatchHappensInPlaceOnlyWhenTheBytesFit() throws {
        let c = CompactRowTests.schema()
        let codec = RowCodec(c)
        let intPid = c.storedProperties.first { $0.kind == .int && !$0.list }!.pid
        let boolPid = c.storedProperties.first { $0.kind == .bool }!.pid
        let key: Int64 = 7
        var row = codec.encode([intPid: .int(39), boolPid: .bool(false)], key: key).row
        let before = row.count
        try row.withUnsafeMutableBytes { r in
            XCTAssertEqual(try codec.patch(r, pid: intPid, .int(40), key: key), .int(39))
            XCTAssertEqual(try codec.patch(r, pid: boolPid, .bool(true), key: key), .bool(false))
            XCTAssertNil(try codec.patch(r, pid: intPid, .int(400), key: key), "two bytes do not fit in one")
            XCTAssertNil(try codec.patch(r, pid: intPid, .null, key: key), "a null takes no bytes")
            XCTAssertNil(try codec.patch(r, pid: intPid, .int(key), key: key), "the key takes no bytes")
            XCTAssertEqual(
                try codec.patch(r, pid: intPid, .int(40), key: key), .int(40), "the same value changes nothing")
        }
        XCTAssertEqual(row.count, before)
        try row.withUnsafeBytes { r in
            XCTAssertEqual(try codec.value(r, pid: intPid, key: key, outOfRow: { nil }), .int(40))
            XCTAssertEqual(try codec.value(r, pid: boolPid, key: key, outOfRow: { nil }), .bool(true))
            XCTAssertNoThrow(try codec.fields(r, key: key))
        }
    }

    func testDamagedRowsThrowAndNeverTrap() throws {
        let c = CompactRowTests.schema()
        let codec = RowCodec(c)
        var rng = SeededRandom(seed: 5)
        var caught = 0
        for _ in 0..<300 {
            let (values, lists) = CompactRowTests.randomRow(codec, c, key: 3, &rng)
            let row = codec.encode(values, inlineLists: lists, key: 3).row
            var damaged = row
            if Bool.random(using: &rng) {
                damaged.removeLast(Int.random(in: 1...max(1, row.count - 1), using: &rng))
            } else {
                for _ in 0..<Int.random(in: 1...4, using: &rng) {
                    damaged[Int.random(in: 1..<row.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                }
            }
            damaged.withUnsafeBytes { r in
                // Every read either answers or throws; the whole-row check catches a cut.
                do { _ = try codec.fields(r, key: 3) } catch { caught += 1 }
                for p in c.storedProperties {
                    _ = try? codec.value(r, pid: p.pid, key: 3, outOfRow: { nil })
                    if p.list { _ = try? codec.inlineList(r, pid: p.pid) }
                }
            }
        }
        XCTAssertGreaterThan(caught, 150, "most damage is seen by the whole-row check")
        for n in 0..<12 {
            let bytes = [CompactRow.tag] + [UInt8](repeating: 0xFF, count: n)
            try bytes.withUnsafeBytes { r in XCTAssertThrowsError(try codec.fields(r, key: 3)) }
        }
    }
}
