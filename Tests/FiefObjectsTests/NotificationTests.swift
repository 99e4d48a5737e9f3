import XCTest
import Foundation
import Engine
import SeededRandomness
@testable import FiefObjects

/// Results and object notifications: delivered on `refresh()` (and after the context's own
/// writes), computed from the engine's diff, coalesced, never inside a write.
final class NotificationTests: XCTestCase {
    /// A recorded delivery, comparable.
    enum Seen: Equatable {
        case initial([Int64])
        case update(deletions: [Int], insertions: [Int], modifications: [Int], keys: [Int64])
        case error
    }

    private func record(_ results: Results<Person>, into log: Locked<[Seen]>) -> NotificationToken {
        results.observe { change in
            switch change {
            case .initial(let r): log.withLock { $0.append(.initial(try! r.keys())) }
            case .update(let r, let d, let i, let m):
                log.withLock { $0.append(.update(deletions: d, insertions: i, modifications: m, keys: try! r.keys())) }
            case .error: log.withLock { $0.append(.error) }
            }
        }
    }

    private func people(_ store: ObjectStore, _ ages: [(Int64, Int)]) throws {
        let w = store.context()
        try w.write {
            for (id, age) in ages { try w.create(Person.self, value: ["id": id, "name": "p\(id)", "age": age]) }
        }
    }

    func testDeterministicCases() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        try people(store, [(1, 10), (2, 20), (3, 30)])
        let ctx = store.context(), other = store.context()
        let log = Locked<[Seen]>([])
        let token = record(ctx.objects(Person.self).sorted(byKeyPath: "age"), into: log)
        XCTAssertEqual(log.withLock { $0 }, [.initial([1, 2, 3])], "initial at once, outside a write")

        func step(_ write: () throws -> Void, _ expected: Seen, _ what: String, line: UInt = #line) throws {
            log.withLock { $0 = [] }
            try other.write(write)
            XCTAssertEqual(log.withLock { $0 }, [], "nothing before refresh (\(what))", line: line)
            try ctx.refresh()
            XCTAssertEqual(log.withLock { $0 }, [expected], what, line: line)
        }
        func person(_ id: Int64) throws -> Person { try other.object(ofType: Person.self, forPrimaryKey: id)! }

        try step(
            { try other.create(Person.self, value: ["id": 4, "age": 5]) },
            .update(deletions: [], insertions: [0], modifications: [], keys: [4, 1, 2, 3]), "insert at 0")
        try step(
            { try other.delete(try person(3)) },
            .update(deletions: [3], insertions: [], modifications: [], keys: [4, 1, 2]), "delete last")
        try step(
            { try person(2).name = "renamed" },
            .update(deletions: [], insertions: [], modifications: [2], keys: [4, 1, 2]),
            "a modification in place, old index")
        try step(
            { try person(4).age = 15 },
            .update(deletions: [0], insertions: [1], modifications: [], keys: [1, 4, 2]),
            "re-sort: a move is a deletion and an insertion")
        try step(
            { try person(1).dogs.append(Dog()) },
            .update(deletions: [], insertions: [], modifications: [0], keys: [1, 4, 2]),
            "a list change modifies its owner")

        // Two commits, one refresh: one delivery covering both.
        log.withLock { $0 = [] }
        try other.write { try other.create(Person.self, value: ["id": 9, "age": 99]) }
        try other.write {
            try person(1).name = "again"; try other.delete(try person(2))
        }
        try ctx.refresh()
        XCTAssertEqual(
            log.withLock { $0 }, [.update(deletions: [2], insertions: [2], modifications: [0], keys: [1, 4, 9])],
            "coalesced")

        // A commit that does not touch Person delivers nothing.
        log.withLock { $0 = [] }
        try other.write { try other.create(Car.self, value: ["plate": "X"]) }
        try ctx.refresh()
        XCTAssertEqual(log.withLock { $0 }, [])

