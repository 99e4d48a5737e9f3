import XCTest
import Foundation
@testable import FiefObjects
@testable import Engine

/// Accessors keep their row's bytes between reads (a plain file's snapshot holds still):
/// these tests fail if a kept row outlives the version it came from.
final class PositionedAccessorTests: XCTestCase {
    private func people(_ n: Int64) -> [Person] {
        (1...n).map { i in
            let p = Person()
            p.id = i
            p.name = "p\(i)"
            p.age = Int(i)
            return p
        }
    }

    func testAccessorsReadTheirVersionAndTheNextAfterRefresh() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let writer = store.context()
        try writer.write { try writer.add(people(300)) }

        let reader = store.context()
        let iterated = Array(reader.objects(Person.self))
        let byKey = try XCTUnwrap(reader.object(ofType: Person.self, forPrimaryKey: Int64(7)))
        let filtered = Array(try reader.objects(Person.self).filter("age > %@", 290))
        XCTAssertEqual(iterated.map(\.age), (1...300).map { $0 })
        XCTAssertEqual(byKey.name, "p7")
        XCTAssertEqual(filtered.map(\.age), Array(291...300))
        XCTAssertNotNil(iterated[0].row(at: reader.stamp), "an accessor from a scan starts with its row")

        // Rewrite every row (new pages), delete some, add more: the reader's snapshot stays.
        try writer.write {
            for p in writer.objects(Person.self) { p.age += 1000; p.name += "x" }
            try writer.delete(try XCTUnwrap(writer.object(ofType: Person.self, forPrimaryKey: Int64(7))))
            try writer.add(
                (Int64(301)...2000).map { i -> Person in
                    let p = Person(); p.id = i; p.age = Int(i); return p
                })
        }
        XCTAssertEqual(iterated[10].age, 11, "before refresh the reader reads its own version")
        XCTAssertEqual(byKey.name, "p7")

        try reader.refresh()
        XCTAssertNil(iterated[0].row(at: reader.stamp), "a refresh drops every kept row")
        XCTAssertEqual(iterated[10].age, 1011)
        XCTAssertEqual(iterated[10].name, "p11x")
        XCTAssertEqual(filtered.last?.age, 1300)
        XCTAssertTrue(byKey.isInvalidated)
        XCTAssertThrowsError(try reader.throwingReads { _ = byKey.name }) { error in
            guard case ObjectError.objectDeleted = error else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(
            Array(reader.objects(Person.self)).reduce(0) { $0 + $1.age },
            (1...300).filter { $0 != 7 }.reduce(0) { $0 + $1 + 1000 } + (301...2000).reduce(0, +))
    }

