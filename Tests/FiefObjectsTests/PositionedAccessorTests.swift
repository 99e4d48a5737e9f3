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

    func testAnUnmanagedListDefaultIsMadeOnceAndKept() {
        let p = Person()
        let d = Dog()
        p.dogs.append(d)
        XCTAssertEqual(p.dogs.count, 1)
        XCTAssertTrue(p.dogs[0] === d)
    }
}
