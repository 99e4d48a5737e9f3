import XCTest
import Foundation
import Engine
@testable import FiefObjects

/// `modificationsNew`: the modified objects' indices in the new results, exact when the
/// same commit also inserts at the front, deletes the last object or re-sorts one.
final class ModificationsNewTests: XCTestCase {
    func testModificationsNewAcrossInsertAtZeroDeleteLastAndResort() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let other = store.context()
        try other.write {
            for (id, age) in [(1, 10), (2, 20), (3, 30), (5, 50)] as [(Int64, Int)] {
                try other.create(Person.self, value: ["id": id, "name": "p\(id)", "age": age])
            }
        }
        let ctx = store.context()
        var sets: [CollectionChangeSet] = []
        var keys: [[Int64]] = []
        let token = ctx.objects(Person.self).sorted(byKeyPath: "age").observe { change in
            if let c = change.changeSet, case .update(let r, _, _, _) = change {
                sets.append(c)
                keys.append(try! r.keys())
            }
        }
        func person(_ id: Int64) throws -> Person { try other.object(ofType: Person.self, forPrimaryKey: id)! }
        func step(
            _ write: () throws -> Void, _ expected: CollectionChangeSet, _ newKeys: [Int64], _ what: String,
            line: UInt = #line
        ) throws {
            let before = try ctx.objects(Person.self).sorted(byKeyPath: "age").keys()
            sets = []; keys = []
            try other.write(write)
            try ctx.refresh()
            XCTAssertEqual(sets, [expected], what, line: line)
            XCTAssertEqual(keys, [newKeys], what, line: line)
            if let c = sets.first, let after = keys.first {
                XCTAssertEqual(
                    c.modifications.map { before[$0] }, c.modificationsNew.map { after[$0] },
                    "the same objects, old and new (\(what))", line: line)
            }
        }

        try step(
            {
                try other.create(Person.self, value: ["id": 4, "age": 5]); try person(3).name = "x"
            },
            CollectionChangeSet(deletions: [], insertions: [0], modifications: [2]), [4, 1, 2, 3, 5], "insert at 0")
        XCTAssertEqual(sets.first?.modificationsNew, [3])
        try step(
            {
                try other.delete(try person(5)); try person(2).name = "y"; try person(3).name = "z"
            },
            CollectionChangeSet(deletions: [4], insertions: [], modifications: [2, 3]), [4, 1, 2, 3], "delete last")
        XCTAssertEqual(sets.first?.modificationsNew, [2, 3])
        try step(
            {
                try other.delete(try person(3)); try other.create(Person.self, value: ["id": 6, "age": 1]);
                try person(2).name = "w"
            },
            CollectionChangeSet(deletions: [3], insertions: [0], modifications: [2]), [6, 4, 1, 2],
            "delete last and insert at 0")
        XCTAssertEqual(sets.first?.modificationsNew, [3])
        // Re-sort: 4 (age 5) moves behind 2 (age 20); 1 and 2 change in place around it.
        try step(
            {
                try person(4).age = 25; try person(1).name = "v"; try person(2).name = "u"
            },
            CollectionChangeSet(deletions: [1], insertions: [3], modifications: [2, 3]), [6, 1, 2, 4], "re-sort")
        XCTAssertEqual(sets.first?.modificationsNew, [1, 2])
        _ = token
    }

    /// The derivation on its own, where the answer is easy to see.
    func testDerivedPositions() {
        XCTAssertEqual(
            CollectionChangeSet(deletions: [0], insertions: [], modifications: [1, 2]).modificationsNew, [0, 1])
        XCTAssertEqual(CollectionChangeSet(deletions: [], insertions: [0, 1], modifications: [0]).modificationsNew, [2])
        XCTAssertEqual(
            CollectionChangeSet(deletions: [1], insertions: [1], modifications: [0, 2]).modificationsNew, [0, 2])
        XCTAssertEqual(
            CollectionChangeSet(deletions: [0, 1], insertions: [3], modifications: [2, 3, 4]).modificationsNew,
            [0, 1, 2])
        XCTAssertEqual(CollectionChangeSet(deletions: [], insertions: [], modifications: []).modificationsNew, [])
    }
}
