import XCTest
import Foundation
import Engine
@testable import FiefObjects

final class TwoKeys: Object {
    @Persisted(primaryKey: true) var a = 0
    @Persisted(primaryKey: true) var b = 0
}
final class DoubleKey: Object { @Persisted(primaryKey: true) var d = 0.0 }
final class BadOrigin: Object { @Persisted(originProperty: "nothing") var owners: LinkingObjects<Person> }
final class LinksOutside: Object { @Persisted var other: Dog? }
final class IndexedDouble: Object { @Persisted(indexed: true) var d = 0.0 }
final class __Reserved: Object { @Persisted var x = 0 }

final class SchemaTests: XCTestCase {
    func open(_ types: [Object.Type]) throws -> ObjectStore {
        let dir = TempDir()
        return try ObjectStore(Configuration(path: dir.file("s.fief"), types: types))
    }

    func testBadModelsAreTypedErrors() {
        XCTAssertThrowsError(try open([TwoKeys.self])) {
            XCTAssertEqual($0 as? SchemaError, .multiplePrimaryKeys(className: "TwoKeys", properties: ["a", "b"]))
        }
        XCTAssertThrowsError(try open([DoubleKey.self])) {
            XCTAssertEqual($0 as? SchemaError, .primaryKeyType(className: "DoubleKey", property: "d", type: "Double"))
        }
        XCTAssertThrowsError(try open(zooTypes + [BadOrigin.self])) { e in
            guard case .badOriginProperty(className: "BadOrigin", property: "owners", _)? = e as? SchemaError else {
                return XCTFail("\(e)")
            }
        }
        XCTAssertThrowsError(try open([LinksOutside.self])) {
            XCTAssertEqual(
                $0 as? SchemaError, .linkTargetNotInTypes(className: "LinksOutside", property: "other", target: "Dog"))
        }
        XCTAssertThrowsError(try open([IndexedDouble.self])) { e in
            guard case .badOption(className: "IndexedDouble", property: "d", _)? = e as? SchemaError else {
                return XCTFail("\(e)")
            }
        }
        XCTAssertThrowsError(try open([__Reserved.self])) { e in
            guard case .invalidName(className: "__Reserved", property: nil, _)? = e as? SchemaError else {
                return XCTFail("\(e)")
            }
        }
        XCTAssertThrowsError(try open([Person.self, Person.self])) {
            XCTAssertEqual($0 as? SchemaError, .duplicateClass("Person"))
        }
    }

    func testForeignAndCorruptFilesStayEngineErrorsAndUntouched() throws {
        let dir = TempDir()
        let path = dir.file("foreign.fief")
        let junk = Data("SQLite format 3\u{0}".utf8 + [UInt8](repeating: 7, count: 8192))
        try junk.write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try ObjectStore(Configuration(path: path, types: zooTypes))) { e in
            XCTAssertEqual(e as? EngineError, .notAFiefFile(path: path))
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), junk, "a foreign file is never written")
        XCTAssertThrowsError(
            try ObjectStore(Configuration(path: dir.file("missing.fief"), types: zooTypes, readOnly: true))
        ) { e in
            XCTAssertEqual(e as? EngineError, .fileNotFound(path: dir.file("missing.fief")))
        }
    }

    func testNotInWriteTransactionAndNestedWrite() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        XCTAssertThrowsError(try ctx.add(Dog())) { XCTAssertEqual($0 as? ObjectError, .notInWriteTransaction("add")) }
        XCTAssertThrowsError(try ctx.write { try ctx.write {} }) { XCTAssertEqual($0 as? ObjectError, .nestedWrite) }
        let other = try openZoo(dir, "other.fief").context()
        let d = Dog()
        try other.write { try other.add(d) }
        XCTAssertThrowsError(try ctx.write { try ctx.delete(d) }) {
            XCTAssertEqual($0 as? ObjectError, .objectFromAnotherStore(className: "Dog"))
        }
        XCTAssertThrowsError(try ctx.write { try ctx.create(Person.self, value: ["id": 1, "nmae": "x"]) }) {
            XCTAssertEqual($0 as? ObjectError, .unknownProperty(className: "Person", property: "nmae"))
        }
        XCTAssertThrowsError(try ctx.write { try ctx.create(Person.self, value: ["id": 1, "age": "old"]) }) { e in
            guard case .typeMismatch(className: "Person", property: "age", _, _)? = e as? ObjectError else {
                return XCTFail("\(e)")
            }
        }
    }

    func testThreadSafeReferenceResolvesOnceOnAnotherThread() throws {
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        let p = Person()
        p.id = 5
        p.name = "Ref"
        try ctx.write { try ctx.add(p) }
        let ref = try ThreadSafeReference(to: p)
        let done = expectation(description: "resolved on another thread")
        Thread.detachNewThread {
            let other = store.context()
            let first = Result { try ref.resolve(in: other) }
            let second = Result { try ref.resolve(in: other) }
            XCTAssertEqual((try? first.get())??.name, "Ref")
            if case .failure(let e) = second {
                XCTAssertEqual(e as? ObjectError, .referenceAlreadyResolved)
            } else {
                XCTFail("resolved twice")
            }
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
    }
}
