import XCTest
import Engine
@testable import FiefObjects

/// A target's row keeps the links that point at it (`CompactRow`): a dog knows its owner with
/// no `fief/b` cell. A target linked from more origins than its row has room for keeps the rest
/// in `fief/b`; every entry is in one place, deletes clear both, `check()` sees both, and a
/// file written back in an old format (whose rows keep none) moves them to `fief/b` and back.
final class BacklinkStorageTests: XCTestCase {
    func testRowsKeepTheirBacklinksAndAPopularTargetSpillsToTheTable() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        let shared = Dog()
        shared.name = "shared"
        try ctx.write {
            try addPersons(ctx) { i in
                let own = Dog()
                own.name = "own \(i)"
                return [own, shared] + (i % 10 == 0 ? [shared] : [])
            }
        }
        XCTAssertTrue(try store.check().isSound)
        // 100 dogs of one owner each keep it in their rows; the shared dog's 100 owners take
        // more room than a row gives, so some are in fief/b, and none is in both.
        let cells = try cells(store, inTablesStartingWith: "fief/b/")
        XCTAssertGreaterThan(cells, 0, "the shared dog's owners past its row's room")
        XCTAssertLessThan(cells, 100, "the shared dog keeps some owners in its row, the others none in fief/b")
        XCTAssertEqual(Set(shared.owners.map(\.id)), Set((0..<100).map(Int64.init)))
        XCTAssertEqual(shared.owners.count, 100)
        // A row written again (a longer name) keeps its backlinks.
        try ctx.write {
            for d in try ctx.objects(Dog.self).filter("name BEGINSWITH %@", "own").objects() { d.name += " renamed" }
        }
        for d in try ctx.objects(Dog.self).filter("name BEGINSWITH %@", "own").objects() {
            XCTAssertEqual(d.owners.map(\.id), [Int64(d.name.dropFirst(4).dropLast(8))!])
        }
        XCTAssertTrue(try store.check().isSound)
        XCTAssertEqual(try ctx.objects(Dog.self).filter("ANY owners.id == %@", Int64(7)).count, 2)

        // A person gone (its dogs cascading, the shared one too, by rule): every entry to it goes.
        try ctx.write {
            for i in stride(from: 1, to: 100, by: 3) {
                let p = try ctx.object(ofType: Person.self, forPrimaryKey: Int64(i))!
                p.dogs.remove(at: 1)
                if i % 10 == 0 { p.dogs.remove(at: 1) }
            }
            try ctx.delete(try ctx.object(ofType: Person.self, forPrimaryKey: Int64(0))!)
        }
        let report = try store.check()
        XCTAssertTrue(report.isSound, "\(report)")
        XCTAssertEqual(ctx.objects(Dog.self).count, 99, "person 0's own dog and the shared dog went with it")

