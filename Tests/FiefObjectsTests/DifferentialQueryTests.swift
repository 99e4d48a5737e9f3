import XCTest
import Foundation
import CSQLite
import SeededRandomness
@testable import FiefObjects

/// Random predicates, sorts and limits run three ways on the same data: as NSPredicate-format
/// strings, as typed queries, and as SQL on SQLite (through libsqlite3). All must agree.
final class DifferentialQueryTests: XCTestCase {
    indirect enum P {
        case int(String, CompareOperator, Int)
        case str(CompareOperator, Bool, String)
        case dogCount(CompareOperator, Int)
        case anyDogAge(CompareOperator, Int)
        case between(Int, Int)
        case inList([Int])
        case and(P, P), or(P, P), not(P)

        var format: String {
            switch self {
            case .int(let f, let op, let v): return "\(f) \(op.rawValue) \(v)"
            case .str(let op, let ci, let v):
                return "name \(op == .equal ? "==" : op.rawValue)\(ci ? "[c]" : "") '\(v)'"
            case .dogCount(let op, let n): return "dogs.@count \(op.rawValue) \(n)"
            case .anyDogAge(let op, let n): return "ANY dogs.age \(op.rawValue) \(n)"
            case .between(let a, let b): return "age BETWEEN {\(a), \(b)}"
            case .inList(let vs): return "age IN {\(vs.map(String.init).joined(separator: ", "))}"
            case .and(let a, let b): return "(\(a.format) AND \(b.format))"
            case .or(let a, let b): return "(\(a.format) OR \(b.format))"
            case .not(let a): return "NOT (\(a.format))"
            }
        }

        var sql: String {
            func o(_ op: CompareOperator) -> String { op == .equal ? "=" : op.rawValue }
            switch self {
            case .int(let f, let op, let v): return "\(f) \(o(op)) \(v)"
            case .str(let op, let ci, let v):
                let col = ci ? "lower(name)" : "name", lit = ci ? "lower('\(v)')" : "'\(v)'"
                switch op {
                case .beginsWith: return "substr(\(col), 1, \(v.count)) = \(lit)"
                case .endsWith: return "substr(\(col), -\(v.count)) = \(lit)"
                case .contains: return "instr(\(col), \(lit)) > 0"
                default: return "\(col) = \(lit)"
                }
            case .dogCount(let op, let n):
                return "(SELECT count(*) FROM person_dogs pd WHERE pd.person = person.id) \(o(op)) \(n)"
            case .anyDogAge(let op, let n):
                return
                    "EXISTS (SELECT 1 FROM person_dogs pd JOIN dog d ON d.id = pd.dog "
                    + "WHERE pd.person = person.id AND d.age \(o(op)) \(n))"
            case .between(let a, let b): return "age BETWEEN \(a) AND \(b)"
            case .inList(let vs): return "age IN (\(vs.map(String.init).joined(separator: ", ")))"
            case .and(let a, let b): return "(\(a.sql) AND \(b.sql))"
            case .or(let a, let b): return "(\(a.sql) OR \(b.sql))"
            case .not(let a): return "NOT (\(a.sql))"
            }
        }

        func typed(_ q: Query<Person>) -> Query<Bool> {
            func int(_ x: Query<Int>, _ op: CompareOperator, _ v: Int) -> Query<Bool> {
                switch op {
                case .equal: return x == v
                case .notEqual: return x != v
                case .less: return x < v
                case .lessOrEqual: return x <= v
                case .greater: return x > v
                default: return x >= v
                }
            }
            switch self {
            case .int(let f, let op, let v):
                if f == "id" {
                    switch op {
                    case .equal: return q.id == Int64(v)
                    case .notEqual: return q.id != Int64(v)
                    case .less: return q.id < Int64(v)
                    case .lessOrEqual: return q.id <= Int64(v)
                    case .greater: return q.id > Int64(v)
                    default: return q.id >= Int64(v)
                    }
                }
                return int(q.age, op, v)
            case .str(let op, let ci, let v):
                switch op {
                case .beginsWith: return q.name.starts(with: v, caseInsensitive: ci)
                case .endsWith: return q.name.ends(with: v, caseInsensitive: ci)
                case .contains: return q.name.contains(v, caseInsensitive: ci)
                default: return q.name.equals(v, caseInsensitive: ci)
                }
            case .dogCount(let op, let n): return int(q.dogs.count, op, n)
            case .anyDogAge(let op, let n): return int(q.dogs.age, op, n)
            case .between(let a, let b): return q.age.contains(a...b)
            case .inList(let vs): return q.age.in(vs)
            case .and(let a, let b): return a.typed(q) && b.typed(q)
            case .or(let a, let b): return a.typed(q) || b.typed(q)
            case .not(let a): return !a.typed(q)
            }
        }
    }

    static let ops: [CompareOperator] = [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual]
    static let strOps: [CompareOperator] = [.equal, .beginsWith, .endsWith, .contains]

    func randomName(_ rng: inout SeededRandom) -> String {
        String((0..<Int.random(in: 1...3, using: &rng)).map { _ in Array("aAbB")[Int.random(in: 0..<4, using: &rng)] })
    }

