import XCTest
import Engine
@testable import FiefObjects

/// A write leaves what it learned of its tables on the version it commits (`VersionFacts`),
/// and the next transaction on that version starts from it. The facts belong to a version,
/// not to a context: a write by another context or another handle makes a version of its
/// own, and nothing learned before it may hide a table that write made.
final class VersionFactsTests: XCTestCase {
    func testAWriteLeavesItsFactsOnTheVersionItCommits() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        try ctx.write { try ctx.add(person(1, dogs: 2)) }
        let facts = try XCTUnwrap(VersionFacts.of(try ctx.tables().tx), "the read after a write finds its facts")
        let cid = try XCTUnwrap(facts.schema.classes["Person"]?.cid)
        XCTAssertTrue(facts.tables.contains(Tables.clusters(cid)), "\(facts.tables)")
        XCTAssertNotNil(facts.clusterShifts[cid])
        try ctx.write {
            XCTAssertTrue(VersionFacts.of(try ctx.tables().tx) === facts, "the next write starts from them")
            try ctx.add(person(2, dogs: 2))
        }
        XCTAssertEqual(ctx.objects(Person.self).count, 2)
        XCTAssertTrue(try store.check().isSound)
    }

    func testTablesMadeByAnotherContextOrHandleAreSeen() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let a = store.context()
        try a.write { try a.add(person(1, dogs: 2)) }
        // A write that makes no table, whose reads find the out-of-row tables missing.
        try a.write {
            try a.add(person(2, dogs: 2))
            XCTAssertEqual(try a.object(ofType: Person.self, forPrimaryKey: Int64(1))?.dogs.count, 2)
        }
        let long = RowCodec.maxInlineListCount + 100
        // Another context of the same store moves person 1's dogs out of its row.
        let b = store.context()
        try b.write {
            let p = try XCTUnwrap(b.object(ofType: Person.self, forPrimaryKey: Int64(1)))
            for i in 0..<long { p.dogs.append(dog("b\(i)")) }
        }
        try a.refresh()
        XCTAssertEqual(try a.object(ofType: Person.self, forPrimaryKey: Int64(1))?.dogs.count, long + 2)
        try a.write { try a.object(ofType: Person.self, forPrimaryKey: Int64(1))?.dogs.append(dog("a")) }
        XCTAssertEqual(try a.object(ofType: Person.self, forPrimaryKey: Int64(1))?.dogs.count, long + 3)
        // A write that makes no table and finds the dogs' side tables missing (a deletion asks).
        try a.write {
            let d = dog("gone")
            try a.add(d)
            try a.delete(d)
        }
        // Another handle on the file gives a dog of person 2 a name kept out of its row.
        let name = String(repeating: "n", count: 20_000)
        let other = try openZoo(dir).context()
        try other.write { try other.object(ofType: Person.self, forPrimaryKey: Int64(2))?.dogs.first?.name = name }
        try a.refresh()
        XCTAssertEqual(try a.object(ofType: Person.self, forPrimaryKey: Int64(2))?.dogs.first?.name.count, name.count)
        // Deleting that dog here takes its name out of the table the other handle made.
        try a.write {
            try a.delete(try XCTUnwrap(try a.object(ofType: Person.self, forPrimaryKey: Int64(2))?.dogs.first))
        }
        XCTAssertEqual(try cells(store, inTablesStartingWith: "fief/v/"), 0)
        try other.write { try other.object(ofType: Person.self, forPrimaryKey: Int64(2))?.dogs.first?.name = name }
        try a.refresh()
        try a.write { try a.add(person(3, dogs: long)) }
        XCTAssertEqual(try a.objects(Dog.self).filter("name == %@", name).count, 1)
        XCTAssertEqual(try a.object(ofType: Person.self, forPrimaryKey: Int64(3))?.dogs.count, long)
        XCTAssertTrue(try store.check().isSound)
    }

    private func person(_ id: Int64, dogs: Int) -> Person {
        let p = Person()
        p.id = id
        p.name = "p\(id)"
        for i in 0..<dogs { p.dogs.append(dog("d\(i)")) }
        return p
    }

    private func dog(_ name: String) -> Dog {
        let d = Dog()
        d.name = name
        return d
    }
}
