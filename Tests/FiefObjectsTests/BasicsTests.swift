import XCTest
import Foundation
import Engine
@testable import FiefObjects

final class BasicsTests: XCTestCase {
    func testAddReadLinksListsBacklinks() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        let ann = Person()
        ann.id = 1
        ann.name = "Ann"
        ann.age = 30
        let rex = Dog()
        rex.name = "Rex"
        rex.age = 3
        ann.dogs.append(rex)
        let car = Car()
        car.plate = "AB-1"
        car.model = "Zoe"
        car.owner = ann
        try ctx.write {
            try ctx.add(ann)
            try ctx.add(car)
        }
        XCTAssertTrue(ann.isManaged)
        XCTAssertTrue(
            ModelInfo.of(Person.self).readsFieldsInPlace,
            "add reads unmanaged values at field offsets, not through Mirror")
        XCTAssertEqual(ann.name, "Ann")
        XCTAssertEqual(ann.dogs.count, 1)
        XCTAssertEqual(ann.dogs[0].name, "Rex")
        XCTAssertEqual(rex.owners.count, 1)
        XCTAssertEqual(rex.owners[0].name, "Ann")
        XCTAssertEqual(ann.ownedCars.count, 1)
        XCTAssertEqual(ann.ownedCars.first?.plate, "AB-1")

        // Another context (another "thread") sees the committed objects.
        let other = store.context()
        let people = other.objects(Person.self)
        XCTAssertEqual(people.count, 1)
        XCTAssertEqual(people[0].dogs.first?.name, "Rex")
        XCTAssertEqual(try other.object(ofType: Car.self, forPrimaryKey: "AB-1")?.owner?.name, "Ann")

