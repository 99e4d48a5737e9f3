import XCTest
@testable import FiefObjects

/// New objects added with the object that links to them hold its backlink entry from their
/// first row (`PreLinks`): the answers and `check()` are what adding the entries afterwards
/// gave, and an origin that fails after its targets were written takes its entries back.
final class PreLinkTests: XCTestCase {
    func testNewTargetsHoldTheirOriginsEntryFromTheirFirstRow() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        let twice = Dog(), shared = Dog()
        twice.name = "twice"
        shared.name = "shared"
        try ctx.write {
            for i in 0..<3 {
                let p = Person()
                p.id = Int64(i)
                let own = Dog()
                own.name = "own \(i)"
                p.dogs.append(own)
                p.dogs.append(shared)
                if i == 1 { p.dogs.append(objectsIn: [twice, twice]) }
                try ctx.add(p)
            }
            let c = Car()
            c.plate = "C"
            let owner = Person()
            owner.id = 10
            c.owner = owner
            try ctx.add(c)
        }
        let report = try store.check()
        XCTAssertTrue(report.isSound, "\(report)")
        XCTAssertEqual(try cells(store, inTablesStartingWith: "fief/b/"), 0, "every entry in its target's row")
        XCTAssertEqual(Set(shared.owners.map(\.id)), [0, 1, 2])
        XCTAssertEqual(twice.owners.map(\.id), [1])
        for d in try ctx.objects(Dog.self).filter("name BEGINSWITH %@", "own").objects() {
            XCTAssertEqual(d.owners.map(\.id), [Int64(d.name.dropFirst(4))!])
        }
        XCTAssertEqual(try ctx.object(ofType: Person.self, forPrimaryKey: Int64(10))?.ownedCars.map(\.plate), ["C"])
        // A list holding its new dog twice, then once: the entry counts both, then one.
        try ctx.write { try ctx.object(ofType: Person.self, forPrimaryKey: Int64(1))!.dogs.remove(at: 3) }
        XCTAssertEqual(twice.owners.map(\.id), [1])
        try ctx.write { try ctx.object(ofType: Person.self, forPrimaryKey: Int64(1))!.dogs.remove(at: 2) }
        XCTAssertEqual(twice.owners.count, 0)
        XCTAssertTrue(try store.check().isSound)
    }

    /// A car whose new owner's new car has the same plate: the owner and its car are written,
    /// then the first car fails on its duplicate plate. The owner's row held an entry for that
    /// car; caught and committed, the file must not keep it.
    func testAnOriginThatFailsTakesItsEntriesBack() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        try ctx.write {
            let first = Car(), second = Car(), owner = Person()
            first.plate = "same"
            second.plate = "same"
            owner.id = 7
            owner.car = second
            first.owner = owner
            XCTAssertThrowsError(try ctx.add(first)) { error in
                guard case ObjectError.duplicatePrimaryKey = error else { return XCTFail("\(error)") }
            }
            // At once, not only when the write ends: a later add in this write reads the row.
            let t = try ctx.tables()
            XCTAssertEqual(try t.rowBacklinks(try t.cls("Person"), 7).count, 0)
        }
        let report = try store.check()
        XCTAssertTrue(report.isSound, "\(report)")
        let owner = try XCTUnwrap(try ctx.object(ofType: Person.self, forPrimaryKey: Int64(7)))
        XCTAssertEqual(owner.ownedCars.count, 0, "the car that failed never linked to it")
        XCTAssertEqual(owner.car?.plate, "same")
        XCTAssertEqual(ctx.objects(Car.self).count, 1)
    }
}