        // Written back in format 1 and 2 (rows without backlinks) and converted again: the same
        // answers, checked clean each time.
        let answers = { (c: ObjectContext) in
            try c.objects(Dog.self).objects().map { "\($0.name) \($0.owners.map(\.id))" }
        }
        let before = try answers(ctx)
        for old in [Int64(1), 2] {
            try FormatConversion.downgrade(store.database, path: dir.file("zoo.fief"), to: old)
            XCTAssertEqual(try FormatConversion.format(store.database), old)
            let reopened = try openZoo(dir)
            XCTAssertEqual(try FormatConversion.format(reopened.database), FormatConversion.current)
            XCTAssertTrue(try reopened.check().isSound, "after format \(old)")
            XCTAssertEqual(try answers(reopened.context()), before, "after format \(old)")
        }
    }

    /// A write that found a dog's `fief/b` missing (a read of its owners, a dog's deletion)
    /// and then made it (a dog's owners outgrow its row) reads, changes and deletes through it
    /// in the same write: a class's plan remembers a missing table only while the catalog has
    /// not changed.
    func testAWriteThatMakesASideTableSeesItAfterFindingItMissing() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        try ctx.write {
            let shared = Dog()
            shared.name = "shared"
            let brief = Dog()
            let first = Person()
            first.id = 1000
            first.dogs.append(shared)
            first.dogs.append(brief)
            try ctx.add(first)
            XCTAssertEqual(shared.owners.count, 1, "fief/b asked for, and missing")
            try ctx.delete(brief)
            try addPersons(ctx) { _ in [shared] }
            // About 34 owners fit in the dog's row; the others are in the fief/b made meanwhile.
            XCTAssertEqual(shared.owners.count, 101)
            try ctx.object(ofType: Person.self, forPrimaryKey: Int64(99))!.dogs.removeAll()
            XCTAssertEqual(shared.owners.count, 100)
            try ctx.delete(shared)
        }
        XCTAssertEqual(try cells(store, inTablesStartingWith: "fief/b/"), 0, "every entry to the dog went")
        let report = try store.check()
        XCTAssertTrue(report.isSound, "\(report)")
        XCTAssertEqual(ctx.objects(Dog.self).count, 0)
        XCTAssertTrue(ctx.objects(Person.self).allSatisfy { $0.dogs.isEmpty })
    }

    /// Counts in a full row grow (one origin linking many times): an entry that no longer fits
    /// moves whole to fief/b, never kept in both places.
    func testAnEntryThatOutgrowsItsRowMovesWhole() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        let dog = Dog()
        dog.name = "popular"
        var persons: [Person] = []
        try ctx.write {
            for i in 0..<60 {
                let p = Person()
                p.id = Int64(i)
                p.dogs.append(dog)
                try ctx.add(p)
                persons.append(p)
            }
        }
        try ctx.write {
            for p in persons.prefix(12) {
                for _ in 0..<140 { p.dogs.append(dog) }
            }
        }
        let report = try store.check()
        XCTAssertTrue(report.isSound, "\(report)")
        let owners = dog.owners.map(\.id)
        XCTAssertEqual(owners.count, 60)
        XCTAssertEqual(Set(owners).count, 60, "each owner once")
        try ctx.write { try ctx.delete(persons[0]) }
        XCTAssertTrue(try store.check().isSound)
        XCTAssertEqual(ctx.objects(Dog.self).count, 0, "the cascade took the dog with its first owner")
    }

    /// A stored value of another kind than its property's is refused before anything is
    /// written: a compact row's serial says the kind, so it would misplace every later slot.
    func testAValueOfAnotherKindIsRefused() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        XCTAssertThrowsError(
            try ctx.write { try ctx.create(Person.self, value: ["id": Int64(1), "age": ObjectValue.double(1.5)]) }
        ) { error in
            guard case ObjectError.typeMismatch(_, let property, _, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(property, "age")
        }
        XCTAssertEqual(ctx.objects(Person.self).count, 0)
        XCTAssertTrue(try store.check().isSound)
    }

    /// `check()` reports an entry kept both in its target's row and in `fief/b` (and nothing else
    /// about it), and a `fief/b` key of the wrong size (by name, and as a stale backlink).
    func testCheckNamesBacklinksKeptTwiceAndMisshapenKeys() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        let shared = Dog()
        shared.name = "shared"
        try ctx.write { try addPersons(ctx) { _ in [shared] } }
        XCTAssertTrue(try store.check().isSound)
        try store.database.write { tx in
            let t = try XCTUnwrap(try tx.tableNames().first { $0.hasPrefix("fief/b/") })
            var inTable = Set<Int64>()
            var sample: [UInt8] = []
            try tx.scan(table: t) { k, _ in
                sample = Array(k)
                inTable.insert(KeyBytes.readObj(k, at: 16))
                return true
            }
            // An owner the shared dog's row keeps, copied into fief/b with the same count.
            let inRow = try XCTUnwrap((0..<100).map(Int64.init).first { !inTable.contains($0) })
            try tx.put(table: t, key: Array(sample.prefix(16)) + KeyBytes.obj(inRow), value: Int64(1).valueBytes)
            try tx.put(table: t, key: Array(sample.prefix(16)), value: Int64(1).valueBytes)
        }
        let report = try store.check()
        XCTAssertEqual(
            report.problems.sorted(),
            [
                "Dog: 1 backlinks are kept both in their target's row and in fief/b",
                "Dog: 1 fief/b keys are not 24 bytes",
                "Dog: backlinks are not the inverse of links (1 stale or wrong, 0 missing or wrong)"
            ],
            "\(report)")
    }

    /// Adds persons 0 to 99 in the current write, person `i` with the dogs `dogs(i)`, in order.
    private func addPersons(_ ctx: ObjectContext, dogs: (Int) -> [Dog]) throws {
        for i in 0..<100 {
            let p = Person()
            p.id = Int64(i)
            for d in dogs(i) { p.dogs.append(d) }
            try ctx.add(p)
        }
    }
}