        // Writes in one context are not visible in the other until refresh.
        try ctx.write { ann.age = 31 }
        XCTAssertEqual(people[0].age, 30)
        try other.refresh()
        XCTAssertEqual(people[0].age, 31)
        let report = try store.check()
        XCTAssertTrue(report.isSound, "\(report)")
    }

    /// Accessors know a property by where its wrapper sits: from the runtime's field list, or,
    /// where there is none, by probing the wrapper at that place on a scratch instance. Both
    /// name the same property, and a typed key path traced through a getter finds it too.
    func testAPropertyIsKnownByWhereItsWrapperSits() throws {
        let info = ModelInfo.of(Person.self)
        let offsets = try XCTUnwrap(info.wrapperOffsets)
        let name = try XCTUnwrap(offsets.first { $0.name == "name" }).offset
        let age = try XCTUnwrap(offsets.first { $0.name == "age" }).offset
        XCTAssertNotEqual(name, age)
        XCTAssertEqual(info.probedName(wrapperAt: name, Persisted<String>.self), "name")
        XCTAssertEqual(info.probedName(wrapperAt: age, Persisted<Int>.self), "age")
        XCTAssertEqual(info.propertyName(wrapperAt: age, Persisted<Int>.self), "age")
        XCTAssertEqual(info.propertyName(reading: \Person.age), "age")
        XCTAssertEqual(info.propertyName(reading: \Person.name), "name")
    }

    func testDeleteNullifiesLinksAndCascades() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        try ctx.write {
            let p = try ctx.create(Person.self, value: ["id": 7, "name": "Bo", "dogs": [["name": "A"], ["name": "B"]]])
            try ctx.create(Car.self, value: ["plate": "X", "owner": p])
        }
        XCTAssertEqual(ctx.objects(Dog.self).count, 2)
        let bo = try XCTUnwrap(ctx.object(ofType: Person.self, forPrimaryKey: 7))
        try ctx.write { try ctx.delete(bo) }
        XCTAssertTrue(bo.isInvalidated)
        XCTAssertEqual(ctx.objects(Dog.self).count, 0, "cascade deletes the dogs")
        XCTAssertNil(try ctx.object(ofType: Car.self, forPrimaryKey: "X")?.owner, "the car's link is nullified")
        XCTAssertTrue(try store.check().isSound)
    }

    /// `add` stores linked objects first; one of them can take the key the object itself
    /// was found free for a moment before.
    func testALinkedObjectTakingTheSameKeyIsADuplicate() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        let p = Person(), twin = Person(), car = Car()
        p.id = 5; p.name = "A"
        twin.id = 5; twin.name = "B"
        car.plate = "X"; car.owner = twin
        p.car = car
        XCTAssertThrowsError(try ctx.write { try ctx.add(p) }) { e in
            XCTAssertEqual(e as? ObjectError, .duplicatePrimaryKey(className: "Person", value: "5"))
        }
        XCTAssertEqual(ctx.objects(Person.self).count, 0)
        XCTAssertTrue(try store.check().isSound)
    }

    func testDuplicatePrimaryKeyRollsBackTheWholeWrite() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        try ctx.write { try ctx.create(Person.self, value: ["id": 1, "name": "A"]) }
        XCTAssertThrowsError(
            try ctx.write {
                try ctx.create(Person.self, value: ["id": 2, "name": "B"])
                try ctx.create(Person.self, value: ["id": 1, "name": "C"])
            }
        ) { e in
            XCTAssertEqual(e as? ObjectError, .duplicatePrimaryKey(className: "Person", value: "1"))
        }
        XCTAssertEqual(ctx.objects(Person.self).count, 1)
        try ctx.write { try ctx.create(Person.self, value: ["id": 1, "name": "C"], update: .modified) }
        XCTAssertEqual(ctx.objects(Person.self).first?.name, "C")
        // A primary key change inside a setter makes the write throw and roll back.
        let p = ctx.objects(Person.self)[0]
        XCTAssertThrowsError(
            try ctx.write {
                p.id = 9; p.name = "D"
            }
        ) { e in
            XCTAssertEqual(e as? ObjectError, .primaryKeyChange(className: "Person", property: "id"))
        }
        XCTAssertEqual(p.name, "C")
    }

    func testQueriesBothFrontEnds() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        try ctx.write {
            for i in 0..<50 {
                let dogs = (0..<(i % 3)).map { ["name": "d\(i)-\($0)", "age": $0 + i % 5] as [String: Any] }
                try ctx.create(
                    Person.self, value: ["id": i, "name": i % 2 == 0 ? "Ann\(i)" : "bob\(i)", "age": i, "dogs": dogs])
            }
        }
        let all = ctx.objects(Person.self)
        let s = try all.filter("age BETWEEN {%@, %@} AND name BEGINSWITH[c] %@", 20, 30, "a")
        let typed = all.where { $0.age >= 20 && $0.age <= 30 && $0.name.starts(with: "A", caseInsensitive: true) }
        XCTAssertEqual(s.map(\.id), [20, 22, 24, 26, 28, 30])
        XCTAssertEqual(typed.map(\.id), s.map(\.id))
        XCTAssertEqual(try all.filter("dogs.@count == 2").count, all.where { $0.dogs.count == 2 }.count)
        XCTAssertEqual(try all.filter("ANY dogs.age > 5").map(\.id), all.where { $0.dogs.age > 5 }.map(\.id))
        XCTAssertEqual(
            try all.filter("SUBQUERY(dogs, $d, $d.age >= 2).@count > 0").count,
            try all.filter("ANY dogs.age >= 2").count)
        let dogs = ctx.objects(Dog.self)
        XCTAssertEqual(try dogs.filter("ANY owners.name == %@", "Ann2").count, 2)
        XCTAssertEqual(dogs.where { $0.owners.count > 0 }.count, dogs.count)
        XCTAssertEqual(all.sorted(byKeyPath: "age", ascending: false).limit(3).map(\.id), [49, 48, 47])
        XCTAssertEqual(try all.filter("id == 7").first?.name, "bob7")
        let seven = try XCTUnwrap(ctx.object(ofType: Person.self, forPrimaryKey: 7))
        XCTAssertEqual(try all.filter("SELF == %@", seven).map(\.id), [7])
        XCTAssertEqual(try all.filter("SELF != %@ AND id < 3", seven).map(\.id), [0, 1, 2])
        XCTAssertEqual(try all.filter("name IN %@", ["Ann4", "bob5", "zzz"]).map(\.id), [4, 5])
        XCTAssertEqual(all.sum(ofProperty: "age"), Double((0..<50).reduce(0, +)))
        XCTAssertThrowsError(try all.filter("age >")) { e in
            XCTAssertEqual((e as? QueryError)?.position, 6)
        }
        XCTAssertThrowsError(try all.filter("nme == 'x'")) { e in
            XCTAssertEqual(e as? QueryError, .unknownProperty(position: 1, className: "Person", property: "nme"))
        }
        XCTAssertThrowsError(try all.filter("age == 'x'")) { e in
            guard case .typeMismatch(1, _)? = e as? QueryError else { return XCTFail("\(e)") }
        }
    }

    func testResultsSeeOwnUncommittedWrites() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        let young = ctx.objects(Person.self).where { $0.age < 10 }
        XCTAssertEqual(young.count, 0)
        try ctx.write {
            try ctx.create(Person.self, value: ["id": 1, "age": 5])
            XCTAssertEqual(young.count, 1)
        }
        XCTAssertEqual(young.count, 1)
        XCTAssertThrowsError(
            try ctx.write {
                try ctx.create(Person.self, value: ["id": 2, "age": 6])
                XCTAssertEqual(young.count, 2)
                throw CancellationError()
            })
        XCTAssertEqual(young.count, 1)
    }
}