    func randomP(_ rng: inout SeededRandom, depth: Int) -> P {
        let leaf = depth >= 3 || Int.random(in: 0..<3, using: &rng) > 0
        if leaf {
            switch Int.random(in: 0..<7, using: &rng) {
            case 0: return .int("id", Self.ops.randomElement(using: &rng)!, Int.random(in: -5...310, using: &rng))
            case 1: return .int("age", Self.ops.randomElement(using: &rng)!, Int.random(in: -1...61, using: &rng))
            case 2: return .str(Self.strOps.randomElement(using: &rng)!, Bool.random(using: &rng), randomName(&rng))
            case 3: return .dogCount(Self.ops.randomElement(using: &rng)!, Int.random(in: 0...3, using: &rng))
            case 4: return .anyDogAge(Self.ops.randomElement(using: &rng)!, Int.random(in: 0...15, using: &rng))
            case 5:
                let a = Int.random(in: 0...60, using: &rng); return .between(a, a + Int.random(in: 0...20, using: &rng))
            default:
                return .inList(
                    (0..<Int.random(in: 0...4, using: &rng)).map { _ in Int.random(in: 0...60, using: &rng) })
            }
        }
        switch Int.random(in: 0..<3, using: &rng) {
        case 0: return .and(randomP(&rng, depth: depth + 1), randomP(&rng, depth: depth + 1))
        case 1: return .or(randomP(&rng, depth: depth + 1), randomP(&rng, depth: depth + 1))
        default: return .not(randomP(&rng, depth: depth + 1))
        }
    }

    func testRandomQueriesAgreeWithSQLite() throws {
        let seed = testSeed("DifferentialQueryTests", default: 5)
        var rng = SeededRandom(seed: seed)
        let dir = TempDir()
        let store = try openZoo(dir)
        let ctx = store.context()
        var db: OpaquePointer?
        XCTAssertEqual(sqlite3_open(dir.file("peer.sqlite"), &db), SQLITE_OK)
        defer { sqlite3_close(db) }
        func exec(_ s: String) {
            XCTAssertEqual(
                sqlite3_exec(db, s, nil, nil, nil), SQLITE_OK, String(cString: sqlite3_errmsg(db)) + " in " + s)
        }
        exec("CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER NOT NULL)")
        exec("CREATE TABLE dog(id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER NOT NULL)")
        exec("CREATE TABLE person_dogs(person INTEGER, pos INTEGER, dog INTEGER)")
        exec("BEGIN")
        var dogKeys: [Int64] = []
        try ctx.write {
            for id in 0..<300 {
                let name = randomName(&rng), age = Int.random(in: 0..<60, using: &rng)
                let p = try ctx.create(Person.self, value: ["id": id, "name": name, "age": age])
                exec("INSERT INTO person VALUES(\(id), '\(name)', \(age))")
                for pos in 0..<Int.random(in: 0...3, using: &rng) {
                    if !dogKeys.isEmpty && Int.random(in: 0..<4, using: &rng) == 0 {
                        let k = dogKeys.randomElement(using: &rng)!
                        p.dogs.append(ctx.objects(Dog.self).first { $0.objectKey == k }!)
                        exec("INSERT INTO person_dogs VALUES(\(id), \(pos), \(k))")
                    } else {
                        let d = Dog()
                        d.name = randomName(&rng)
                        d.age = Int.random(in: 0..<15, using: &rng)
                        p.dogs.append(d)
                        let k = p.dogs[pos].objectKey!
                        dogKeys.append(k)
                        exec("INSERT INTO dog VALUES(\(k), '\(d.name)', \(d.age))")
                        exec("INSERT INTO person_dogs VALUES(\(id), \(pos), \(k))")
                    }
                }
            }
        }
        exec("COMMIT")
        let all = ctx.objects(Person.self)
        for n in 0..<150 {
            let p = randomP(&rng, depth: 0)
            let sortKind = Int.random(in: 0..<4, using: &rng)
            let limit = Bool.random(using: &rng) ? Int.random(in: 0...20, using: &rng) : nil
            var byString = try all.filter(p.format)
            var typed = all.where { p.typed($0) }
            var order = "id"
            switch sortKind {
            case 1:
                byString = byString.sorted(byKeyPath: "age", ascending: false);
                typed = typed.sorted(by: \.age, ascending: false); order = "age DESC, id"
            case 2:
                byString = byString.sorted(by: [SortDescriptor(keyPath: "name"), SortDescriptor(keyPath: "age")]);
                typed = typed.sorted(by: [SortDescriptor(keyPath: "name"), SortDescriptor(keyPath: "age")]);
                order = "name, age, id"
            case 3: byString = byString.sorted(byKeyPath: "name"); typed = typed.sorted(by: \.name); order = "name, id"
            default: break
            }
            if let limit { byString = byString.limit(limit); typed = typed.limit(limit) }
            let sql = "SELECT id FROM person WHERE \(p.sql) ORDER BY \(order)" + (limit.map { " LIMIT \($0)" } ?? "")
            var stmt: OpaquePointer?
            XCTAssertEqual(sqlite3_prepare_v2(db, sql, -1, &stmt, nil), SQLITE_OK, sql)
            var expected: [Int64] = []
            while sqlite3_step(stmt) == SQLITE_ROW { expected.append(sqlite3_column_int64(stmt, 0)) }
            sqlite3_finalize(stmt)
            XCTAssertEqual(byString.map(\.id), expected, "query \(n): \(p.format) | \(sql)")
            XCTAssertEqual(typed.map(\.id), expected, "typed query \(n): \(p.format)")
            // Counted without making keys, on fresh results (no cached keys to count).
            let fresh = try all.filter(p.format).limit(limit ?? .max)
            XCTAssertEqual(try fresh.countObjects(), expected.count, "count of query \(n): \(p.format)")
        }
    }
}
