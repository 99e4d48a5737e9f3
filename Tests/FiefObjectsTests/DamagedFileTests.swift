import XCTest
import Foundation
import Engine
@testable import FiefObjects

/// Reads of a damaged file: inside `throwingReads` every kind of read (getters, lists, linking
/// objects, dynamic access, results, aggregates) throws the file's typed error and no
/// placeholder escapes as data.
final class DamagedFileTests: XCTestCase {
    /// A zoo of 600 persons with dogs, then one byte flipped in a node that holds rows, so the
    /// store still opens but some reads fail. Returns the damaged file's path.
    func damagedZoo(_ dir: TempDir) throws -> String {
        let path = dir.file("zoo.fief")
        do {
            let ctx = try openZoo(dir).context()
            try ctx.write {
                for i in 0..<600 {
                    let p = Person()
                    p.id = Int64(i); p.name = "person \(i) " + String(repeating: "x", count: 40); p.age = i % 90
                    let d = Dog()
                    d.name = "dog \(i)"
                    p.dogs.append(d)
                    try ctx.add(p)
                }
            }
        }
        // Flip one byte at a time (each on a fresh copy) until a read fails with the file's
        // typed error after a clean open: damage to a row. (A flipped object key reads as a
        // deleted object instead, unless checksums are verified: the tree cannot tell.)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        for offset in stride(from: bytes.count - 100, to: 4096, by: -997) {
            var damaged = bytes
            damaged[offset] ^= 0x5A
            try damaged.write(to: URL(fileURLWithPath: path))
            guard let store = try? openZoo(dir) else { continue }
            let ctx = store.context()
            do {
                _ = try ctx.throwingReads({ ctx.objects(Person.self).map { $0.name + $0.dogs.map(\.name).joined() } })
            } catch EngineError.corrupt {
                return path
            } catch {}
        }
        XCTFail("no single flipped byte made a read fail")
        return path
    }

    func testEveryReadThrowsInsideThrowingReads() throws {
        let dir = TempDir()
        _ = try damagedZoo(dir)
        let ctx = try openZoo(dir).context()
        func assertThrowsCorrupt<T>(_ what: String, _ body: () throws -> T) {
            XCTAssertThrowsError(try ctx.throwingReads(body), what) { error in
                guard case EngineError.corrupt(let path, _) = error else { return XCTFail("\(what): \(error)") }
                XCTAssertTrue(path.hasSuffix("zoo.fief"), "\(what): the error names the file")
            }
        }
        assertThrowsCorrupt("getters and lists") {
            ctx.objects(Person.self).map { "\($0.id) \($0.name) \($0.dogs.count)" }
        }
        assertThrowsCorrupt("dynamic access") {
            try ctx.dynamicObjects("Person").objects().map { [$0["name"], $0["dogs"], $0["age"]] }
        }
        assertThrowsCorrupt("aggregates") {
            ctx.objects(Person.self).sum(ofProperty: "age") + ctx.objects(Person.self).sum(ofProperty: "dogs.age")
                + ctx.objects(Person.self).sum(ofProperty: "name")
        }
        // The throwing dynamic accessor throws without a scope.
        var failed = false
        for o in (try? ctx.dynamicObjects("Person").objects()) ?? [] {
            do { _ = try ctx.value(of: o, forProperty: "name"); _ = try ctx.value(of: o, forProperty: "dogs") } catch {
                failed = true; break
            }
        }
        let keysFailed = (try? ctx.dynamicObjects("Person").keys()) == nil
        XCTAssertTrue(failed || keysFailed, "some row of the damaged file fails value(of:forProperty:) or the key scan")
    }

    func testThrowingReadsOnASoundFileReturnsTheBodysValue() throws {
        let dir = TempDir()
        let ctx = try openZoo(dir).context()
        try ctx.write {
            let p = Person()
            p.id = 7; p.name = "ann"
            try ctx.add(p)
        }
        XCTAssertEqual(try ctx.throwingReads { ctx.objects(Person.self).map(\.name) }, ["ann"])
        // The body's own error comes through when no read failed.
        struct Mine: Error {}
        XCTAssertThrowsError(try ctx.throwingReads { throw Mine() }) { XCTAssertTrue($0 is Mine) }
        // A deleted object's getter throws objectDeleted inside the scope.
        let p = ctx.objects(Person.self)[0]
        try ctx.write { try ctx.delete(p) }
        XCTAssertThrowsError(try ctx.throwingReads { p.name }) { error in
            XCTAssertEqual(error as? ObjectError, .objectDeleted(className: "Person"))
        }
        XCTAssertThrowsError(try ctx.value(of: p, forProperty: "name"))
    }

    /// One rule for Data against a String constant: the string's UTF-8 bytes, whether a row
    /// is tested by the scan's byte fast path or by the evaluator (CONTAINS, ANY, links).
    func testDataAgainstAStringIsItsUTF8Bytes() throws {
        let dir = TempDir()
        let ctx = try ObjectStore(Configuration(path: dir.file("t.fief"), types: [AllTypes.self])).context()
        try ctx.write {
            for s in ["abc", "xab", "b"] {
                let o = AllTypes()
                o.data = Data(s.utf8); o.s = s
                try ctx.add(o)
            }
        }
        let all = ctx.objects(AllTypes.self)
        func names(_ q: String) throws -> [String] { try all.filter(q).map(\.s).sorted() }
        XCTAssertEqual(try names("data BEGINSWITH 'ab'"), ["abc"])
        XCTAssertEqual(try names("data CONTAINS 'ab'"), ["abc", "xab"])
        XCTAssertEqual(try names("data ENDSWITH 'ab'"), ["xab"])
        XCTAssertEqual(try names("data == 'b'"), ["b"])
        XCTAssertEqual(try names("data != 'b'"), ["abc", "xab"])
        // Through a link: the evaluator, not the scan's fast path, answers.
        try ctx.write { for o in all where o.s != "b" { o.link = all.first { $0.s == "b" } } }
        XCTAssertEqual(try names("link.data BEGINSWITH 'b'"), ["abc", "xab"])
    }

    /// A negative limit is taken as 0, sorted or not.
    func testNegativeLimitGivesNothingEverywhere() throws {
        let dir = TempDir()
        let ctx = try openZoo(dir).context()
        try ctx.write {
            for i in 0..<20 {
                let p = Person()
                p.id = Int64(i); p.age = i
                try ctx.add(p)
            }
        }
        let all = ctx.objects(Person.self)
        XCTAssertEqual(all.limit(-1).count, 0)
        XCTAssertEqual(all.sorted(byKeyPath: "age").limit(-1).count, 0)
        XCTAssertEqual(try all.filter("age > 3").limit(-5).count, 0)
        XCTAssertEqual(all.limit(3).limit(-1).count, 0)
        XCTAssertEqual(all.limit(-1).limit(3).count, 0)
    }
}
