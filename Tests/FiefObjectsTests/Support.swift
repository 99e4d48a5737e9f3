import XCTest
import Foundation
@testable import FiefObjects

/// A fresh directory per test, removed afterwards.
final class TempDir {
    let path: String
    init() {
        var template = Array("/tmp/fief-objects-test-XXXXXX".utf8CString)
        let p = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        path = String(cString: p!)
    }
    func file(_ name: String) -> String { "\(path)/\(name)" }
    deinit { _ = try? FileManager.default.removeItem(atPath: path) }
}

func testSeed(_ name: String, default d: UInt64) -> UInt64 {
    let s = ProcessInfo.processInfo.environment["FIEF_TEST_SEED"].flatMap(UInt64.init) ?? d
    print("\(name): seed \(s) (rerun with FIEF_TEST_SEED=\(s))")
    return s
}

final class Person: Object {
    @Persisted(primaryKey: true) var id: Int64
    @Persisted(indexed: true) var name = ""
    @Persisted var age = 0
    @Persisted var born: Date?
    @Persisted(onDelete: .cascade) var dogs: List<Dog>
    @Persisted var car: Car?
    @Persisted(originProperty: "owner") var ownedCars: LinkingObjects<Car>
    var scratch = "not persisted"
}

final class Dog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
}

final class Car: Object {
    @Persisted(primaryKey: true) var plate = ""
    @Persisted var model = ""
    @Persisted var owner: Person?
}

let zooTypes: [Object.Type] = [Person.self, Dog.self, Car.self]

func openZoo(_ dir: TempDir, _ name: String = "zoo.fief", version: UInt64 = 0) throws -> ObjectStore {
    try ObjectStore(Configuration(path: dir.file(name), types: zooTypes, schemaVersion: version))
}
