import FiefObjects
import Foundation

/// Models of the `objects` scenario's graph: every kind of property and key the object layer
/// stores. Persons (integer primary key) have an indexed name, an indexed optional birth date
/// (before 2001, after 2038, negative), an optional balance that goes negative, a cascading list
/// of dogs, a non-cascading list of dogs walked (one dog may appear twice; entries move and swap)
/// and a to-one favourite dog (nil again when that dog is deleted). Dogs see their owners
/// through backlinks. Tags have a String primary key, toys a UUID one with an indexed date and
/// a to-one owner; both are deleted and added again under the same keys.
public final class GraphPerson: Object {
    @Persisted(primaryKey: true) var id: Int64
    @Persisted(indexed: true) var name = ""
    @Persisted var age = 0
    @Persisted(indexed: true) var born: Date?
    @Persisted var balance: Int?
    @Persisted(onDelete: .cascade) var dogs: List<GraphDog>
    @Persisted var walks: List<GraphDog>
    @Persisted var favorite: GraphDog?
}

public final class GraphDog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<GraphPerson>
}

public final class GraphTag: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var weight = 0
}

public final class GraphToy: Object {
    @Persisted(primaryKey: true) var id = UUID()
    @Persisted(indexed: true) var made = Date(timeIntervalSince1970: 0)
    @Persisted var owner: GraphPerson?
}

public final class GraphProgress: Object {
    @Persisted(primaryKey: true) var id: Int64
    @Persisted var commit = 0
    /// The commit the migration to schema 2 found (0 before it): later commits write schema 2.
    @Persisted var migratedAt = 0
}

/// Version 2 of the graph's schema, for migrations killed mid-way: persons gain a `label`
/// computed from their name and age, `age` gets an index and `name` loses its one, `balance`
/// is renamed `credit`; the class of tags is renamed `GraphMark`, marks of negative weight are
/// deleted and a mark "v2" is created.
public enum GraphV2 {
    public final class GraphPerson: Object {
        @Persisted(primaryKey: true) var id: Int64
        @Persisted var name = ""
        @Persisted(indexed: true) var age = 0
        @Persisted var label = ""
        @Persisted(indexed: true) var born: Date?
        @Persisted var credit: Int?
        @Persisted(onDelete: .cascade) var dogs: List<GraphDog>
        @Persisted var walks: List<GraphDog>
        @Persisted var favorite: GraphDog?
    }

    public final class GraphDog: Object {
        @Persisted var name = ""
        @Persisted var age = 0
        @Persisted(originProperty: "dogs") var owners: LinkingObjects<GraphV2.GraphPerson>
    }

    /// Schema 1's `GraphTag`, renamed.
    public final class GraphMark: Object {
        @Persisted(primaryKey: true) var name = ""
        @Persisted var weight = 0
    }

    public final class GraphToy: Object {
        @Persisted(primaryKey: true) var id = UUID()
        @Persisted(indexed: true) var made = Date(timeIntervalSince1970: 0)
        @Persisted var owner: GraphV2.GraphPerson?
    }

    public static func label(name: String, age: Int) -> String { "\(name)#\(age)" }

    /// The tag every migrated file holds.
    public static let migrationTag = "v2"

    /// The migration, one write transaction: a crash leaves all of it or none.
    @Sendable public static func migrate(_ m: Migration, _ oldVersion: UInt64) throws {
        try m.renameProperty(onType: "GraphPerson", from: "balance", to: "credit")
        try m.renameClass(from: "GraphTag", to: "GraphMark")
        try m.enumerateObjects(ofType: "GraphPerson") { old, new in
            new!["label"] = label(name: old!["name"] as! String, age: old!["age"] as! Int)
        }
        var negative: [MigrationObject] = []
        try m.enumerateObjects(ofType: "GraphMark") { _, new in
            if let n = new, (n["weight"] as? Int ?? 0) < 0 { negative.append(n) }
        }
        for t in negative { try m.delete(t) }
        _ = try m.create("GraphMark", value: ["name": migrationTag, "weight": 2])
        try m.enumerateObjects(ofType: "GraphProgress") { _, new in new!["migratedAt"] = new!["commit"] }
    }
}

/// What the workload's writes need of a schema's models, so one `write` serves schema 1 and
/// schema 2 (whose `balance` is stored as `credit`).
protocol GraphSchema {
    associatedtype Person: GraphPersonModel where Person.Dog == Dog
    associatedtype Dog: Object
    associatedtype Tag: Object
    associatedtype Toy: GraphToyModel where Toy.Person == Person
}

protocol GraphPersonModel: Object {
    associatedtype Dog: Object
    var id: Int64 { get set }
    var name: String { get set }
    var age: Int { get set }
    var born: Date? { get set }
    var balance: Int? { get set }
    var dogs: List<Dog> { get }
    var walks: List<Dog> { get }
    var favorite: Dog? { get set }
}

protocol GraphToyModel: Object {
    associatedtype Person: Object
    var id: UUID { get set }
    var made: Date { get set }
    var owner: Person? { get set }
}

protocol GraphDogModel: Object {
    var name: String { get set }
    var age: Int { get set }
}

extension GraphPerson: GraphPersonModel {}
extension GraphToy: GraphToyModel {}
extension GraphDog: GraphDogModel {}
extension GraphV2.GraphPerson: GraphPersonModel {
    var balance: Int? {
        get { credit }
        set { credit = newValue }
    }
}
extension GraphV2.GraphToy: GraphToyModel {}
extension GraphV2.GraphDog: GraphDogModel {}

enum GraphSchema1: GraphSchema {
    typealias Person = GraphPerson
    typealias Dog = GraphDog
    typealias Tag = GraphTag
    typealias Toy = GraphToy
}

enum GraphSchema2: GraphSchema {
    typealias Person = GraphV2.GraphPerson
    typealias Dog = GraphV2.GraphDog
    typealias Tag = GraphV2.GraphMark
    typealias Toy = GraphV2.GraphToy
}
