import SeededRandomness
import XCTest
import Foundation
@testable import FiefObjects

/// A cluster keeps the bounds of its integer properties after its rows, and sort + limit
/// passes over a cluster whose bounds cannot beat the last row kept. The bounds must hold for
/// every value a reader sees: a write that patches a value in place outside them drops them.
final class ClusterSummaryTests: XCTestCase {
    func testBoundsRoundTripThroughTheirBytes() throws {
        for (least, greatest) in [(Int64.min, Int64.max), (-5, 7), (0, 0), (Int64.max, Int64.max)] {
            let s = ClusterSummary(columns: [
                (3, ClusterSummary.Bounds(least: least, greatest: greatest)),
                (900, ClusterSummary.Bounds(least: -1, greatest: 1))
            ])
            let bytes = s.encoded()
            let back = try bytes.withUnsafeBytes { try ClusterSummary($0) }
            XCTAssertEqual(back, s)
            XCTAssertEqual(bytes.withUnsafeBytes { ClusterSummary.bounds(in: $0, of: 3) }?.least, least)
            XCTAssertNil(bytes.withUnsafeBytes { ClusterSummary.bounds(in: $0, of: 4) })
            // A byte short, or one too many, is damage.
            XCTAssertThrowsError(try Array(bytes.dropLast()).withUnsafeBytes { try ClusterSummary($0) })
            XCTAssertThrowsError(try (bytes + [0]).withUnsafeBytes { try ClusterSummary($0) })
        }
    }

    func testAValuePatchedOutsideItsClusterBoundsStillWins() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        var rng = SeededRandom(seed: 5)
        // One byte each, as the patches below.
        try addPersons(ctx, 3000) { _ in Int(rng.next() % 50) + 1 }
        let all = ctx.objects(Person.self)
        func top(_ ascending: Bool, _ k: Int = 1) -> [Int64] {
            all.sorted(byKeyPath: "age", ascending: ascending).limit(k).map(\.id)
        }
        XCTAssertEqual(top(false, 20), Array(all.sorted(byKeyPath: "age", ascending: false).map(\.id).prefix(20)))
        // Each in its own write, of the same width: the row is patched in the leaf, its cluster
        // not decoded.
        for (id, age) in [(1777, 120), (2222, -120), (10, 110), (2999, 127)] {
            try ctx.write { try XCTUnwrap(ctx.object(ofType: Person.self, forPrimaryKey: Int64(id))).age = age }
        }
        XCTAssertEqual(top(false, 3), [2999, 1777, 10])
        XCTAssertEqual(top(true), [2222])
        // Patched back inside, then a cluster decoded and written whole: bounds exact again.
        try ctx.write {
            try XCTUnwrap(ctx.object(ofType: Person.self, forPrimaryKey: 2999)).age = 3
            try XCTUnwrap(ctx.object(ofType: Person.self, forPrimaryKey: 2999)).name = "a longer name than before"
        }
        XCTAssertEqual(top(false, 2), [1777, 10])
        XCTAssertEqual(try store.check().problems, [])
    }

    /// Many sets in one write: after the first in a leaf, each is patched where its lookup found
    /// the cluster (`claimOwned`), with no second descent. The values, the bounds and the check
    /// must come out as if each had been set on its own.
    func testSetsAfterLookupsInOneWriteLandWhereTheLookupFoundThem() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        try addPersons(ctx, 3000) { $0 % 50 }
        var expected = [Int64: Int](uniqueKeysWithValues: (1...3000).map { (Int64($0), $0 % 50) })
        var rng = SeededRandom(seed: 9)
        try ctx.write {
            for n in 0..<2000 {
                let id = Int64(rng.next() % 3000) + 1
                let p = try XCTUnwrap(ctx.object(ofType: Person.self, forPrimaryKey: id))
                // Now and then outside every cluster's bounds, and now and then another change
                // between the lookup and the set (the set then takes the descent again).
                let age = n % 97 == 0 ? 100 + n % 27 : (p.age + 1) % 50
                if n % 13 == 0 { try ctx.object(ofType: Person.self, forPrimaryKey: id % 3000 + 1)?.name = "x\(n)" }
                p.age = age
                expected[id] = age
                XCTAssertEqual(p.age, age)
            }
        }
        for (id, age) in expected {
            XCTAssertEqual(try ctx.object(ofType: Person.self, forPrimaryKey: id)?.age, age, "person \(id)")
        }
        let oldest = ctx.objects(Person.self).sorted(byKeyPath: "age", ascending: false).limit(5).map(\.age)
        XCTAssertEqual(oldest, Array(expected.values.sorted(by: >).prefix(5)))
        XCTAssertEqual(try store.check().problems, [])
    }

    func testOptionalsAndRowsThatLackThePropertyKeepNoBounds() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        try ctx.write {
            for i in 1...200 {
                let p = Person()
                p.id = Int64(i)
                p.age = i % 7
                // A null in some rows: the date has no bounds; neither kind is an integer.
                if i % 3 == 0 { p.born = Date(timeIntervalSince1970: Double(i)) }
                try ctx.add(p)
            }
        }
        let all = ctx.objects(Person.self)
        let full = all.sorted(byKeyPath: "born", ascending: false).map(\.id)
        XCTAssertEqual(all.sorted(byKeyPath: "born", ascending: false).limit(5).map(\.id), Array(full.prefix(5)))
        XCTAssertEqual(try store.check().problems, [])
    }

    /// Persons 1...n in one write, each with the age `age(id)` gives.
    private func addPersons(_ ctx: ObjectContext, _ n: Int, age: (Int) -> Int) throws {
        try ctx.write {
            for i in 1...n {
                let p = Person()
                p.id = Int64(i)
                p.age = age(i)
                try ctx.add(p)
            }
        }
    }
}
