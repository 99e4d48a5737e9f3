import XCTest
import Foundation
import Engine
@testable import FiefObjects

final class AllTypes: Object {
    @Persisted var b = false
    @Persisted var i = 0
    @Persisted var i8: Int8 = 0
    @Persisted var i16: Int16 = 0
    @Persisted var i32: Int32 = 0
    @Persisted var i64: Int64 = 0
    @Persisted var f: Float = 0
    @Persisted var d: Double = 0
    @Persisted var s = ""
    @Persisted var data = Data()
    @Persisted var bytes: [UInt8] = []
    @Persisted var date = Date(timeIntervalSince1970: 0)
    @Persisted var uuid = UUID()
    @Persisted var oi: Int?
    @Persisted var os: String?
    @Persisted var od: Date?
    @Persisted var ou: UUID?
    @Persisted var odata: Data?
    @Persisted var ints: List<Int>
    @Persisted var optionalStrings: List<String?>
    @Persisted var link: AllTypes?
}

final class TypesTests: XCTestCase {
    func roundTrip(_ fill: (AllTypes) -> Void, _ check: (AllTypes) -> Void) throws {
        let dir = TempDir()
        let path = dir.file("types.fief")
        do {
            let store = try ObjectStore(Configuration(path: path, types: [AllTypes.self]))
            let ctx = store.context()
            let o = AllTypes()
            fill(o)
            check(o)
            try ctx.write { try ctx.add(o) }
            check(o)
        }
        let store = try ObjectStore(Configuration(path: path, types: [AllTypes.self]))
        check(store.context().objects(AllTypes.self)[0])
    }

    func testExtremes() throws {
        let date = Date(timeIntervalSinceReferenceDate: 123_456_789.123_456_789)
        let uuid = UUID()
        try roundTrip(
            { o in
                o.b = true; o.i = .min; o.i8 = .min; o.i16 = .max; o.i32 = .min; o.i64 = .max
                o.f = -0.0; o.d = .nan; o.s = "héllo wörld 🌍 \u{0}x"; o.data = Data([0, 1, 2, 255])
                o.bytes = [9, 8]; o.date = date; o.uuid = uuid; o.oi = Int.max; o.os = ""; o.od = nil; o.ou = uuid
                o.ints.append(objectsIn: [Int.min, 0, Int.max]); o.optionalStrings.append(objectsIn: [nil, "", "x"])
            },
            { o in
                XCTAssertEqual(o.b, true); XCTAssertEqual(o.i, .min); XCTAssertEqual(o.i8, .min);
                XCTAssertEqual(o.i16, .max)
                XCTAssertEqual(o.i32, .min); XCTAssertEqual(o.i64, .max)
                XCTAssertEqual(o.f, 0); XCTAssertEqual(o.f.sign, .minus, "-0.0 keeps its sign")
                XCTAssertTrue(o.d.isNaN); XCTAssertEqual(o.s, "héllo wörld 🌍 \u{0}x");
                XCTAssertEqual(o.data, Data([0, 1, 2, 255]))
                XCTAssertEqual(o.bytes, [9, 8]); XCTAssertEqual(o.date, date, "dates are exact")
                XCTAssertEqual(o.uuid, uuid); XCTAssertEqual(o.oi, Int.max); XCTAssertEqual(o.os, "");
                XCTAssertNil(o.od)
                XCTAssertEqual(o.ou, uuid); XCTAssertNil(o.odata)
                XCTAssertEqual(Array(o.ints), [Int.min, 0, Int.max]);
                XCTAssertEqual(Array(o.optionalStrings), [nil, "", "x"])
            })
    }

    /// Lists of values too long for the row, given with a new object, go to `fief/l` as it is
    /// added (an insert that skipped them would read back empty).
    func testLongValueListsAddedWithTheirObjectReadBack() throws {
        let ints = (0..<(RowCodec.maxInlineListCount * 3)).map { $0 * 7 - 100 }
        let strings: [String?] = (0..<300).map { $0 % 5 == 0 ? nil : "s\($0)" }
        try roundTrip(
            { o in
                o.ints.append(objectsIn: ints); o.optionalStrings.append(objectsIn: strings)
            },
            { o in
                XCTAssertEqual(Array(o.ints), ints); XCTAssertEqual(Array(o.optionalStrings), strings)
            })
    }

    func testLargeValuesMoveOutOfRow() throws {
        let big = Data((0..<(16 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let mid = String(repeating: "abc", count: 1000)
        try roundTrip(
            { o in
                o.data = big; o.s = mid; o.odata = Data(repeating: 7, count: 100)
            },
            { o in
                XCTAssertEqual(o.data.count, big.count)
                XCTAssertEqual(o.data, big)
                XCTAssertEqual(o.s, mid)
                XCTAssertEqual(o.odata, Data(repeating: 7, count: 100))
            })
    }

    func testTooLargeValueIsATypedErrorAndRollsBack() throws {
        let dir = TempDir()
        let store = try ObjectStore(Configuration(path: dir.file("t.fief"), types: [AllTypes.self]))
        let ctx = store.context()
        let o = AllTypes()
        o.data = Data(count: (16 << 20) + 1)
        XCTAssertThrowsError(try ctx.write { try ctx.add(o) }) { e in
            XCTAssertEqual(
                e as? ObjectError, .valueTooLarge(className: "AllTypes", property: "data", size: (16 << 20) + 1))
        }
        XCTAssertEqual(ctx.objects(AllTypes.self).count, 0)
    }

    func testNaNAndZeroInQueries() throws {
        let dir = TempDir()
        let store = try ObjectStore(Configuration(path: dir.file("t.fief"), types: [AllTypes.self]))
        let ctx = store.context()
        try ctx.write {
            for d in [Double.nan, -0.0, 0.0, 1.5, -Double.infinity] { try ctx.create(AllTypes.self, value: ["d": d]) }
        }
        let all = ctx.objects(AllTypes.self)
        XCTAssertEqual(try all.filter("d == 0").count, 2, "-0.0 == 0.0")
        XCTAssertEqual(try all.filter("d > -1").count, 3, "NaN compares false")
        XCTAssertEqual(all.sorted(byKeyPath: "d").map(\.d).filter { !$0.isNaN }, [-Double.infinity, -0.0, 0.0, 1.5])
    }
}
