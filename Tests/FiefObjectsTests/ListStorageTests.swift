import XCTest
import Engine
@testable import FiefObjects

/// A short list lives in its owner's row (no cell of its own); a long one in `fief/l` chunks.
/// A list that grows past the bound moves out, one that shrinks moves back in, and neither
/// leaves the other form behind.
final class ListStorageTests: XCTestCase {
    func testListsMoveBetweenTheRowAndChunksAsTheyGrowAndShrink() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        let p = Person()
        p.id = 1
        try ctx.write { try ctx.add(p) }
        var names: [String] = []
        for (size, inRow) in [
            (3, true), (RowCodec.maxInlineListCount + 8, false), (500, false), (2, true), (0, true), (40, false)
        ] {
            try ctx.write {
                while p.dogs.count > size { p.dogs.remove(at: p.dogs.count - 1) }
                while p.dogs.count < size {
                    let d = Dog()
                    d.name = "d\(p.dogs.count)"
                    p.dogs.append(d)
                }
            }
            names = Array(p.dogs.map(\.name))
            XCTAssertEqual(names, (0..<size).map { "d\($0)" }, "size \(size)")
            XCTAssertEqual(try ctx.objects(Person.self).filter("dogs.@count == %@", size).count, 1, "size \(size)")
            let n = try cells(store, inTablesStartingWith: "fief/l/")
            XCTAssertEqual(n == 0, inRow, "size \(size): \(n) chunks")
            let report = try store.check()
            XCTAssertTrue(report.isSound, "size \(size): \(report)")
            // Each dog's backlink to its owner follows the list, in the row or not.
            for d in p.dogs { XCTAssertEqual(d.owners.map(\.id), [1], "size \(size)") }
        }
        // A fresh read of the file gives the same list.
        let again = try openZoo(dir).context()
        XCTAssertEqual(try again.object(ofType: Person.self, forPrimaryKey: Int64(1))?.dogs.map(\.name), names)
    }
}
