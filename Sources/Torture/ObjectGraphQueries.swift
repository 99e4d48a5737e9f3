import FiefObjects
import Foundation
import SeededRandomness

/// Random queries over the recovered graph's persons, each answered by the store (as an
/// NSPredicate string, and through the typed front end where it has the operators) and by the
/// model of the graph at the recovered commit: comparisons, ranges, BETWEEN, IN, string
/// operators with [c] and [d], nil, dates on both sides of 1970, 2001 and 2038, ANY and ALL over
/// a list, @count, a to-one link, AND/OR/NOT, sorts and limits. Name equality and prefixes and
/// date ranges can be answered from an index (name in schema 1, born in both, age in schema 2);
/// the rest by a scan.
struct GraphQuery {
    indirect enum Condition {
        case age(CompareOperator, Int)
        case ageBetween(Int, Int)
        case ageIn([Int])
        case nameEquals(String)
        case nameBegins(String, caseInsensitive: Bool)
        case nameContains(String)
        case nameLike(String)
        case born(CompareOperator, Date)
        case bornIsNil(Bool)
        case balanceBelow(Int)
        case balanceIsNil
        case anyDogYoungerThan(Int)
        case allDogsOlderThan(Int)
        case dogCountAbove(Int)
        case walksAtLeast(Int)
        case favoriteOlderThan(Int)
        case and(Condition, Condition)
        case or(Condition, Condition)
        case not(Condition)
    }

    enum SortKey: String, CaseIterable { case age, name, born, balance }

    let condition: Condition
    let sorts: [(SortKey, ascending: Bool)]
    let limit: Int?

    static func random(_ rng: inout SeededRandom) -> GraphQuery {
        let condition = randomCondition(&rng, depth: 0)
        var sorts: [(SortKey, Bool)] = []
        for _ in 0..<Int.random(in: 0...2, using: &rng) {
            sorts.append((SortKey.allCases.randomElement(using: &rng)!, Bool.random(using: &rng)))
        }
        // A limit only on a total order (the primary key ends every sort): otherwise which
        // objects make the cut depends on the plan.
        let limit = !sorts.isEmpty && Bool.random(using: &rng) ? Int.random(in: 0...12, using: &rng) : nil
        return GraphQuery(condition: condition, sorts: sorts, limit: limit)
    }

