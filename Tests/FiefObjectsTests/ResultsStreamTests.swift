import XCTest
import Foundation
@testable import FiefObjects

/// `for … in` over a whole class outside a write streams its keys a batch of clusters at a
/// time (`ResultsStream`): the same objects, in the same order, as the keys made up front,
/// even when the loop body moves the context on.
final class ResultsStreamTests: XCTestCase {
    private func fill(_ store: ObjectStore, _ n: Int64) throws {
        let ctx = store.context()
        try ctx.write {
            try ctx.add(
                (1...n).map { i in
                    let p = Person()
                    p.id = i
                    p.name = i % 3 == 0 ? "fizz" : "p\(i)"
                    p.age = Int(i % 97)
                    return p
                })
        }
    }

    func testAnIterationStreamsTheObjectsItsKeysName() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        try fill(store, 12000)
        let ctx = store.context()
        for results in [
            ctx.objects(Person.self), try ctx.objects(Person.self).filter("age > %@", 50),
            try ctx.objects(Person.self).filter("age > %@ AND age < %@", 10, 20)
        ] {
            let streamed = results.map { $0.id }  // through makeIterator
            XCTAssertNotNil(ResultsStream(ctx: ctx, className: "Person", predicate: results.predicate))
            XCTAssertEqual(streamed, try results.keys(), "\(String(describing: results.predicate))")
            XCTAssertGreaterThan(streamed.count, ResultsStream.batch, "more than one batch")
        }
        // An iteration that stops early.
        XCTAssertEqual(ctx.objects(Person.self).first { $0.age == 5 }?.id, 5)
        // Answered by an index, or inside a write: the keys are made up front.
        XCTAssertNil(
            ResultsStream(
                ctx: ctx, className: "Person",
                predicate: try ctx.objects(Person.self).filter("name == %@", "fizz").predicate))
        try ctx.write { XCTAssertNil(ResultsStream(ctx: ctx, className: "Person", predicate: nil)) }
    }

    /// The loop body writes (the context moves to the new version, its old rows may be
    /// reused): the rest of the keys come from the version the iteration began on, as keys
    /// made up front would have, and every object read is read in the context's version.
    func testAnIterationKeepsItsKeysWhenTheLoopMovesTheContext() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        try fill(store, 5000)
        let ctx = store.context()
        let before = try ctx.objects(Person.self).keys()
        var seen: [Int64] = []
        var ages: [Int] = []
        for p in ctx.objects(Person.self) {
            seen.append(p.objectKey!)
            if seen.count == 10 {
                try ctx.write {
                    for q in try ctx.objects(Person.self).filter("id > %@", Int64(4000)).objects() { try ctx.delete(q) }
                    for q in try ctx.objects(Person.self).filter("id <= %@", Int64(2000)).objects() { q.age = -1 }
                    try ctx.add(
                        (6000...6100).map { i -> Person in
                            let q = Person(); q.id = Int64(i); return q
                        })
                }
            }
            if seen.count > 10 && !p.isInvalidated { ages.append(p.age) }
        }
        XCTAssertEqual(seen, before, "the keys the iteration began with, none added, none dropped")
        XCTAssertEqual(ages.count, 4000 - 10, "objects deleted meanwhile are invalidated")
        XCTAssertEqual(ages.filter { $0 == -1 }.count, 2000 - 10, "each object read as the context sees it now")
        XCTAssertTrue(try store.check().isSound)
    }
}