        token.invalidate()
        try other.write { try other.create(Person.self, value: ["id": 10, "age": 1]) }
        try ctx.refresh()
        XCTAssertEqual(log.withLock { $0 }, [], "nothing after invalidate()")
    }

    /// The context's own write: nothing inside the write; one delivery after it commits.
    /// A registration inside a write gets its initial delivery once the write has committed.
    func testOwnWritesDeliverAfterCommitNeverInside() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        let log = Locked<[Seen]>([])
        let token = record(ctx.objects(Person.self).sorted(byKeyPath: "id"), into: log)
        let late = Locked<[Seen]>([])
        var lateToken: NotificationToken?
        try ctx.write {
            try ctx.create(Person.self, value: ["id": 1])
            lateToken = record(ctx.objects(Person.self).sorted(byKeyPath: "id"), into: late)
            try ctx.create(Person.self, value: ["id": 2])
            XCTAssertEqual(log.withLock { $0 }, [.initial([])], "nothing delivered inside the write")
            XCTAssertEqual(late.withLock { $0 }, [])
        }
        XCTAssertEqual(
            log.withLock { $0 },
            [.initial([]), .update(deletions: [], insertions: [0, 1], modifications: [], keys: [1, 2])])
        XCTAssertEqual(
            late.withLock { $0 }, [.initial([1, 2])], "registered in the write: initial at the committed version")
        // A write inside a callback runs after the round of deliveries, and is delivered too.
        let chained = ctx.objects(Person.self).observe { change in
            if case .update(let r, _, _, _) = change, r.count == 3 {
                try! ctx.write { try ctx.create(Person.self, value: ["id": 4]) }
            }
        }
        try ctx.write { try ctx.create(Person.self, value: ["id": 3]) }
        XCTAssertEqual(
            log.withLock { $0 }.last, .update(deletions: [], insertions: [3], modifications: [], keys: [1, 2, 3, 4]))
        XCTAssertEqual(
            log.withLock { $0 }.count, 4, "initial, two writes, then the callback's write: each delivered once")
        _ = (token, lateToken, chained)
    }

    func testObjectNotifications() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        try people(store, [(1, 10)])
        let ctx = store.context(), other = store.context()
        let ann = try ctx.object(ofType: Person.self, forPrimaryKey: 1)!
        var seen: [String] = []
        let token = ann.observe { change in
            switch change {
            case .change(let p, let props):
                seen.append(
                    "change \(p.id): "
                        + props.map {
                            "\($0.name) \($0.oldValue.map { "\($0)" } ?? "nil")"
                                + "->\($0.newValue.map { "\($0)" } ?? "nil")"
                        }.joined(separator: ", "))
            case .deleted: seen.append("deleted")
            case .error(let e): seen.append("error \(e)")
            }
        }
        let annThere = try other.object(ofType: Person.self, forPrimaryKey: 1)!
        try other.write {
            annThere.name = "Ann"; annThere.age = 11
        }
        try other.write { try other.create(Person.self, value: ["id": 2]) }  // another object: silence
        try ctx.refresh()
        try ctx.refresh()
        XCTAssertEqual(seen, ["change 1: name p1->Ann, age 10->11"])
        try other.write { annThere.dogs.append(Dog()) }
        try ctx.refresh()
        XCTAssertEqual(seen.count, 2)
        XCTAssertTrue(seen[1].hasPrefix("change 1: dogs"), seen[1])
        try other.write { try other.delete(annThere) }
        try ctx.refresh()
        try other.write { try other.create(Person.self, value: ["id": 1]) }
        try ctx.refresh()
        XCTAssertEqual(seen.last, "deleted")
        XCTAssertEqual(seen.count, 3, "nothing after .deleted")
        _ = token

        try other.write { try other.delete(try other.object(ofType: Person.self, forPrimaryKey: 1)!) }
        try ctx.refresh()
        var errors: [String] = []
        _ = Person().observe { if case .error(let e) = $0 { errors.append("\(e)") } }
        _ = ann.observe { if case .error(let e) = $0 { errors.append("\(e)") } }
        XCTAssertEqual(errors.count, 2, "unmanaged and deleted objects get .error at once")
    }

    /// Deliveries tile the versions: an observer's base version is pinned on its own, so a
    /// context that `invalidate()`s and later reads again still hears of everything between.
    func testInvalidateSkipsNoChange() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        try people(store, [(1, 10), (2, 20)])
        let ctx = store.context(), other = store.context()
        let log = Locked<[Seen]>([])
        let token = record(ctx.objects(Person.self).sorted(byKeyPath: "age"), into: log)
        ctx.invalidate()
        try other.write { try other.delete(try other.object(ofType: Person.self, forPrimaryKey: Int64(1))!) }
        XCTAssertEqual(ctx.objects(Person.self).count, 1, "reading again starts at the newest version")
        try other.write { try other.create(Person.self, value: ["id": 3, "age": 30]) }
        try ctx.refresh()
        XCTAssertEqual(
            log.withLock { $0 },
            [.initial([1, 2]), .update(deletions: [0], insertions: [1], modifications: [], keys: [2, 3])])
        _ = token
    }

    /// Myers' common subsequence on arrays with repeats: a common subsequence, as long as the
    /// dynamic-programming LCS, and its change set replays.
    func testListDiffOnArraysWithRepeats() {
        var rng = SeededRandom(seed: testSeed("list diff", default: 11))
        for _ in 0..<1500 {
            let a = (0..<Int.random(in: 0..<14, using: &rng)).map { _ in Int.random(in: 0..<4, using: &rng) }
            let b = (0..<Int.random(in: 0..<14, using: &rng)).map { _ in Int.random(in: 0..<4, using: &rng) }
            let pairs = CollectionChange.commonPairs(a, b)
            XCTAssertTrue(pairs.allSatisfy { a[$0.0] == b[$0.1] })
            XCTAssertTrue(zip(pairs, pairs.dropFirst()).allSatisfy { $0.0 < $1.0 && $0.1 < $1.1 })
            var lcs = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
            for i in 0..<a.count {
                for j in 0..<b.count {
                    lcs[i + 1][j + 1] = a[i] == b[j] ? lcs[i][j] + 1 : max(lcs[i][j + 1], lcs[i + 1][j])
                }
            }
            XCTAssertEqual(pairs.count, lcs[a.count][b.count], "\(a) \(b)")
            let c = CollectionChange(oldValues: a, newValues: b) { _ in false }
            var replay = a
            for i in c.deletions.reversed() { replay.remove(at: i) }
            for i in c.insertions { replay.insert(b[i], at: i) }
            XCTAssertEqual(replay, b)
        }
    }

    func testListNotifications() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context(), other = store.context()
        try other.write {
            try other.create(Person.self, value: ["id": 1, "dogs": [["name": "a"], ["name": "b"], ["name": "c"]]])
        }
        try ctx.refresh()
        let ann = try ctx.object(ofType: Person.self, forPrimaryKey: 1)!
        var seen: [String] = []
        let token = ann.dogs.observe { change in
            switch change {
            case .initial(let l): seen.append("initial \(l.map(\.name))")
            case .update(_, let d, let i, let m): seen.append("\(d) \(i) \(m)")
            case .error(let e): seen.append("error \(e)")
            }
        }
        let there = try other.object(ofType: Person.self, forPrimaryKey: 1)!
        try other.write { there.dogs.append(Dog()) }
        try ctx.refresh()
        try other.write { there.dogs.remove(at: 0) }
        try ctx.refresh()
        try other.write { there.dogs.move(from: 2, to: 0) }  // [b, c, new] -> [new, b, c]
        try ctx.refresh()
        try other.write { there.dogs[1].age = 7 }  // b
        try ctx.refresh()
        try other.write { there.age = 3 }  // the owner, not the list
        try ctx.refresh()
        try other.write { try other.delete(there) }  // cascades to the dogs
        try ctx.refresh()
        try other.write { try other.create(Person.self, value: ["id": 2]) }
        try ctx.refresh()
        XCTAssertEqual(
            seen,
            ["initial [\"a\", \"b\", \"c\"]", "[] [3] []", "[0] [] []", "[2] [0] []", "[] [] [1]", "[0, 1, 2] [] []"])
        _ = token
        var errors = 0
        _ = List<Dog>().observe { if case .error = $0 { errors += 1 } }
        XCTAssertEqual(errors, 1, "an unmanaged list cannot be observed")
    }

    /// `keyPaths:` narrows modifications to the listed properties (and objects reached along
    /// dotted paths); insertions and deletions always count.
    func testKeyPathsNarrowModifications() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context(), other = store.context()
        try other.write {
            let car = try other.create(Car.self, value: ["plate": "A", "model": "m"])
            try other.create(Person.self, value: ["id": 1, "name": "a", "age": 1, "car": car])
            try other.create(Person.self, value: ["id": 2, "name": "b", "age": 2])
        }
        var ages: [String] = [], cars: [String] = [], objectAges: [String] = []
        let byAge = ctx.objects(Person.self).sorted(byKeyPath: "id").observe(keyPaths: ["age"]) { change in
            if case .update(_, let d, let i, let m) = change { ages.append("\(d) \(i) \(m)") }
        }
        let byCar = ctx.objects(Person.self).sorted(byKeyPath: "id").observe(keyPaths: ["car.model"]) { change in
            if case .update(_, let d, let i, let m) = change { cars.append("\(d) \(i) \(m)") }
        }
        let one = try ctx.object(ofType: Person.self, forPrimaryKey: 1)!
        let oneAge = one.observe(keyPaths: ["age"]) { change in
            if case .change(_, let props) = change { objectAges.append(props.map(\.name).joined(separator: ",")) }
        }
        func person(_ id: Int64) throws -> Person { try other.object(ofType: Person.self, forPrimaryKey: id)! }
        try other.write { try person(1).name = "renamed" }  // no listed property
        try ctx.refresh()
        try other.write {
            try person(2).age = 20; try person(1).age = 10; try person(1).name = "again"
        }
        try ctx.refresh()
        try other.write { try other.object(ofType: Car.self, forPrimaryKey: "A")!.model = "n" }
        try ctx.refresh()
        try other.write { try other.create(Person.self, value: ["id": 3]) }
        try ctx.refresh()
        XCTAssertEqual(ages, ["[] [] [0, 1]", "[] [2] []"])
        XCTAssertEqual(cars, ["[] [] [0]", "[] [2] []"], "the car (a dotted path) and the insertion")
        XCTAssertEqual(objectAges, ["age"], "only the listed property, only when it changed")
        _ = (byAge, byCar, oneAge)
    }

    func testLinkingObjectsNotifications() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context(), other = store.context()
        try other.write {
            let rex = try other.create(Dog.self, value: ["name": "Rex"])
            try other.create(Person.self, value: ["id": 1, "dogs": [rex]])
            try other.create(Person.self, value: ["id": 2])
        }
        try ctx.refresh()
        let rex = ctx.objects(Dog.self).first!
        var seen: [String] = []
        let token = rex.owners.observe { change in
            switch change {
            case .initial(let r): seen.append("initial \(r.map(\.id))")
            case .update(let r, let d, let i, let m): seen.append("\(d) \(i) \(m) \(r.map(\.id))")
            case .error(let e): seen.append("error \(e)")
            }
        }
        let rexThere = other.objects(Dog.self).first!
        try other.write { try other.object(ofType: Person.self, forPrimaryKey: Int64(2))!.dogs.append(rexThere) }
        try ctx.refresh()
        try other.write { try other.object(ofType: Person.self, forPrimaryKey: Int64(1))!.age = 5 }
        try ctx.refresh()
        try other.write { try other.object(ofType: Person.self, forPrimaryKey: Int64(1))!.dogs.removeAll() }
        try ctx.refresh()
        XCTAssertEqual(seen, ["initial [1]", "[] [1] [] [1, 2]", "[] [] [0] [1, 2]", "[0] [] [] [2]"])
        _ = token
    }

    /// A query through a link: a change to the linked object modifies the results' object.
    func testModificationsThroughLinks() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context(), other = store.context()
        try other.write {
            let ann = try other.create(Person.self, value: ["id": 1, "name": "Ann", "age": 30])
            let bob = try other.create(Person.self, value: ["id": 2, "name": "Bob", "age": 40])
            try other.create(Person.self, value: ["id": 3, "name": "Cy", "age": 50])
            try other.create(Car.self, value: ["plate": "A", "owner": ann])
            try other.create(Car.self, value: ["plate": "B", "owner": bob])
            try other.create(Car.self, value: ["plate": "C"])
        }
        var seen: [String] = []
        let token = try ctx.objects(Car.self).filter("owner.age > 0").sorted(byKeyPath: "plate").observe { change in
            if case .update(_, let d, let i, let m) = change { seen.append("\(d) \(i) \(m)") }
        }
        func person(_ id: Int64) throws -> Person { try other.object(ofType: Person.self, forPrimaryKey: id)! }
        try other.write { try person(1).name = "Anne" }
        try ctx.refresh()
        try other.write { try person(2).age = 41 }
        try ctx.refresh()
        try other.write { try person(3).age = 51 }  // owns no car
        try ctx.refresh()
        try other.write { try person(1).age = 0 }  // Ann's car leaves the results
        try ctx.refresh()
        XCTAssertEqual(seen, ["[] [] [0]", "[] [] [1]", "[0] [] []"])
        _ = token
    }

    /// The change set alone, on random edits of a key array: replaying it gives the new array,
    /// moves are as few as the longest kept run allows, modifications are the kept and changed.
    func testCollectionChangeReplaysRandomEdits() {
        var rng = SeededRandom(seed: testSeed("collection change", default: 7))
        for _ in 0..<2000 {
            let old = Array(
                Set((0..<Int.random(in: 0..<30, using: &rng)).map { _ in Int64.random(in: 0..<60, using: &rng) })
            ).shuffled(using: &rng)
            var new = old
            for _ in 0..<Int.random(in: 0..<4, using: &rng) {
                switch Int.random(in: 0..<3, using: &rng) {
                case 0 where !new.isEmpty: new.remove(at: Int.random(in: 0..<new.count, using: &rng))
                case 1:
                    let k = Int64.random(in: 60..<90, using: &rng)
                    if !new.contains(k) { new.insert(k, at: Int.random(in: 0...new.count, using: &rng)) }
                case 2 where !new.isEmpty:
                    let k = new.remove(at: Int.random(in: 0..<new.count, using: &rng))
                    new.insert(k, at: Int.random(in: 0...new.count, using: &rng))
                default: break
                }
            }
            let modified = Set(old.filter { _ in Int.random(in: 0..<4, using: &rng) == 0 })
            let c = CollectionChange(old: old, new: new, modified: modified)
            var replay = old
            for i in c.deletions.reversed() { replay.remove(at: i) }
            for i in c.insertions { replay.insert(new[i], at: i) }
            XCTAssertEqual(replay, new, "\(old) -> \(new): \(c)")
            let removed = Set(c.deletions.map { old[$0] })
            XCTAssertEqual(Set(c.modifications.map { old[$0] }), modified.intersection(new).subtracting(removed))
            XCTAssertEqual(c.modifications.map { old[$0] }, c.modificationsNew.map { new[$0] })
            XCTAssertEqual(
                CollectionChangeSet(deletions: c.deletions, insertions: c.insertions, modifications: c.modifications)
                    .modificationsNew,
                c.modificationsNew, "the public set derives the positions the diff found: \(old) -> \(new)")
            // Kept in place: a longest run of common keys whose order held.
            let common = old.filter { new.contains($0) }
            let kept = common.count - c.deletions.filter { new.contains(old[$0]) }.count
            XCTAssertEqual(kept, CollectionChange.longestIncreasingRun(common.map { new.firstIndex(of: $0)! }).count)
        }
        XCTAssertEqual(
            CollectionChange(old: [1, 2, 3], new: [2, 1, 3], modified: [3]),
            CollectionChange(deletions: [0], insertions: [1], modifications: [2], modificationsNew: [2]))
    }

    /// The one-walk path (only touched keys may move): the change replays old into new, and
    /// modifications are the modified keys that stayed, in either array's order.
    func testTheWalkOverTouchedKeysReplaysRandomEdits() {
        var rng = SeededRandom(seed: testSeed("collection walk", default: 11))
        for round in 0..<2000 {
            // Every tenth result longer than a few of the blocks the walk compares at once.
            let (size, span) = round % 10 == 0 ? (700, Int64(1000)) : (40, Int64(80))
            let old = Array(
                Set((0..<Int.random(in: 0..<size, using: &rng)).map { _ in Int64.random(in: 0..<span, using: &rng) })
            ).shuffled(using: &rng)
            var new = old
            var moved = Set<Int64>()
            for _ in 0..<Int.random(in: 0..<5, using: &rng) {
                switch Int.random(in: 0..<3, using: &rng) {
                case 0 where !new.isEmpty: new.remove(at: Int.random(in: 0..<new.count, using: &rng))
                case 1:
                    let k = Int64.random(in: span..<(span + 40), using: &rng)
                    if !new.contains(k) { new.insert(k, at: Int.random(in: 0...new.count, using: &rng)) }
                case 2 where !new.isEmpty:
                    let k = new.remove(at: Int.random(in: 0..<new.count, using: &rng))
                    new.insert(k, at: Int.random(in: 0...new.count, using: &rng))
                    moved.insert(k)
                default: break
                }
            }
            let modified = Set(old.filter { _ in Int.random(in: 0..<5, using: &rng) == 0 }).union(
                moved.intersection(old))
            let touched = Set(old).symmetricDifference(Set(new)).union(modified)
            let c = CollectionChange(old: old, new: new, modified: modified, touched: touched)
            var replay = old
            for i in c.deletions.reversed() { replay.remove(at: i) }
            for i in c.insertions { replay.insert(new[i], at: i) }
            XCTAssertEqual(replay, new, "\(old) -> \(new): \(c)")
            let removed = Set(c.deletions.map { old[$0] })
            XCTAssertEqual(Set(c.modifications.map { old[$0] }), modified.intersection(new).subtracting(removed))
            XCTAssertEqual(c.modifications.map { old[$0] }, c.modificationsNew.map { new[$0] })
            XCTAssertEqual(
                CollectionChangeSet(deletions: c.deletions, insertions: c.insertions, modifications: c.modifications)
                    .modificationsNew,
                c.modificationsNew, "the public set derives the positions the diff found: \(old) -> \(new)")
            XCTAssertTrue(
                c.deletions.allSatisfy { touched.contains(old[$0]) }
                    && c.insertions.allSatisfy { touched.contains(new[$0]) }, "only touched keys move")
        }
        // An untouched key out of place: the walk gives up and the full comparison answers.
        XCTAssertEqual(
            CollectionChange(old: [1, 2, 3], new: [2, 1, 3], modified: [], touched: []),
            CollectionChange(deletions: [0], insertions: [1]))
    }

    /// The touched keys every result key is checked against: their mask, their halving search
    /// and (past 64 keys) their set answer as a set would, members and others alike.
    func testFewKeysAnswerAsASet() {
        var rng = SeededRandom(seed: testSeed("few keys", default: 12))
        for round in 0..<300 {
            let span = [Int64(100), 1 << 20, Int64.max][round % 3]
            let keys = Set(
                (0..<Int.random(in: 0...(round % 2 == 0 ? 5 : 200), using: &rng)).map { _ in
                    Int64.random(in: -span...span, using: &rng)
                })
            let few = FewKeys(keys)
            XCTAssertEqual(few.isEmpty, keys.isEmpty)
            for k in keys { XCTAssertTrue(few.contains(k), "round \(round): \(k) is among the keys") }
            // Where they are in a longer array: the blocks asked at once, and the key by key search.
            let array = (0..<Int.random(in: 0...300, using: &rng)).map { _ in
                Int.random(in: 0..<4, using: &rng) == 0 && !keys.isEmpty
                    ? keys.randomElement(using: &rng)! : Int64.random(in: -span...span, using: &rng)
            }
            XCTAssertEqual(
                array.withUnsafeBufferPointer { few.positions(in: $0) },
                array.indices.filter { keys.contains(array[$0]) },
                "round \(round)")
            for _ in 0..<500 {
                let k = Int64.random(in: -span...span, using: &rng)
                XCTAssertEqual(few.contains(k), keys.contains(k), "round \(round): \(k)")
            }
        }
    }

    /// Random writes from another context; after each refresh, applying the delivered change
    /// set to the previous keys gives the new keys (equal to a fresh run of the query), and
    /// `modifications` are exactly the kept objects whose stored values changed. Small
    /// populations take the full re-run, large ones with few changes the incremental update;
    /// a predicate through a link sees changes of the linked class.
    func testChangeSetsReplayToTheNewResults() throws {
        let queries: [(String, Int64, Bool, (ObjectContext) throws -> Results<Person>)] = [
            (
                "filter+sort, small", 40, false,
                { try $0.objects(Person.self).filter("age >= 20").sorted(byKeyPath: "age").sorted(byKeyPath: "name") }
            ),
            (
                "filter+sort, large", 2000, false,
                {
                    try $0.objects(Person.self).filter("age >= 20").sorted(byKeyPath: "age", ascending: false).sorted(
                        byKeyPath: "name")
                }
            ),
            ("key order, large", 2000, false, { try $0.objects(Person.self).filter("age < 30") }),
            (
                "through a link", 300, true,
                { try $0.objects(Person.self).filter("car.model == 'm1' OR age > 50").sorted(byKeyPath: "age") }
            )
        ]
        for (name, population, followsLinks, query) in queries { try replay(name, population, followsLinks, query) }
    }

    /// `followsLinks`: the query reads the person's car, so a changed car modifies its people.
    private func replay(
        _ name: String, _ population: Int64, _ followsLinks: Bool, _ query: (ObjectContext) throws -> Results<Person>
    ) throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        var rng = SeededRandom(seed: testSeed("notify \(name)", default: 0xB0B))
        let ctx = store.context(), other = store.context()
        try other.write {
            for i in 0..<10 { try other.create(Car.self, value: ["plate": "c\(i)", "model": "m\(i % 3)"]) }
            for id in stride(from: 0, to: population, by: 2) {
                try other.create(
                    Person.self,
                    value: [
                        "id": id, "name": "n\(id % 5)", "age": Int(id % 60),
                        "car": try other.object(ofType: Car.self, forPrimaryKey: "c\(id % 10)")!
                    ])
            }
        }
        let results = try query(ctx)
        var keys: [Int64] = []
        var failures: [String] = []
        var expectedModified: Set<Int64> = []
        var updates = 0
        let token = results.observe { change in
            switch change {
            case .initial(let r): keys = try! r.keys()
            case .update(let r, let d, let ins, let m):
                updates += 1
                let now = try! r.keys()
                var replay = keys
                for i in d.reversed() { replay.remove(at: i) }
                for i in ins { replay.insert(now[i], at: i) }
                if replay != now { failures.append("replay \(replay) != \(now)") }
                let mods = Set(m.map { keys[$0] })
                let kept = Set(keys).intersection(now).subtracting(d.map { keys[$0] })
                if mods != expectedModified.intersection(kept) {
                    failures.append("modifications \(mods.sorted()) != \(expectedModified.intersection(kept).sorted())")
                }
                keys = now
            case .error(let e): failures.append("error \(e)")
            }
        }
        func rows() throws -> [Int64: String] {
            try other.refresh()
            var out: [Int64: String] = [:]
            for p in other.objects(Person.self) {
                out[p.id] =
                    "\(p.name)|\(p.age)|\(p.car?.plate ?? "-")" + (followsLinks ? "|\(p.car?.model ?? "-")" : "")
            }
            return out
        }
        for round in 0..<40 {
            let before = try rows()
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                try other.write {
                    for _ in 0..<Int.random(in: 1...4, using: &rng) {
                        let id = Int64.random(in: 0..<population, using: &rng)
                        if Int.random(in: 0..<8, using: &rng) == 0 {
                            // Another class: a car changes model (results through the link move).
                            try other.object(
                                ofType: Car.self, forPrimaryKey: "c\(Int.random(in: 0..<10, using: &rng))")!.model =
                                "m\(Int.random(in: 0..<3, using: &rng))"
                        } else if let p = try other.object(ofType: Person.self, forPrimaryKey: id) {
                            if Int.random(in: 0..<3, using: &rng) == 0 {
                                try other.delete(p)
                            } else {
                                p.age = Int.random(in: 0..<60, using: &rng)
                                if Bool.random(using: &rng) { p.name = "n\(Int.random(in: 0..<5, using: &rng))" }
                            }
                        } else {
                            try other.create(
                                Person.self,
                                value: [
                                    "id": id, "name": "n\(Int.random(in: 0..<5, using: &rng))",
                                    "age": Int.random(in: 0..<60, using: &rng),
                                    "car": try other.object(
                                        ofType: Car.self, forPrimaryKey: "c\(Int.random(in: 0..<10, using: &rng))")!
                                ])
                        }
                    }
                }
            }
            let after = try rows()
            // Modified: in both versions, with other stored values (a row rewritten unchanged is not).
            expectedModified = Set(before.keys.filter { after[$0] != nil && after[$0] != before[$0] })
            try ctx.refresh()
            XCTAssertEqual(keys, try query(ctx).keys(), "\(name): round \(round): a fresh run of the query")
        }
        XCTAssertEqual(failures, [], name)
        XCTAssertGreaterThan(updates, 10, name)
        _ = token
    }
}