/// A table found missing is remembered only while no table was created or dropped since.
final class AbsentTableCacheTests: XCTestCase {
    func testATableCreatedAfterAMissIsSeen() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        try ctx.write {
            let t = try ctx.tables()
            XCTAssertFalse(try t.hasTable("scratch"))
            XCTAssertFalse(try t.hasTable("scratch"), "the remembered miss")
            try t.writer!.createTable("scratch", keyKind: .bytes, valueKind: .bytes)
            XCTAssertTrue(try t.hasTable("scratch"), "a miss remembered past a createTable")
            try t.writer!.dropTable("scratch")
            t.forgetTable("scratch")
            XCTAssertFalse(try t.hasTable("scratch"))
        }
    }
}

/// Inside a write, an accessor keeps the row it was found with only until the write next
/// changes anything: the bytes may have moved (a leaf copied, split or compacted).
final class RowsRememberedInAWriteTests: XCTestCase {
    func testReadsAfterChangesSeeTheChanges() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        try ctx.write {
            for i in 0..<200 { try ctx.create(Person.self, value: ["id": i, "name": "p\(i)", "age": i]) }
        }
        try ctx.write {
            let a = try XCTUnwrap(try ctx.object(ofType: Person.self, forPrimaryKey: Int64(7)))
            let b = try XCTUnwrap(try ctx.object(ofType: Person.self, forPrimaryKey: Int64(7)))
            XCTAssertEqual(a.age, 7)
            XCTAssertEqual(a.name, "p7")
            b.age = 70
            XCTAssertEqual(a.age, 70, "a row remembered before another accessor's set")
            // Many inserts beside it: its leaf is copied, grows and splits.
            for i in 1_000..<3_000 {
                try ctx.create(Person.self, value: ["id": i, "name": String(repeating: "n", count: 40), "age": i])
            }
            XCTAssertEqual(a.name, "p7")
            XCTAssertEqual(a.age, 70)
            b.name = "renamed"
            XCTAssertEqual(a.name, "renamed")
            try ctx.delete(b)
            XCTAssertTrue(a.isInvalidated)
        }
    }
}

/// Keys cut short (only a damaged file has them) read as zeros past their end, never trap.
final class ShortKeyTests: XCTestCase {
    func testShortKeysReadAsZeros() {
        let short: [UInt8] = [0x80, 0, 0, 0, 0, 0, 0, 5, 0, 0, 1]
        short.withUnsafeBytes { b in
            XCTAssertEqual(KeyBytes.readObj(b, at: 0), 5)
            XCTAssertEqual(KeyBytes.readU32(b, at: 8), 0x0000_0100)
            XCTAssertEqual(KeyBytes.readU32(b, at: 12), 0)
            XCTAssertEqual(KeyBytes.readObj(b, at: 16), Int64.min)
        }
    }
}

