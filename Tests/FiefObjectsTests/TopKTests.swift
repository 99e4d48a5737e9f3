import SeededRandomness
import XCTest
import Foundation
@testable import FiefObjects

/// Sort + limit keeps a bounded top k and passes over rows on their stored integer: its
/// answers must be the full sort's first k, ties in key order, in both directions.
final class TopKTests: XCTestCase {
    func testTopKEqualsThePrefixOfTheFullSort() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        var rng = SeededRandom(seed: 77)
        try ctx.write {
            for i in 1...600 {
                let p = Person()
                p.id = Int64(i)
                p.age = Int(rng.next() % 25) - 5  // many ties, some negative
                p.name = "n\(rng.next() % 40)"
                try ctx.add(p)
            }
        }
        let all = ctx.objects(Person.self)
        for ascending in [true, false] {
            for k in [1, 7, 50, 599, 600, 700] {
                let full = all.sorted(byKeyPath: "age", ascending: ascending).map(\.id)
                XCTAssertEqual(
                    all.sorted(byKeyPath: "age", ascending: ascending).limit(k).map(\.id), Array(full.prefix(k)),
                    "k \(k) ascending \(ascending)")
                let filtered = try all.filter("name BEGINSWITH %@", "n1")
                let fullFiltered = filtered.sorted(byKeyPath: "age", ascending: ascending).map(\.id)
                XCTAssertEqual(
                    filtered.sorted(byKeyPath: "age", ascending: ascending).limit(k).map(\.id),
                    Array(fullFiltered.prefix(k)))
                let twoKeys = all.sorted(by: [
                    SortDescriptor(keyPath: "age", ascending: ascending),
                    SortDescriptor(keyPath: "name", ascending: !ascending)
                ])
                XCTAssertEqual(twoKeys.limit(k).map(\.id), Array(twoKeys.map(\.id).prefix(k)))
            }
        }
    }
}
