import FiefObjects
import Foundation
import SeededRandomness

/// An object graph whose state after commit k is known exactly: commit i makes a few
/// operations chosen from (seed, i) and the graph as it stands, and stores i in the progress
/// object in the same write. Replaying commits 1...k on the in-memory `Graph` gives the graph
/// any recovered file must hold. The models are in ObjectGraphModels.swift.
public struct ObjectGraphWorkload: Sendable {
    public let seed: UInt64
    public static let types: [Object.Type] = [
        GraphPerson.self, GraphDog.self, GraphTag.self, GraphToy.self, GraphProgress.self
    ]
    public static let typesV2: [Object.Type] = [
        GraphV2.GraphPerson.self, GraphV2.GraphDog.self, GraphV2.GraphMark.self, GraphV2.GraphToy.self,
        GraphProgress.self
    ]

    public init(seed: UInt64) { self.seed = seed }

    public struct Graph: Equatable, Sendable {
        public var persons: [Int64: PersonState] = [:]
        public var dogs: [Int64: DogState] = [:]
        public var tags: [String: Int] = [:]
        public var toys: [UUID: ToyState] = [:]
        /// Dogs get keys 1, 2, 3, ... in creation order (keys are never reused).
        public var nextDog: Int64 = 1
        /// Migrated to schema 2: persons carry a label (the migration's, or "" when added later).
        public var schema2 = false

        mutating func deletePerson(_ id: Int64, cascade: Bool = true) {
            guard let p = persons.removeValue(forKey: id) else { return }
            for (u, t) in toys where t.owner == id { toys[u]?.owner = nil }
            if cascade { for d in Set(p.dogs) { deleteDog(d) } }
        }

        /// Links to a deleted dog become nil; lists lose every entry of it.
        mutating func deleteDog(_ d: Int64) {
            dogs[d] = nil
            for k in persons.keys {
                persons[k]?.dogs.removeAll { $0 == d }
                persons[k]?.walks.removeAll { $0 == d }
                if persons[k]?.favorite == d { persons[k]?.favorite = nil }
            }
        }
    }

    public struct PersonState: Equatable, Sendable {
        public var name: String
        public var age: Int
        public var born: Date?
        public var balance: Int?
        public var dogs: [Int64]
        public var walks: [Int64] = []
        public var favorite: Int64?
        /// Schema 2 only: what the migration computed from the name and age it found.
        public var label: String?
    }

    public struct DogState: Equatable, Sendable { public var name: String; public var age: Int }
    public struct ToyState: Equatable, Sendable { public var made: Date; public var owner: Int64? }

    /// Birth and making dates: before 1970 and 2001 (the two reference dates), between, after
    /// 2038 (past 32-bit time), and fractional.
    static let dates: [Date] = [
        -3_000_000_000, -86_400.5, 0, 978_307_199.75, 978_307_200, 1_700_000_000, 2_200_000_000, 4_102_444_800.125
    ]
    .map { Date(timeIntervalSince1970: $0) }
    /// Toys' keys come from a pool of 12, so keys are deleted and used again.
    static func toyID(_ n: Int) -> UUID {
        UUID(uuid: (0xF1, 0xEF, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, UInt8(n)))
    }

    /// One operation of a commit, decided against the graph before it.
    enum Op {
        case addPerson(Int64, String, Int, Date?, Int?, [DogState])
        case upsert(Int64, String, Int)
        case link(Int64, Int64, Int)
        case unlink(Int64, Int)
        case deletePerson(Int64)
        case deleteDog(Int64)
        case rename(Int64, String)
        case setBorn(Int64, Date?)
        case setBalance(Int64, Int?)
        case walk(Int64, Int64, Int)
        case moveWalk(Int64, Int, Int)
        case swapWalks(Int64, Int, Int)
        case unwalk(Int64, Int)
        case favorite(Int64, Int64?)
        case putTag(String, Int)
        case deleteTag(String)
        case addToy(UUID, Date, Int64?)
        case deleteToy(UUID)
    }