    private static func randomCondition(_ rng: inout SeededRandom, depth: Int) -> Condition {
        if depth < 2 && Int.random(in: 0..<3, using: &rng) == 0 {
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: return .and(randomCondition(&rng, depth: depth + 1), randomCondition(&rng, depth: depth + 1))
            case 1: return .or(randomCondition(&rng, depth: depth + 1), randomCondition(&rng, depth: depth + 1))
            default: return .not(randomCondition(&rng, depth: depth + 1))
            }
        }
        let ops: [CompareOperator] = [.less, .lessOrEqual, .greater, .greaterOrEqual, .equal, .notEqual]
        func name() -> String { "\(["n", "r"].randomElement(using: &rng)!)\(Int.random(in: 0..<12, using: &rng))" }
        switch Int.random(in: 0..<16, using: &rng) {
        case 0: return .age(ops.randomElement(using: &rng)!, Int.random(in: 0..<80, using: &rng))
        case 1:
            let a = Int.random(in: 0..<80, using: &rng)
            return .ageBetween(a, a + Int.random(in: 0..<30, using: &rng))
        case 2: return .ageIn((0..<Int.random(in: 1...4, using: &rng)).map { _ in Int.random(in: 0..<80, using: &rng) })
        case 3: return .nameEquals(name())
        case 4:
            let n = name()
            return .nameBegins(
                Bool.random(using: &rng) ? n.uppercased() : String(n.prefix(Int.random(in: 1...2, using: &rng))),
                caseInsensitive: Bool.random(using: &rng))
        case 5: return .nameContains(String(Int.random(in: 0..<12, using: &rng)))
        case 6: return .nameLike(["n?", "r*", "*1", "?1*", "n1?"].randomElement(using: &rng)!)
        case 7, 8: return .born(ops.randomElement(using: &rng)!, ObjectGraphWorkload.dates.randomElement(using: &rng)!)
        case 9: return .bornIsNil(Bool.random(using: &rng))
        case 10:
            return Bool.random(using: &rng) ? .balanceBelow(Int.random(in: -800...800, using: &rng)) : .balanceIsNil
        case 11: return .anyDogYoungerThan(Int.random(in: 0..<15, using: &rng))
        case 12: return .allDogsOlderThan(Int.random(in: 0..<15, using: &rng))
        case 13: return .dogCountAbove(Int.random(in: 0..<4, using: &rng))
        case 14: return .walksAtLeast(Int.random(in: 1...3, using: &rng))
        default: return .favoriteOlderThan(Int.random(in: 0..<15, using: &rng))
        }
    }

    // MARK: As a string

    /// The predicate in NSPredicate format, with its `%@` arguments; `balance` is named as the
    /// schema names it (`credit` after the migration).
    func format(balance: String) -> (String, [Any]) {
        var args: [Any] = []
        func f(_ c: Condition) -> String {
            switch c {
            case .age(let op, let n): return "age \(op.rawValue) \(n)"
            case .ageBetween(let a, let b): return "age BETWEEN {\(a), \(b)}"
            case .ageIn(let xs): return "age IN {\(xs.map(String.init).joined(separator: ", "))}"
            case .nameEquals(let s): return "name == '\(s)'"
            case .nameBegins(let s, let ci): return "name BEGINSWITH\(ci ? "[cd]" : "") '\(s)'"
            case .nameContains(let s): return "name CONTAINS[d] '\(s)'"
            case .nameLike(let p): return "name LIKE '\(p)'"
            case .born(let op, let d):
                args.append(d)
                return "born \(op.rawValue) %@"
            case .bornIsNil(let isNil): return isNil ? "born == nil" : "born != nil"
            case .balanceBelow(let n): return "\(balance) < \(n)"
            case .balanceIsNil: return "\(balance) == nil"
            case .anyDogYoungerThan(let n): return "ANY dogs.age < \(n)"
            case .allDogsOlderThan(let n): return "ALL dogs.age > \(n)"
            case .dogCountAbove(let n): return "dogs.@count > \(n)"
            case .walksAtLeast(let n): return "walks.@count >= \(n)"
            case .favoriteOlderThan(let n): return "favorite.age > \(n)"
            case .and(let a, let b): return "(\(f(a)) AND \(f(b)))"
            case .or(let a, let b): return "(\(f(a)) OR \(f(b)))"
            case .not(let a): return "NOT (\(f(a)))"
            }
        }
        let s = f(condition)
        return (s, args)
    }

    var description: String {
        let (s, args) = format(balance: "balance")
        var d = s + (args.isEmpty ? "" : " with \(args)")
        if !sorts.isEmpty {
            d +=
                " sorted by "
                + sorts.map { "\($0.0.rawValue) \($0.ascending ? "asc" : "desc")" }.joined(separator: ", ")
        }
        if let limit { d += " limit \(limit)" }
        return d
    }

    // MARK: Through the typed front end (schema 1)

    /// Whether the typed front end can spell the condition (it has no ALL, and no == or !=
    /// between an optional date and a date).
    var hasTypedForm: Bool {
        func h(_ c: Condition) -> Bool {
            switch c {
            case .allDogsOlderThan: return false
            case .born(let op, _): return op != .equal && op != .notEqual
            case .and(let a, let b), .or(let a, let b): return h(a) && h(b)
            case .not(let a): return h(a)
            default: return true
            }
        }
        return h(condition)
    }

    func typed(_ q: Query<GraphPerson>) -> Query<Bool>? {
        func t(_ c: Condition) -> Query<Bool>? {
            switch c {
            case .age(let op, let n):
                switch op {
                case .less: return q.age < n
                case .lessOrEqual: return q.age <= n
                case .greater: return q.age > n
                case .greaterOrEqual: return q.age >= n
                case .equal: return q.age == n
                default: return q.age != n
                }
            case .ageBetween(let a, let b): return q.age.contains(a...b)
            case .ageIn(let xs): return q.age.in(xs)
            case .nameEquals(let s): return q.name == s
            case .nameBegins(let s, let ci):
                return q.name.starts(with: s, caseInsensitive: ci, diacriticInsensitive: ci)
            case .nameContains(let s): return q.name.contains(s, diacriticInsensitive: true)
            case .nameLike(let p): return q.name.like(p)
            case .born(let op, let d):
                switch op {
                case .less: return q.born < d
                case .lessOrEqual: return q.born <= d
                case .greater: return q.born > d
                case .greaterOrEqual: return q.born >= d
                default: return nil
                }
            case .bornIsNil(let isNil): return isNil ? q.born == nil : q.born != nil
            case .balanceBelow(let n): return q.balance < n
            case .balanceIsNil: return q.balance == nil
            case .anyDogYoungerThan(let n): return q.dogs.age < n
            case .allDogsOlderThan: return nil
            case .dogCountAbove(let n): return q.dogs.count > n
            case .walksAtLeast(let n): return q.walks.count >= n
            case .favoriteOlderThan(let n): return q.favorite.age > n
            case .and(let a, let b): return t(a).flatMap { x in t(b).map { x && $0 } }
            case .or(let a, let b): return t(a).flatMap { x in t(b).map { x || $0 } }
            case .not(let a): return t(a).map { !$0 }
            }
        }
        return t(condition)
    }

    // MARK: The model's answer

    func matches(_ p: ObjectGraphWorkload.PersonState, _ g: ObjectGraphWorkload.Graph) -> Bool {
        func cmp<T: Comparable>(_ a: T?, _ op: CompareOperator, _ b: T) -> Bool {
            guard let a else { return op == .notEqual }
            switch op {
            case .less: return a < b
            case .lessOrEqual: return a <= b
            case .greater: return a > b
            case .greaterOrEqual: return a >= b
            case .equal: return a == b
            default: return a != b
            }
        }
        func like(_ s: [Character], _ p: [Character]) -> Bool {
            guard let f = p.first else { return s.isEmpty }
            if f == "*" { return (0...s.count).contains { like(Array(s[$0...]), Array(p.dropFirst())) } }
            guard let c = s.first, f == "?" || f == c else { return false }
            return like(Array(s.dropFirst()), Array(p.dropFirst()))
        }
        func m(_ c: Condition) -> Bool {
            switch c {
            case .age(let op, let n): return cmp(p.age, op, n)
            case .ageBetween(let a, let b): return p.age >= a && p.age <= b
            case .ageIn(let xs): return xs.contains(p.age)
            case .nameEquals(let s): return p.name == s
            case .nameBegins(let s, let ci):
                return ci ? p.name.lowercased().hasPrefix(s.lowercased()) : p.name.hasPrefix(s)
            case .nameContains(let s): return p.name.contains(s)
            case .nameLike(let pattern): return like(Array(p.name), Array(pattern))
            case .born(let op, let d): return cmp(p.born, op, d)
            case .bornIsNil(let isNil): return (p.born == nil) == isNil
            case .balanceBelow(let n): return p.balance.map { $0 < n } ?? false
            case .balanceIsNil: return p.balance == nil
            case .anyDogYoungerThan(let n): return p.dogs.contains { (g.dogs[$0]?.age ?? .max) < n }
            case .allDogsOlderThan(let n): return p.dogs.allSatisfy { (g.dogs[$0]?.age ?? .min) > n }
            case .dogCountAbove(let n): return p.dogs.count > n
            case .walksAtLeast(let n): return p.walks.count >= n
            case .favoriteOlderThan(let n): return p.favorite.flatMap { g.dogs[$0] }.map { $0.age > n } ?? false
            case .and(let a, let b): return m(a) && m(b)
            case .or(let a, let b): return m(a) || m(b)
            case .not(let a): return !m(a)
            }
        }
        return m(condition)
    }

    /// The model's answer: person ids in result order (in key order when unsorted).
    func answer(_ g: ObjectGraphWorkload.Graph) -> [Int64] {
        var ids = g.persons.filter { matches($0.value, g) }.keys.sorted()
        guard !sorts.isEmpty else { return ids }
        func order(_ a: Int64, _ b: Int64) -> Bool {
            let x = g.persons[a]!, y = g.persons[b]!
            for (key, asc) in sorts {
                // nil sorts first, as the store's ObjectValue.order puts null first.
                let c: Int
                switch key {
                case .age: c = x.age == y.age ? 0 : (x.age < y.age ? -1 : 1)
                case .name:
                    c =
                        x.name == y.name
                        ? 0 : (Array(x.name.utf8).lexicographicallyPrecedes(Array(y.name.utf8)) ? -1 : 1)
                case .born: c = GraphQuery.order(x.born, y.born)
                case .balance: c = GraphQuery.order(x.balance, y.balance)
                }
                if c != 0 { return asc ? c < 0 : c > 0 }
            }
            return a < b
        }
        ids.sort(by: order)
        return limit.map { Array(ids.prefix($0)) } ?? ids
    }

    static func order<T: Comparable>(_ a: T?, _ b: T?) -> Int {
        switch (a, b) {
        case (nil, nil): return 0
        case (nil, _): return -1
        case (_, nil): return 1
        case (let x?, let y?): return x == y ? 0 : (x < y ? -1 : 1)
        }
    }

    // MARK: Checking a store

    /// Runs `count` random queries (from `seed`) on the store and compares each with the model.
    static func check(_ ctx: ObjectContext, _ g: ObjectGraphWorkload.Graph, v2: Bool, seed: UInt64, count: Int) throws
        -> [String]
    {
        var rng = SeededRandom(seed: seed)
        var out: [String] = []
        for _ in 0..<count {
            let q = GraphQuery.random(&rng)
            let want = q.answer(g)
            let (format, args) = q.format(balance: v2 ? "credit" : "balance")
            let sorts =
                q.sorts.map {
                    SortDescriptor(keyPath: v2 && $0.0 == .balance ? "credit" : $0.0.rawValue, ascending: $0.ascending)
                }
                + [SortDescriptor(keyPath: "id", ascending: true)]
            func run<T: Object>(_ r: Results<T>) throws -> [Int64] {
                var r = r
                if !q.sorts.isEmpty { r = r.sorted(by: sorts) }
                if let limit = q.limit { r = r.limit(limit) }
                let keys = try r.keys()
                return q.sorts.isEmpty ? keys.sorted() : keys
            }
            let byString =
                v2
                ? try run(ctx.objects(GraphV2.GraphPerson.self).filter(format, arguments: args))
                : try run(ctx.objects(GraphPerson.self).filter(format, arguments: args))
            if byString != want {
                out.append("query \(q.description): the store answers \(byString), the model \(want)")
            }
            if !v2, q.hasTypedForm {
                let byType = try run(ctx.objects(GraphPerson.self).where { q.typed($0)! })
                if byType != want {
                    out.append("typed query \(q.description): the store answers \(byType), the model \(want)")
                }
            }
            if out.count >= 3 { break }
        }
        return out
    }
}
