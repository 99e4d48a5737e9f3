import XCTest
import Foundation
import Engine
import SeededRandomness
@testable import FiefObjects

/// A file written by an older Fief keeps opening and answering as it did. `Fixtures/` holds a
/// zoo per object-layer format it has had: format 1 (engine format 7) and format 2; each later
/// format must open them (or convert them), check them clean and give the same answers as the
/// same zoo built afresh. Write the current format's zoo only on purpose, when a format change
/// is meant to be kept by this test: `FIEF_WRITE_FIXTURES=1 swift test --filter FormatFixtureTests`.
final class FormatFixtureTests: XCTestCase {
    static func fixture(format: Int64) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "Fixtures/zoo-objects-format\(format).fief"
        ).path
    }

    /// The zoo, from a fixed seed: lists, to-one links, an index, long strings (out of row),
    /// optional dates, deleted objects (and their cascades), and changed values.
    static func build(_ ctx: ObjectContext) throws {
        var rng = SeededRandom(seed: 20_261_126)
        try ctx.write {
            for i in 0..<300 {
                let p = try ctx.create(
                    Person.self,
                    value: ["id": Int64(i), "name": "person \(i % 40)", "age": Int.random(in: 0..<90, using: &rng)])
                if i % 7 == 0 { p.born = Date(timeIntervalSinceReferenceDate: Double(i) * 86_400) }
                if i % 11 == 0 { p.name = String(repeating: "long name \(i) ", count: 12) }
                for d in 0..<Int.random(in: 0..<4, using: &rng) {
                    let dog = Dog()
                    dog.name = "dog \(i)-\(d)"
                    dog.age = d
                    p.dogs.append(dog)
                }
                if i % 5 == 0 { try ctx.create(Car.self, value: ["plate": "P-\(i)", "model": "m\(i % 3)", "owner": p]) }
            }
        }
        try ctx.write {
            for i in stride(from: 0, to: 300, by: 13) {
                if let p = try ctx.object(ofType: Person.self, forPrimaryKey: Int64(i)) { try ctx.delete(p) }
            }
            for p in try ctx.objects(Person.self).filter("age > 80").objects() { p.age -= 1 }
        }
    }

    /// What a user would ask of the zoo, as one comparable list of lines.
    static func answers(_ ctx: ObjectContext) throws -> [String] {
        var out: [String] = []
        let persons = ctx.objects(Person.self)
        out.append("persons \(persons.count) dogs \(ctx.objects(Dog.self).count) cars \(ctx.objects(Car.self).count)")
        out.append("name index: \(try persons.filter("name == %@", "person 3").keys())")
        out.append("prefix: \(try persons.filter("name BEGINSWITH %@", "long").count)")
        out.append("range: \(try persons.filter("age BETWEEN {20, 30}").keys())")
        out.append("oldest: \(try persons.sorted(byKeyPath: "age", ascending: false).limit(10).objects().map(\.id))")
        for p in try persons.objects() {
            out.append(
                "\(p.id) \(p.name) \(p.age) \(p.born.map { "\($0.timeIntervalSinceReferenceDate)" } ?? "-") "
                    + "dogs \(p.dogs.map(\.name)) cars \(p.ownedCars.map(\.plate).sorted())"
            )
        }
        for d in try ctx.objects(Dog.self).objects() { out.append("\(d.name) \(d.age) owners \(d.owners.map(\.id))") }
        for c in try ctx.objects(Car.self).objects() { out.append("\(c.plate) \(c.model) \(c.owner?.id ?? -1)") }
        return out
    }

    func testAFileOfObjectFormat1OpensChecksCleanAndAnswersAsBefore() throws {
        try checkFixture(format: 1, rows: "fief/o/")
    }

    func testAFileOfObjectFormat2OpensChecksCleanAndAnswersAsBefore() throws {
        try checkFixture(format: 2, rows: "fief/c/")
    }

    /// The zoo of `format` (whose objects live in tables named `rows…`) converts on a writable
    /// open, reads as it is on a read-only one, and answers as the zoo built afresh.
    func checkFixture(format: Int64, rows: String) throws {
        let dir = TempDir()
        if ProcessInfo.processInfo.environment["FIEF_WRITE_FIXTURES"] != nil {
            // Its own scope, so the store is closed before the file is copied.
            try {
                let store = try ObjectStore(Configuration(path: dir.file("w.fief"), types: zooTypes))
                try FormatFixtureTests.build(store.context())
                try store.database.compact()
            }()
            let path = FormatFixtureTests.fixture(format: SchemaStore.format)
            try? FileManager.default.removeItem(atPath: path)
            try FileManager.default.copyItem(atPath: dir.file("w.fief"), toPath: path)
            print("wrote \(path)")
        }
        let fixture = FormatFixtureTests.fixture(format: format)
        // A copy: opening converts it, and the fixture stays as it was written.
        try FileManager.default.copyItem(atPath: fixture, toPath: dir.file("old.fief"))
        try FileManager.default.copyItem(atPath: fixture, toPath: dir.file("read-only.fief"))
        XCTAssertEqual(
            try FormatFixtureTests.tables(dir.file("old.fief")).filter { $0.hasPrefix(rows) }.count, 3,
            "the fixture keeps its rows in \(rows)")
        XCTAssertEqual(try FormatFixtureTests.format(dir.file("old.fief")), format, "the fixture is format \(format)")
        let old = try ObjectStore(Configuration(path: dir.file("old.fief"), types: zooTypes))
        let converted = try FormatFixtureTests.tables(dir.file("old.fief"))
        XCTAssertEqual(converted.filter { $0.hasPrefix("fief/o/") }, [], "format 1's rows are gone")
        XCTAssertEqual(converted.filter { $0.hasPrefix("fief/c/") }.count, 3, "each class has clusters")
        XCTAssertEqual(try old.database.read { try SchemaStore.meta($0, "format") }, SchemaStore.format)
        // A read-only open leaves the old format as it is, and reads it.
        let readOnly = try ObjectStore(Configuration(path: dir.file("read-only.fief"), types: zooTypes, readOnly: true))
        XCTAssertTrue(try readOnly.check().isSound)
        XCTAssertEqual(try readOnly.database.read { try SchemaStore.meta($0, "format") }, format)
        let report = try old.check()
        XCTAssertTrue(report.isSound, "\(report)")
        XCTAssertTrue(try old.database.check().problems.isEmpty)
        let fresh = try ObjectStore(Configuration(path: dir.file("fresh.fief"), types: zooTypes))
        try FormatFixtureTests.build(fresh.context())
        let was = try FormatFixtureTests.answers(old.context()), now = try FormatFixtureTests.answers(fresh.context())
        XCTAssertGreaterThan(was.count, 300)
        XCTAssertEqual(was.count, now.count)
        for (a, b) in zip(was, now) where a != b { XCTFail("fixture: \(a)\nafresh:  \(b)"); break }
        XCTAssertEqual(try FormatFixtureTests.answers(readOnly.context()), now)
    }

    static func format(_ path: String) throws -> Int64? {
        var options = DatabaseOptions(create: false)
        options.readOnly = true
        return try Database(path: path, options: options).read { try SchemaStore.meta($0, "format") }
    }

    static func tables(_ path: String) throws -> [String] {
        var options = DatabaseOptions(create: false)
        options.readOnly = true
        let db = try Database(path: path, options: options)
        return try db.read { try $0.tableNames() }
    }
}