    func ops(forCommit i: UInt64, on g: Graph) -> [Op] {
        var rng = SeededRandom.derive(seed ^ 0x0B1E_C7, i)
        var g = g
        var out: [Op] = []
        func date() -> Date? {
            Int.random(in: 0..<5, using: &rng) == 0 ? nil : ObjectGraphWorkload.dates.randomElement(using: &rng)!
        }
        func balance() -> Int? { Bool.random(using: &rng) ? nil : Int.random(in: -1000...1000, using: &rng) }
        for _ in 0..<Int.random(in: 1...5, using: &rng) {
            let persons = g.persons.keys.sorted(), dogs = g.dogs.keys.sorted()
            let op: Op
            let pick = Int.random(in: 0..<20, using: &rng)
            if pick < 5 {
                let id = Int64.random(in: 0..<48, using: &rng)
                let name = "n\(Int.random(in: 0..<12, using: &rng))", age = Int.random(in: 0..<80, using: &rng)
                if g.persons[id] == nil {
                    op = .addPerson(
                        id, name, age, date(), balance(),
                        (0..<Int.random(in: 0...3, using: &rng)).map { _ in
                            DogState(
                                name: "d\(Int.random(in: 0..<6, using: &rng))", age: Int.random(in: 0..<15, using: &rng)
                            )
                        })
                } else {
                    op = .upsert(id, name, age)
                }
            } else if pick == 5 {
                let name = "t\(Int.random(in: 0..<10, using: &rng))"
                op =
                    g.tags[name] != nil && Bool.random(using: &rng)
                    ? .deleteTag(name) : .putTag(name, Int.random(in: -5...5, using: &rng))
            } else if pick == 6 {
                let u = ObjectGraphWorkload.toyID(Int.random(in: 0..<12, using: &rng))
                op =
                    g.toys[u] != nil
                    ? .deleteToy(u)
                    : .addToy(
                        u, ObjectGraphWorkload.dates.randomElement(using: &rng)!, persons.randomElement(using: &rng))
            } else if persons.isEmpty {
                continue
            } else {
                let p = persons.randomElement(using: &rng)!, s = g.persons[p]!
                switch pick {
                case 7, 8:
                    guard !dogs.isEmpty else { continue }
                    op = .link(p, dogs.randomElement(using: &rng)!, Int.random(in: 0...s.dogs.count, using: &rng))
                case 9:
                    guard !s.dogs.isEmpty else { continue }
                    op = .unlink(p, Int.random(in: 0..<s.dogs.count, using: &rng))
                case 10: op = .deletePerson(p)
                case 11:
                    guard !dogs.isEmpty else { continue }
                    op = .deleteDog(dogs.randomElement(using: &rng)!)
                case 12: op = .rename(p, "r\(Int.random(in: 0..<12, using: &rng))")
                case 13: op = Bool.random(using: &rng) ? .setBorn(p, date()) : .setBalance(p, balance())
                case 14, 15:
                    guard !dogs.isEmpty else { continue }
                    // Half the time a dog the list holds already: the same object twice.
                    let d =
                        !s.walks.isEmpty && Bool.random(using: &rng)
                        ? s.walks.randomElement(using: &rng)! : dogs.randomElement(using: &rng)!
                    op = .walk(p, d, Int.random(in: 0...s.walks.count, using: &rng))
                case 16:
                    guard s.walks.count >= 2 else { continue }
                    let a = Int.random(in: 0..<s.walks.count, using: &rng),
                        b = Int.random(in: 0..<s.walks.count, using: &rng)
                    op = Bool.random(using: &rng) ? .moveWalk(p, a, b) : .swapWalks(p, a, b)
                case 17:
                    guard !s.walks.isEmpty else { continue }
                    op = .unwalk(p, Int.random(in: 0..<s.walks.count, using: &rng))
                default:
                    op = .favorite(
                        p,
                        dogs.isEmpty || Int.random(in: 0..<4, using: &rng) == 0 ? nil : dogs.randomElement(using: &rng)!
                    )
                }
            }
            apply(op, to: &g)
            out.append(op)
        }
        return out
    }