    func testNoRowIsKeptInsideAWriteAndEncryptedRowsAreHeldBySnapshot() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        try ctx.write {
            try ctx.add(people(20))
            let p = try XCTUnwrap(ctx.object(ofType: Person.self, forPrimaryKey: Int64(3)))
            XCTAssertEqual(p.age, 3)
            XCTAssertNil(p.row(at: ctx.stamp), "a write's nodes change under it: no kept row")
            p.age = 33
            XCTAssertEqual(p.age, 33)
        }
        let key = (0..<64).map { UInt8($0) }
        let enc = try ObjectStore(Configuration(path: dir.file("enc.fief"), types: zooTypes, encryptionKey: key))
        let ectx = enc.context()
        try ectx.write { try ectx.add(people(20)) }
        let all = Array(ectx.objects(Person.self))
        XCTAssertEqual(all.map(\.age), Array(1...20))
        XCTAssertNotNil(all[0].row(at: ectx.stamp), "the snapshot holds the pages it decrypted")
        DecryptedPageCache.shared.removeAll()  // the cache drops its pages; the snapshot keeps its own
        XCTAssertEqual(all.map(\.name), (1...20).map { "p\($0)" })
        try ectx.write { for p in ectx.objects(Person.self) { p.age *= 2 } }
        XCTAssertEqual(all.map(\.age), (1...20).map { $0 * 2 })
    }

    func testAWriteKeepsRowsOfClustersItHasNotDecodedAndDropsThemOnAnyChange() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        try ctx.write { try ctx.add(people(300)) }
        try ctx.write {
            let far = Person()
            far.id = 1_000_000
            try ctx.add(far)  // its cluster now lives in memory
            let p = try XCTUnwrap(ctx.object(ofType: Person.self, forPrimaryKey: Int64(7)))
            XCTAssertNotNil(p.row(at: ctx.rowStamp), "a row from the tree is kept while other clusters are in memory")
            XCTAssertEqual(p.age, 7)
            p.age = 70
            XCTAssertNil(p.row(at: ctx.rowStamp), "any change drops it")
            XCTAssertEqual(p.age, 70)
            p.age = 0  // no bytes for a zero: its row is encoded again, its cluster decoded
            XCTAssertEqual(p.age, 0)
            let q = try XCTUnwrap(ctx.object(ofType: Person.self, forPrimaryKey: Int64(1_000_000)))
            XCTAssertNil(q.row(at: ctx.rowStamp), "a row of a cluster in memory is not kept")
            XCTAssertEqual(q.id, 1_000_000)
            let r = try XCTUnwrap(ctx.object(ofType: Person.self, forPrimaryKey: Int64(6)))
            XCTAssertNil(r.row(at: ctx.rowStamp), "person 6 shares person 7's cluster, now in memory")
            XCTAssertEqual(r.age, 6)
        }
        XCTAssertEqual(try ctx.object(ofType: Person.self, forPrimaryKey: Int64(7))?.age, 0)
    }

    func testAnIterationReusesAnAccessorOnlyWhenNobodyKeptItAndTheClassHoldsNoOtherState() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        try ctx.write {
            for i in 1...50 {
                let d = Dog()
                d.name = "d\(i)"
                d.age = i
                try ctx.add(d)
            }
            try ctx.add(people(50))
        }
        XCTAssertTrue(ModelInfo.of(Dog.self).accessorsReusable)
        XCTAssertFalse(ModelInfo.of(Person.self).accessorsReusable, "Person keeps `scratch`, not persisted")

        var seen = Set<ObjectIdentifier>(), ages: [Int] = [], names: [String] = []
        for d in ctx.objects(Dog.self) {
            seen.insert(ObjectIdentifier(d))
            ages.append(d.age)
            names.append(d.name)
        }
        XCTAssertEqual(seen.count, 1, "an accessor nobody kept is the next object's")
        XCTAssertEqual(ages, Array(1...50))
        XCTAssertEqual(names, (1...50).map { "d\($0)" })

        var kept: [Dog] = []
        for d in ctx.objects(Dog.self) where d.age % 2 == 0 { kept.append(d) }
        XCTAssertEqual(Set(kept.map(ObjectIdentifier.init)).count, 25, "a kept accessor is never reused")
        XCTAssertEqual(kept.map(\.age), (1...25).map { $0 * 2 })
        XCTAssertEqual(kept.map(\.name), (1...25).map { "d\($0 * 2)" })

        var scratches: [String] = []
        for p in ctx.objects(Person.self) {
            scratches.append(p.scratch)
            p.scratch = "set on \(p.id)"
        }
        XCTAssertEqual(Set(scratches), ["not persisted"], "a class with state of its own gets fresh accessors")

        // Inside a write (no kept rows): the reused accessor reads and writes its current object.
        try ctx.write { for d in ctx.objects(Dog.self) { d.age += 100 } }
        XCTAssertEqual(ctx.objects(Dog.self).map(\.age), (101...150).map { $0 })
    }

    func testAnUnmanagedListDefaultIsMadeOnceAndKept() {
        let p = Person()
        let d = Dog()
        p.dogs.append(d)
        XCTAssertEqual(p.dogs.count, 1)
        XCTAssertTrue(p.dogs[0] === d)
    }

    func testIteratedListsAndLinkingObjectsHandOutObjectsWithTheirRowsOfTheirVersion() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let writer = store.context()
        try writer.write {
            let owners = people(3)
            for (i, name) in ["rex", "fido", "bo", "max"].enumerated() {
                let d = Dog()
                d.name = name
                d.age = i
                owners[0].dogs.append(d)
                if i % 2 == 0 { owners[1].dogs.append(d) }
            }
            try writer.add(owners)
        }
        let reader = store.context()
        let p = try XCTUnwrap(reader.object(ofType: Person.self, forPrimaryKey: Int64(1)))
        var seen: [String] = []
        for d in p.dogs {
            XCTAssertNotNil(d.row(at: reader.rowStamp), "a list's object comes with its row")
            seen.append(d.name)
            for o in d.owners {
                XCTAssertNotNil(o.row(at: reader.rowStamp), "a linking object comes with its row")
                seen.append(o.name)
            }
        }
        XCTAssertEqual(seen, ["rex", "p1", "p2", "fido", "p1", "bo", "p1", "p2", "max", "p1"])

        // Moved on in the middle of an iteration: the rest comes without the old rows and
        // reads the new version.
        var iterator = p.dogs.makeIterator()
        XCTAssertEqual(iterator.next()?.name, "rex")
        try writer.write {
            for d in writer.objects(Dog.self) { d.name += "!" }
            writer.objects(Person.self).first { $0.id == 2 }?.name = "two"
        }
        try reader.refresh()
        let fido = try XCTUnwrap(iterator.next())
        XCTAssertNil(fido.row(at: reader.rowStamp))
        XCTAssertEqual(fido.name, "fido!")
        XCTAssertEqual(p.dogs.map(\.name), ["rex!", "fido!", "bo!", "max!"])
        XCTAssertEqual(p.dogs[0].owners.map(\.name), ["p1", "two"])

        // Inside a write, an iteration walks the list as it began: deleting its objects on the
        // way ends neither early nor past its end.
        try writer.write {
            let q = try XCTUnwrap(writer.object(ofType: Person.self, forPrimaryKey: Int64(1)))
            var deleted: [String] = []
            for d in q.dogs {
                XCTAssertNil(d.row(at: writer.rowStamp), "a write's rows are not kept")
                deleted.append(d.name)
                try writer.delete(d)
            }
            XCTAssertEqual(deleted, ["rex!", "fido!", "bo!", "max!"])
            XCTAssertEqual(q.dogs.count, 0)
        }
        XCTAssertEqual(writer.objects(Dog.self).count, 0)
    }
}