/// Format 3's index entries end in the object key's significant bytes and their count; every
/// key reads back, the value part is what precedes them, and a damaged entry never traps.
final class IndexEntryTests: XCTestCase {
    func testCompactKeysReadBackAndDamageReadsAsSomeKey() {
        let value = KeyBytes.indexValue(.string("p12345"))
        for key: Int64 in [0, 1, 255, 256, 200_000, 1 << 40, .max, -1, .min] {
            for compact in [true, false] {
                let e = KeyBytes.indexEntry(value, key, compact: compact)
                e.withUnsafeBytes {
                    XCTAssertEqual(KeyBytes.indexEntryKey($0, compact: compact), key, "\(key) \(compact)")
                }
                XCTAssertEqual(Array(KeyBytes.indexEntryValue(e, compact: compact)), value, "\(key) \(compact)")
            }
        }
        XCTAssertEqual(
            KeyBytes.indexEntry(value, 200_000, compact: true).count, value.count + 4, "3 bytes and their count")
        for damaged: [UInt8] in [[], [9], [0xFF, 1], [1, 2, 3, 200]] {
            damaged.withUnsafeBytes { _ = KeyBytes.indexEntryKey($0, compact: true) }
            _ = KeyBytes.indexEntryValue(damaged, compact: true)
        }
    }
}

final class AggregateTests: XCTestCase {
    /// Aggregates over a class's objects are one scan with each row at hand; they must agree
    /// with the objects themselves, filtered or not, through links, and inside a write.
    func testAggregatesAgreeWithTheObjects() throws {
        let dir = TempDir()
        let store = try ObjectStore(Configuration(path: dir.file("a.fief"), types: [Person.self, Dog.self, Car.self]))
        let ctx = store.context()
        try ctx.write {
            for i in 0..<700 {
                let p = Person()
                p.id = Int64(i); p.name = "n\(i % 37)"; p.age = (i * 7919) % 91
                if i % 3 == 0 { p.born = Date(timeIntervalSince1970: Double(i)) }
                for j in 0..<(i % 4) {
                    let d = Dog()
                    d.name = "d\(j)"; d.age = (i + j) % 15
                    p.dogs.append(d)
                }
                try ctx.add(p)
            }
        }
        // A fresh Results each time: one whose keys are cached aggregates over them instead.
        func check(_ results: () throws -> Results<Person>, _ what: String) throws {
            let r = try results()
            let people = Array(try results())
            let ages = people.map(\.age)
            XCTAssertEqual(r.sum(ofProperty: "age"), Double(ages.reduce(0, +)), what)
            XCTAssertEqual(r.min(ofProperty: "age") as Int?, ages.min(), what)
            XCTAssertEqual(r.max(ofProperty: "age") as Int?, ages.max(), what)
            XCTAssertEqual(
                r.average(ofProperty: "age"), ages.isEmpty ? nil : Double(ages.reduce(0, +)) / Double(ages.count), what)
            let dogAges = people.flatMap { $0.dogs.map(\.age) }
            XCTAssertEqual(r.sum(ofProperty: "dogs.age"), Double(dogAges.reduce(0, +)), what)
            XCTAssertEqual(r.min(ofProperty: "born") as Date?, people.compactMap(\.born).min(), what)
            XCTAssertEqual(r.sum(ofProperty: "nosuch"), 0, what)
        }
        let all = ctx.objects(Person.self)
        try check({ ctx.objects(Person.self) }, "all")
        try check({ try all.filter("age > 40") }, "age > 40")
        try check({ try all.filter("name == 'n5' AND age < 60") }, "indexed name")
        try check({ all.sorted(byKeyPath: "age").limit(25) }, "top 25")
        try ctx.write {
            for p in all where p.id % 5 == 0 { p.age += 100 }
            try check({ ctx.objects(Person.self) }, "inside a write")
            try check({ try all.filter("age >= 100") }, "changed inside a write")
        }
        try check({ ctx.objects(Person.self) }, "after the write")
    }
}