    func apply(_ op: Op, to g: inout Graph) {
        switch op {
        case .addPerson(let id, let name, let age, let born, let balance, let dogs):
            var keys: [Int64] = []
            for d in dogs {
                g.dogs[g.nextDog] = d
                keys.append(g.nextDog)
                g.nextDog += 1
            }
            g.persons[id] = PersonState(
                name: name, age: age, born: born, balance: balance, dogs: keys, label: g.schema2 ? "" : nil)
        case .upsert(let id, let name, let age):
            g.persons[id]?.name = name
            g.persons[id]?.age = age
        case .link(let p, let d, let at): g.persons[p]?.dogs.insert(d, at: at)
        case .unlink(let p, let at): g.persons[p]?.dogs.remove(at: at)
        case .deletePerson(let id): g.deletePerson(id)
        case .deleteDog(let d): g.deleteDog(d)
        case .rename(let id, let name): g.persons[id]?.name = name
        case .setBorn(let id, let d): g.persons[id]?.born = d
        case .setBalance(let id, let b): g.persons[id]?.balance = b
        case .walk(let p, let d, let at): g.persons[p]?.walks.insert(d, at: at)
        case .moveWalk(let p, let from, let to):
            if let d = g.persons[p]?.walks.remove(at: from) { g.persons[p]?.walks.insert(d, at: to) }
        case .swapWalks(let p, let a, let b): g.persons[p]?.walks.swapAt(a, b)
        case .unwalk(let p, let at): g.persons[p]?.walks.remove(at: at)
        case .favorite(let p, let d): g.persons[p]?.favorite = d
        case .putTag(let name, let weight): g.tags[name] = weight
        case .deleteTag(let name): g.tags[name] = nil
        case .addToy(let u, let made, let owner): g.toys[u] = ToyState(made: made, owner: owner)
        case .deleteToy(let u): g.toys[u] = nil
        }
    }

    /// The graph after commits 1...k, migrated to schema 2 after commit `migratedAt` when given
    /// (the commits after it were written with schema 2's models).
    public func expected(afterCommit k: UInt64, migratedAt: UInt64? = nil) -> Graph {
        var g = Graph()
        if migratedAt == 0 { g = ObjectGraphWorkload.migrated(g) }
        guard k > 0 else { return g }
        for i in 1...k {
            for op in ops(forCommit: i, on: g) { apply(op, to: &g) }
            if i == migratedAt { g = ObjectGraphWorkload.migrated(g) }
        }
        return g
    }

    /// What the migration to schema 2 makes of `g` (see `GraphV2.migrate`).
    public static func migrated(_ g: Graph) -> Graph {
        var m = g
        m.schema2 = true
        for (id, p) in m.persons { m.persons[id]?.label = GraphV2.label(name: p.name, age: p.age) }
        m.tags = m.tags.filter { $0.value >= 0 }
        m.tags[GraphV2.migrationTag] = 2
        return m
    }

