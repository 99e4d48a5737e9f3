import XCTest
import Foundation
import Engine
import SeededRandomness
@testable import FiefObjects

/// Random object operations (links, lists, cascades, upserts, deletes) against an in-memory
/// model of the graph; after every write the store must equal the model, backlinks included,
/// and `check()` must pass.
final class ModelBasedTests: XCTestCase {
    struct PersonModel: Equatable { var name: String; var age: Int; var dogs: [Int64] }
    struct CarModel: Equatable { var model: String; var owner: Int64? }
    struct Graph {
        var persons: [Int64: PersonModel] = [:]
        var dogs: [Int64: (name: String, age: Int)] = [:]
        var cars: [String: CarModel] = [:]

        /// Deleting a person cascades to its dogs; deleting a dog removes it from every list.
        mutating func deletePerson(_ id: Int64) {
            guard let p = persons.removeValue(forKey: id) else { return }
            for c in cars.keys where cars[c]?.owner == id { cars[c]?.owner = nil }
            for d in Set(p.dogs) { deleteDog(d) }
        }

        mutating func deleteDog(_ d: Int64) {
            dogs[d] = nil
            for k in persons.keys { persons[k]?.dogs.removeAll { $0 == d } }
        }
    }

    func testRandomGraphOperationsMatchTheModel() throws {
        let seed = testSeed("ModelBasedTests", default: 11)
        for round in 0..<6 {
            try runRound(seed &+ UInt64(round), steps: 60)
        }
    }

    func runRound(_ seed: UInt64, steps: Int) throws {
        var rng = SeededRandom(seed: seed)
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        var g = Graph()
        for step in 0..<steps {
            let ops = Int.random(in: 1...4, using: &rng)
            try ctx.write {
                for _ in 0..<ops { try randomOp(ctx, &g, &rng) }
            }
            try verify(store, g, "seed \(seed) step \(step)")
        }
    }

    func randomOp(_ ctx: ObjectContext, _ g: inout Graph, _ rng: inout SeededRandom) throws {
        let persons = g.persons.keys.sorted(), dogs = g.dogs.keys.sorted(), cars = g.cars.keys.sorted()
        switch Int.random(in: 0..<11, using: &rng) {
        case 0, 1:
            let id = Int64.random(in: 0..<40, using: &rng)
            let name = "p\(Int.random(in: 0..<20, using: &rng))"
            let age = Int.random(in: 0..<90, using: &rng)
            if g.persons[id] != nil {
                try ctx.create(Person.self, value: ["id": id, "name": name, "age": age], update: .modified)
                g.persons[id]?.name = name
                g.persons[id]?.age = age
            } else {
                let p = Person()
                p.id = id; p.name = name; p.age = age
                var keys: [Int64] = []
                for _ in 0..<Int.random(in: 0...3, using: &rng) {
                    let d = Dog()
                    d.name = "d\(Int.random(in: 0..<9, using: &rng))"
                    d.age = Int.random(in: 0..<15, using: &rng)
                    p.dogs.append(d)
                }
                try ctx.add(p)
                for d in p.dogs {
                    keys.append(d.objectKey!)
                    g.dogs[d.objectKey!] = (d.name, d.age)
                }
                g.persons[id] = PersonModel(name: name, age: age, dogs: keys)
            }
        case 2 where !persons.isEmpty && !dogs.isEmpty:
            let pid = persons.randomElement(using: &rng)!, d = dogs.randomElement(using: &rng)!
            let p = try ctx.object(ofType: Person.self, forPrimaryKey: pid)!
            let dog = ctx.objects(Dog.self).first { $0.objectKey == d }!
            let at = Int.random(in: 0...p.dogs.count, using: &rng)
            p.dogs.insert(dog, at: at)
            g.persons[pid]!.dogs.insert(d, at: at)
        case 3 where !persons.isEmpty:
            let pid = persons.randomElement(using: &rng)!
            let p = try ctx.object(ofType: Person.self, forPrimaryKey: pid)!
            guard p.dogs.count > 0 else { return }
            if Bool.random(using: &rng) {
                let i = Int.random(in: 0..<p.dogs.count, using: &rng)
                p.dogs.remove(at: i)
                g.persons[pid]!.dogs.remove(at: i)
            } else {
                let a = Int.random(in: 0..<p.dogs.count, using: &rng), b = Int.random(in: 0..<p.dogs.count, using: &rng)
                p.dogs.move(from: a, to: b)
                let e = g.persons[pid]!.dogs.remove(at: a)
                g.persons[pid]!.dogs.insert(e, at: b)
            }
        case 4 where !persons.isEmpty:
            let pid = persons.randomElement(using: &rng)!
            try ctx.delete(try ctx.object(ofType: Person.self, forPrimaryKey: pid)!)
            g.deletePerson(pid)
        case 5 where !dogs.isEmpty:
            let d = dogs.randomElement(using: &rng)!
            try ctx.delete(try ctx.objects(Dog.self).filter("age >= 0").first { $0.objectKey == d }!)
            g.deleteDog(d)
        case 6:
            let plate = "c\(Int.random(in: 0..<10, using: &rng))"
            let owner = persons.isEmpty || Bool.random(using: &rng) ? nil : persons.randomElement(using: &rng)
            let model = "m\(Int.random(in: 0..<5, using: &rng))"
            var value: [String: Any] = ["plate": plate, "model": model]
            let ownerObject: Person? = try owner.flatMap { try ctx.object(ofType: Person.self, forPrimaryKey: $0) }
            value["owner"] = ownerObject as Any
            try ctx.create(Car.self, value: value, update: .all)
            g.cars[plate] = CarModel(model: model, owner: owner)
        case 7 where !cars.isEmpty:
            let plate = cars.randomElement(using: &rng)!
            try ctx.delete(try ctx.object(ofType: Car.self, forPrimaryKey: plate)!)
            g.cars[plate] = nil
        case 8 where !persons.isEmpty:
            let pid = persons.randomElement(using: &rng)!
            let p = try ctx.object(ofType: Person.self, forPrimaryKey: pid)!
            let age = Int.random(in: 0..<90, using: &rng)
            p.age = age
            p.name = "q\(age % 7)"
            g.persons[pid]!.age = age
            g.persons[pid]!.name = "q\(age % 7)"
        case 9 where !persons.isEmpty && !cars.isEmpty:
            let pid = persons.randomElement(using: &rng)!, plate = cars.randomElement(using: &rng)!
            try ctx.object(ofType: Car.self, forPrimaryKey: plate)!.owner = try ctx.object(
                ofType: Person.self, forPrimaryKey: pid)
            g.cars[plate]!.owner = pid
        case 10 where !persons.isEmpty:
            // Update a whole result set.
            let young = ctx.objects(Person.self).where { $0.age < 30 }
            try ctx.update(young) { $0.age += 1 }
            for k in g.persons.keys where g.persons[k]!.age < 30 { g.persons[k]!.age += 1 }
        default:
            break
        }
    }