/// `maximumLiveVersions`: readers holding old versions stop writers at the limit.
final class LiveVersionLimitTests: XCTestCase {
    func testWritesStopWhenReadersHoldTooManyVersions() throws {
        let dir = TempDir()
        var config = Configuration(path: dir.file("v.fief"), types: zooTypes)
        config.maximumLiveVersions = 3
        let store = try ObjectStore(config)
        let writer = store.context()
        var readers: [ObjectContext] = []
        func hold() { let r = store.context(); _ = r.objects(Person.self).count; readers.append(r) }
        try writer.write { try writer.create(Person.self, value: ["id": 1]) }
        hold()  // pins the newest
        try writer.write { try writer.create(Person.self, value: ["id": 2]) }  // live: 2
        hold()
        try writer.write { try writer.create(Person.self, value: ["id": 3]) }  // live: 3
        XCTAssertEqual(try store.database.stats().liveVersions, 3)
        XCTAssertThrowsError(try writer.write { try writer.create(Person.self, value: ["id": 4]) }) {
            XCTAssertEqual($0 as? ObjectError, .tooManyLiveVersions(path: dir.file("v.fief"), live: 3, maximum: 3))
        }
        XCTAssertNil(try writer.object(ofType: Person.self, forPrimaryKey: 4), "the refused write changed nothing")
        try readers[0].refresh()
        try writer.write { try writer.create(Person.self, value: ["id": 4]) }
        var small = config
        small.maximumLiveVersions = 1
        XCTAssertThrowsError(try ObjectStore(small)) {
            XCTAssertEqual($0 as? ConfigurationError, .maximumLiveVersionsTooSmall(1))
        }
    }
}
