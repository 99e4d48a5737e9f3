import FiefObjects
import Foundation
import SeededRandomness

/// Models of the `objects` scenario's graph: persons with an indexed name and a cascading
/// list of dogs, dogs with their owners as backlinks, and the commit counter.
public final class GraphPerson: Object {
    @Persisted(primaryKey: true) var id: Int64
    @Persisted(indexed: true) var name = ""
    @Persisted var age = 0
    @Persisted(onDelete: .cascade) var dogs: List<GraphDog>
}

public final class GraphDog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<GraphPerson>
}

public final class GraphProgress: Object {
    @Persisted(primaryKey: true) var id: Int64
    @Persisted var commit = 0
}

/// Version 2 of the graph's schema, for migrations killed mid-way: persons gain a `label`
/// computed from their name and age, and `age` gets an index.
public enum GraphV2 {
    public final class GraphPerson: Object {
        @Persisted(primaryKey: true) var id: Int64
        @Persisted(indexed: true) var name = ""
        @Persisted(indexed: true) var age = 0
        @Persisted var label = ""
        @Persisted(onDelete: .cascade) var dogs: List<GraphDog>
    }

    public final class GraphDog: Object {
        @Persisted var name = ""
        @Persisted var age = 0
        @Persisted(originProperty: "dogs") var owners: LinkingObjects<GraphV2.GraphPerson>
    }

    public static func label(name: String, age: Int) -> String { "\(name)#\(age)" }
}

/// An object graph whose state after commit k is known exactly: commit i makes a few
/// operations chosen from (seed, i) and the graph as it stands (adds with new dogs, upserts,
/// list inserts and removals, cascading deletes, dog deletes, renames through the index),
/// and stores i in the progress object in the same write. Replaying commits 1...k on the
/// in-memory `Graph` gives the graph any recovered file must hold.
public struct ObjectGraphWorkload: Sendable {
    public let seed: UInt64
    public static let types: [Object.Type] = [GraphPerson.self, GraphDog.self, GraphProgress.self]
    public static let typesV2: [Object.Type] = [GraphV2.GraphPerson.self, GraphV2.GraphDog.self, GraphProgress.self]

    public init(seed: UInt64) { self.seed = seed }

    public struct Graph: Equatable, Sendable {
        public var persons: [Int64: PersonState] = [:]
        public var dogs: [Int64: DogState] = [:]
        /// Dogs get keys 1, 2, 3, ... in creation order (keys are never reused).
        public var nextDog: Int64 = 1

        mutating func deletePerson(_ id: Int64, cascade: Bool = true) {
            guard let p = persons.removeValue(forKey: id) else { return }
            if cascade { for d in Set(p.dogs) { deleteDog(d) } }
        }

        mutating func deleteDog(_ d: Int64) {
            dogs[d] = nil
            for k in persons.keys { persons[k]?.dogs.removeAll { $0 == d } }
        }
    }

    public struct PersonState: Equatable, Sendable { public var name: String; public var age: Int; public var dogs: [Int64] }
    public struct DogState: Equatable, Sendable { public var name: String; public var age: Int }

    /// One operation of a commit, decided against the graph before it.
    enum Op {
        case addPerson(Int64, String, Int, [DogState])
        case upsert(Int64, String, Int)
        case link(Int64, Int64, Int)
        case unlink(Int64, Int)
        case deletePerson(Int64)
        case deleteDog(Int64)
        case rename(Int64, String)
    }

    func ops(forCommit i: UInt64, on g: Graph) -> [Op] {
        var rng = SeededRandom.derive(seed ^ 0x0B1E_C7, i)
        var g = g
        var out: [Op] = []
        for _ in 0..<Int.random(in: 1...5, using: &rng) {
            let persons = g.persons.keys.sorted(), dogs = g.dogs.keys.sorted()
            let op: Op
            let pick = Int.random(in: 0..<10, using: &rng)
            if pick < 3 {
                let id = Int64.random(in: 0..<48, using: &rng)
                let name = "n\(Int.random(in: 0..<12, using: &rng))", age = Int.random(in: 0..<80, using: &rng)
                if g.persons[id] == nil {
                    op = .addPerson(id, name, age, (0..<Int.random(in: 0...3, using: &rng)).map { _ in
                        DogState(name: "d\(Int.random(in: 0..<6, using: &rng))", age: Int.random(in: 0..<15, using: &rng))
                    })
                } else {
                    op = .upsert(id, name, age)
                }
            } else if persons.isEmpty {
                continue
            } else if pick < 5 {
                guard !dogs.isEmpty else { continue }
                let p = persons.randomElement(using: &rng)!
                op = .link(p, dogs.randomElement(using: &rng)!, Int.random(in: 0...g.persons[p]!.dogs.count, using: &rng))
            } else if pick == 5 {
                let p = persons.randomElement(using: &rng)!
                guard !g.persons[p]!.dogs.isEmpty else { continue }
                op = .unlink(p, Int.random(in: 0..<g.persons[p]!.dogs.count, using: &rng))
            } else if pick == 6 {
                op = .deletePerson(persons.randomElement(using: &rng)!)
            } else if pick == 7 {
                guard !dogs.isEmpty else { continue }
                op = .deleteDog(dogs.randomElement(using: &rng)!)
            } else {
                op = .rename(persons.randomElement(using: &rng)!, "r\(Int.random(in: 0..<12, using: &rng))")
            }
            apply(op, to: &g)
            out.append(op)
        }
        return out
    }