    /// Makes commit `i`'s operations through the object layer (inside `ctx.write`), with the
    /// models of schema 1 or 2.
    func write<S: GraphSchema>(
        commit i: UInt64, graph: Graph, in ctx: ObjectContext, schema: S.Type = GraphSchema1.self
    ) throws
    where S.Dog: GraphDogModel {
        typealias GraphPerson = S.Person
        typealias GraphDog = S.Dog
        typealias GraphTag = S.Tag
        typealias GraphToy = S.Toy
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
            case .addPerson(let id, let name, let age, let born, let balance, let dogs):
                let p = GraphPerson()
                p.id = id; p.name = name; p.age = age; p.born = born; p.balance = balance
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
            case .setBorn(let id, let d): try person(id).born = d
            case .setBalance(let id, let b): try person(id).balance = b
            case .walk(let p, let d, let at): try person(p).walks.insert(try dog(d), at: at)
            case .moveWalk(let p, let from, let to): try person(p).walks.move(from: from, to: to)
            case .swapWalks(let p, let a, let b): try person(p).walks.swapAt(a, b)
            case .unwalk(let p, let at): try person(p).walks.remove(at: at)
            case .favorite(let p, let d): try person(p).favorite = try d.map(dog)
            case .putTag(let name, let weight):
                try ctx.create(GraphTag.self, value: ["name": name, "weight": weight], update: .modified)
            case .deleteTag(let name):
                guard let t = try ctx.object(ofType: GraphTag.self, forPrimaryKey: name) else {
                    throw TortureError.invalid("objects writer: tag \(name) is missing at commit \(i)")
                }
                try ctx.delete(t)
            case .addToy(let u, let made, let owner):
                let t = GraphToy()
                t.id = u; t.made = made
                t.owner = try owner.map(person)
                try ctx.add(t)
            case .deleteToy(let u):
                guard let t = try ctx.object(ofType: GraphToy.self, forPrimaryKey: u) else {
                    throw TortureError.invalid("objects writer: toy \(u) is missing at commit \(i)")
                }
                try ctx.delete(t)
            }
        }
        let progress =
            try ctx.object(ofType: GraphProgress.self, forPrimaryKey: Int64(0))
            ?? ctx.create(GraphProgress.self, value: ["id": Int64(0)])
        progress.commit = Int(i)
    }

    /// The last commit a file holds.
    public static func committed(in ctx: ObjectContext) throws -> UInt64 {
        UInt64(try ctx.object(ofType: GraphProgress.self, forPrimaryKey: Int64(0))?.commit ?? 0)
    }

    /// The commit a file at schema 2 was migrated after.
    public static func migratedAt(in ctx: ObjectContext) throws -> UInt64 {
        UInt64(try ctx.object(ofType: GraphProgress.self, forPrimaryKey: Int64(0))?.migratedAt ?? 0)
    }

    /// The graph a store holds (v1 or v2 models), with v2's labels by person.
    static func read(_ ctx: ObjectContext, v2: Bool) -> Graph {
        var found = Graph()
        found.schema2 = v2
        if v2 {
            for p in ctx.objects(GraphV2.GraphPerson.self) {
                found.persons[p.id] = PersonState(
                    name: p.name, age: p.age, born: p.born, balance: p.credit, dogs: p.dogs.map { $0.objectKey! },
                    walks: p.walks.map { $0.objectKey! }, favorite: p.favorite?.objectKey, label: p.label)
            }
            for d in ctx.objects(GraphV2.GraphDog.self) {
                found.dogs[d.objectKey!] = DogState(name: d.name, age: d.age)
            }
            for t in ctx.objects(GraphV2.GraphMark.self) { found.tags[t.name] = t.weight }
            for t in ctx.objects(GraphV2.GraphToy.self) {
                found.toys[t.id] = ToyState(made: t.made, owner: t.owner?.id)
            }
        } else {
            for p in ctx.objects(GraphPerson.self) {
                found.persons[p.id] = PersonState(
                    name: p.name, age: p.age, born: p.born, balance: p.balance, dogs: p.dogs.map { $0.objectKey! },
                    walks: p.walks.map { $0.objectKey! }, favorite: p.favorite?.objectKey)
            }
            for d in ctx.objects(GraphDog.self) { found.dogs[d.objectKey!] = DogState(name: d.name, age: d.age) }
            for t in ctx.objects(GraphTag.self) { found.tags[t.name] = t.weight }
            for t in ctx.objects(GraphToy.self) { found.toys[t.id] = ToyState(made: t.made, owner: t.owner?.id) }
        }
        return found
    }

    /// Differences between the store's graph (v1 or v2 models) and `g` (already migrated for
    /// v2), one line each.
    public static func differences(_ ctx: ObjectContext, _ g: Graph, v2: Bool) throws -> [String] {
        var found = read(ctx, v2: v2)
        found.nextDog = g.nextDog
        var out: [String] = []
        func compare<K: Hashable & Comparable, V: Equatable>(_ what: String, _ want: [K: V], _ have: [K: V]) {
            let wk = Set(want.keys), hk = Set(have.keys)
            if wk != hk {
                out.append(
                    "\(what): missing \(wk.subtracting(hk).sorted().prefix(5)), "
                        + "unexpected \(hk.subtracting(wk).sorted().prefix(5))"
                )
            }
            for k in wk.intersection(hk).sorted() where want[k] != have[k] {
                out.append("\(what) \(k): expected \(want[k]!), found \(have[k]!)")
                if out.count > 5 { break }
            }
        }
        compare("persons", g.persons, found.persons)
        compare("dogs", g.dogs, found.dogs)
        compare("tags", g.tags, found.tags)
        compare(
            "toys", Dictionary(uniqueKeysWithValues: g.toys.map { ($0.key.uuidString, $0.value) }),
            Dictionary(uniqueKeysWithValues: found.toys.map { ($0.key.uuidString, $0.value) }))
        if g.schema2 != found.schema2 {
            out.append("schema: the file is at schema \(found.schema2 ? 2 : 1), the model at \(g.schema2 ? 2 : 1)")
        }
        // Backlinks, through the query layer: each dog's owners are the persons listing it.
        let dogs: [(Int64, Set<Int64>)] =
            v2
            ? ctx.objects(GraphV2.GraphDog.self).map { ($0.objectKey!, Set($0.owners.map(\.id))) }
            : ctx.objects(GraphDog.self).map { ($0.objectKey!, Set($0.owners.map(\.id))) }
        for (k, owners) in dogs {
            let want = Set(g.persons.filter { $0.value.dogs.contains(k) }.keys)
            if owners != want { out.append("dog \(k): owners \(owners.sorted()), expected \(want.sorted())"); break }
        }
        return out
    }
}
