import XCTest
import Foundation
@testable import FiefObjects
@_exported import FiefTestSupport

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

/// How many cells the store's tables named `prefix…` hold (0 when there are none).
func cells(_ store: ObjectStore, inTablesStartingWith prefix: String) throws -> Int {
    try store.database.read { tx in
        var n = 0
        for t in try tx.tableNames() where t.hasPrefix(prefix) { n += try tx.count(table: t) }
        return n
    }
}