    func apply(_ op: Op, to g: inout Graph) {
        switch op {
        case .addPerson(let id, let name, let age, let dogs):
            var keys: [Int64] = []
            for d in dogs {
                g.dogs[g.nextDog] = d
                keys.append(g.nextDog)
                g.nextDog += 1
            }
            g.persons[id] = PersonState(name: name, age: age, dogs: keys)
        case .upsert(let id, let name, let age):
            g.persons[id]?.name = name
            g.persons[id]?.age = age
        case .link(let p, let d, let at): g.persons[p]?.dogs.insert(d, at: at)
        case .unlink(let p, let at): g.persons[p]?.dogs.remove(at: at)
        case .deletePerson(let id): g.deletePerson(id)
        case .deleteDog(let d): g.deleteDog(d)
        case .rename(let id, let name): g.persons[id]?.name = name
        }
    }

    /// The graph after commits 1...k.
    public func expected(afterCommit k: UInt64) -> Graph {
        var g = Graph()
        guard k > 0 else { return g }
        for i in 1...k { for op in ops(forCommit: i, on: g) { apply(op, to: &g) } }
        return g
    }

    /// Makes commit `i`'s operations through the object layer (inside `ctx.write`).
    func write(commit i: UInt64, graph: Graph, in ctx: ObjectContext) throws {
        func person(_ id: Int64) throws -> GraphPerson {
            guard let p = try ctx.object(ofType: GraphPerson.self, forPrimaryKey: id) else {
                throw TortureError.invalid("objects writer: person \(id) is missing at commit \(i)")
            }
            return p
        }
        func dog(_ key: Int64) throws -> GraphDog {
            guard let d = try ctx.object(ofType: GraphDog.self, objectKey: key) else {
                throw TortureError.invalid("objects writer: dog \(key) is missing at commit \(i)")
            }
            return d
        }
        for op in ops(forCommit: i, on: graph) {
            switch op {
            case .addPerson(let id, let name, let age, let dogs):
                let p = GraphPerson()
                p.id = id; p.name = name; p.age = age
                for d in dogs {
                    let o = GraphDog()
                    o.name = d.name; o.age = d.age
                    p.dogs.append(o)
                }
                try ctx.add(p)
            case .upsert(let id, let name, let age):
                try ctx.create(GraphPerson.self, value: ["id": id, "name": name, "age": age], update: .modified)
            case .link(let p, let d, let at): try person(p).dogs.insert(try dog(d), at: at)
            case .unlink(let p, let at): try person(p).dogs.remove(at: at)
            case .deletePerson(let id): try ctx.delete(try person(id))
            case .deleteDog(let d): try ctx.delete(try dog(d))
            case .rename(let id, let name): try person(id).name = name
            }
        }
        let progress = try ctx.object(ofType: GraphProgress.self, forPrimaryKey: Int64(0)) ?? ctx.create(GraphProgress.self, value: ["id": Int64(0)])
        progress.commit = Int(i)
    }

    /// The last commit a file holds.
    public static func committed(in ctx: ObjectContext) throws -> UInt64 {
        UInt64(try ctx.object(ofType: GraphProgress.self, forPrimaryKey: Int64(0))?.commit ?? 0)
    }

    /// Differences between the store's graph (v1 or v2 models) and `g`, one line each.
    public static func differences(_ ctx: ObjectContext, _ g: Graph, v2: Bool) throws -> [String] {
        var found = Graph()
        var labels: [Int64: String] = [:]
        if v2 {
            for p in ctx.objects(GraphV2.GraphPerson.self) {
                found.persons[p.id] = PersonState(name: p.name, age: p.age, dogs: p.dogs.map { $0.objectKey! })
                labels[p.id] = p.label
            }
            for d in ctx.objects(GraphV2.GraphDog.self) { found.dogs[d.objectKey!] = DogState(name: d.name, age: d.age) }
        } else {
            for p in ctx.objects(GraphPerson.self) { found.persons[p.id] = PersonState(name: p.name, age: p.age, dogs: p.dogs.map { $0.objectKey! }) }
            for d in ctx.objects(GraphDog.self) { found.dogs[d.objectKey!] = DogState(name: d.name, age: d.age) }
        }
        found.nextDog = g.nextDog
        var out: [String] = []
        let pk = Set(g.persons.keys), fk = Set(found.persons.keys)
        if pk != fk { out.append("persons: missing \(pk.subtracting(fk).sorted().prefix(5)), unexpected \(fk.subtracting(pk).sorted().prefix(5))") }
        for id in pk.intersection(fk).sorted() where g.persons[id] != found.persons[id] {
            out.append("person \(id): expected \(g.persons[id]!), found \(found.persons[id]!)")
            if out.count > 5 { break }
        }
        let dk = Set(g.dogs.keys), dfk = Set(found.dogs.keys)
        if dk != dfk { out.append("dogs: missing \(dk.subtracting(dfk).sorted().prefix(5)), unexpected \(dfk.subtracting(dk).sorted().prefix(5))") }
        if v2 {
            for (id, p) in g.persons where labels[id] != nil && labels[id] != GraphV2.label(name: p.name, age: p.age) {
                out.append("migration: person \(id) has label '\(labels[id]!)', expected '\(GraphV2.label(name: p.name, age: p.age))' (schema v2 without its migrated data)")
                break
            }
        }
        // Backlinks, through the query layer: each dog's owners are the persons listing it.
        let dogs: [(Int64, Set<Int64>)] = v2
            ? ctx.objects(GraphV2.GraphDog.self).map { ($0.objectKey!, Set($0.owners.map(\.id))) }
            : ctx.objects(GraphDog.self).map { ($0.objectKey!, Set($0.owners.map(\.id))) }
        for (k, owners) in dogs {
            let want = Set(g.persons.filter { $0.value.dogs.contains(k) }.keys)
            if owners != want { out.append("dog \(k): owners \(owners.sorted()), expected \(want.sorted())"); break }
        }
        return out
    }
}
