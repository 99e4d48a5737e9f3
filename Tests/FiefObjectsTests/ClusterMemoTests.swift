import XCTest
@testable import FiefObjects

/// A read keeps the clusters it found (`ClusterMemo`) for the version it reads, and for no
/// other: a context moved to a new version reads that version's rows, and a context left on
/// the old one still reads the old rows, through index hits, primary keys and links alike.
final class ClusterMemoTests: XCTestCase {
    struct Answers: Equatable {
        var hits: [String] = []
        var ages: [Int64: Int] = [:]
        var owners: [String] = []
    }

    /// What a context answers: a query by index prefix and age, every person by primary key,
    /// and the owners of a few dogs (back through the persons' clusters).
    func answers(_ ctx: ObjectContext, ids: ClosedRange<Int64>) throws -> Answers {
        var a = Answers()
        a.hits = try ctx.objects(Person.self).filter("name BEGINSWITH %@ AND age > %@", "p1", 40).map(\.name).sorted()
        for id in ids { a.ages[id] = try ctx.object(ofType: Person.self, forPrimaryKey: id)?.age }
        for d in ctx.objects(Dog.self).sorted(byKeyPath: "name").limit(20) {
            a.owners += d.owners.map(\.name).sorted()
        }
        return a
    }

    /// The same answers from a plain model of the persons, to compare with.
    func expected(_ persons: [Int64: (name: String, age: Int)], dogs: [String: [Int64]], ids: ClosedRange<Int64>)
        -> Answers
    {
        var a = Answers()
        a.hits = persons.values.filter { $0.name.hasPrefix("p1") && $0.age > 40 }.map(\.name).sorted()
        for id in ids { a.ages[id] = persons[id]?.age }
        for d in dogs.keys.sorted().prefix(20) { a.owners += dogs[d]!.compactMap { persons[$0]?.name }.sorted() }
        return a
    }

    func testClustersFoundAreThoseOfTheVersionRead() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let writer = store.context()
        var persons: [Int64: (name: String, age: Int)] = [:]
        var dogs: [String: [Int64]] = [:]
        try writer.write {
            for i in Int64(1)...2000 {
                let p = Person()
                (p.id, p.name, p.age) = (i, "p\(i)", Int(i % 90))
                if i % 50 == 0 {
                    let d = Dog()
                    d.name = "d\(i)"
                    p.dogs.append(d)
                    dogs[d.name] = [i]
                }
                try writer.add(p)
                persons[i] = (p.name, p.age)
            }
        }
        let ids = Int64(1)...2600
        let reader = store.context(), stays = store.context()
        let before = try answers(reader, ids: ids)
        XCTAssertEqual(before, expected(persons, dogs: dogs, ids: ids))
        XCTAssertEqual(try answers(stays, ids: ids), before)

        // New ages of the same width and wider, deletions (a dog's owner among them), new
        // persons in new clusters: every kind of change a kept cluster could hide.
        try writer.write {
            for i in Int64(1)...2000 where i % 3 == 0 {
                let p = try XCTUnwrap(writer.object(ofType: Person.self, forPrimaryKey: i))
                p.age = i % 2 == 0 ? Int(i % 90) + 1 : 100_000 + Int(i)
                persons[i]!.age = p.age
            }
            for i in Int64(1)...2000 where i % 7 == 0 {
                try writer.delete(try XCTUnwrap(writer.object(ofType: Person.self, forPrimaryKey: i)))
                persons[i] = nil
            }
            for i in Int64(2001)...2600 {
                let p = Person()
                (p.id, p.name, p.age) = (i, "p\(i)", 41 + Int(i % 3))
                try writer.add(p)
                persons[i] = (p.name, p.age)
            }
        }
        // A deleted owner's dogs go with it (cascade); the model forgets them too.
        dogs = dogs.filter { persons[$0.value[0]] != nil }
        try reader.refresh()
        XCTAssertEqual(try answers(reader, ids: ids), expected(persons, dogs: dogs, ids: ids))
        XCTAssertEqual(try answers(stays, ids: ids), before, "a context left on its version reads it")
        XCTAssertEqual(try store.check().problems, [])
    }

    func testNumbersOutsideTheMemoAreNotKept() throws {
        let bytes: [UInt8] = [ClusterView.tag, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0]
        try bytes.withUnsafeBytes { b in
            let v = try ClusterView(b, shift: 0)
            var memo = ClusterMemo()
            XCTAssertNil(memo.view(0))
            for n in [-1, ClusterMemo.limit, Int64.max] {
                memo.remember(n, v)
                XCTAssertNil(memo.view(n))
            }
            memo.remember(300, v)
            XCTAssertEqual(memo.view(300)?.count, 1)
            XCTAssertNil(memo.view(299))
            XCTAssertNil(memo.view(301))
            memo.remember(ClusterMemo.limit - 1, v)
            XCTAssertEqual(memo.view(ClusterMemo.limit - 1)?.count, 1)
            XCTAssertEqual(memo.view(300)?.count, 1)
        }
    }
}