    func verify(_ store: ObjectStore, _ g: Graph, _ ctxName: String) throws {
        let ctx = store.context()
        let persons = ctx.objects(Person.self)
        XCTAssertEqual(Set(persons.map(\.id)), Set(g.persons.keys), ctxName)
        for p in persons {
            let m = g.persons[p.id]!
            XCTAssertEqual(
                PersonModel(name: p.name, age: p.age, dogs: p.dogs.map { $0.objectKey! }), m,
                "\(ctxName) person \(p.id)")
            let owned = Set(p.ownedCars.map(\.plate))
            XCTAssertEqual(owned, Set(g.cars.filter { $0.value.owner == p.id }.keys), "\(ctxName) ownedCars of \(p.id)")
        }
        let dogs = ctx.objects(Dog.self)
        XCTAssertEqual(Set(dogs.map { $0.objectKey! }), Set(g.dogs.keys), ctxName)
        for d in dogs {
            let k = d.objectKey!
            XCTAssertEqual(d.name, g.dogs[k]!.name)
            XCTAssertEqual(
                Set(d.owners.map(\.id)), Set(g.persons.filter { $0.value.dogs.contains(k) }.keys),
                "\(ctxName) owners of dog \(k)")
        }
        for c in ctx.objects(Car.self) {
            XCTAssertEqual(CarModel(model: c.model, owner: c.owner?.id), g.cars[c.plate], "\(ctxName) car \(c.plate)")
        }
        XCTAssertEqual(ctx.objects(Car.self).count, g.cars.count)
        // Index lookups agree with the model.
        for name in Set(g.persons.values.map(\.name)) {
            XCTAssertEqual(
                Set(try persons.filter("name == %@", name).map(\.id)),
                Set(g.persons.filter { $0.value.name == name }.keys), ctxName)
        }
        let report = try store.check()
        XCTAssertTrue(report.isSound, "\(ctxName): \(report)")
    }
}
