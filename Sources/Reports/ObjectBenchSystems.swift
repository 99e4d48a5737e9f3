import CSQLite
import Engine
import FiefObjects
import Foundation

/// One system under the objects suite. Both implementations answer the same questions on the
/// same data, so the workloads in `ObjectWorkloads` are written once.
protocol ObjectBenchSystem: AnyObject {
    var system: SystemName { get }
    func load(_ data: ObjectDataSet) throws
    /// Persons with age > `age` in `city` (a full scan: neither is indexed).
    func count(ageAbove age: Int, city: String) throws -> Int
    /// Names starting with `prefix` (the name index) among persons older than `age`.
    func prefixQuery(_ prefix: String, ageAbove age: Int) throws -> Int
    func nameLength(ofPerson id: Int64) throws -> Int
    /// The sum of every person's age, reading each.
    func sumOfAges() throws -> Int
    /// The ids of the `n` oldest persons (ties by id).
    func oldest(_ n: Int) throws -> [Int64]
    /// A person's dogs, and for each dog its owners' names: the links both ways.
    func walkLinks(ofPerson id: Int64) throws -> Int
    /// One durable write that adds one year to each person.
    func birthday(_ ids: [Int64]) throws
    /// One durable write that deletes persons, their dogs going with them.
    func delete(_ ids: [Int64]) throws
    /// One durable write that adds one person.
    func insertOne(_ id: Int64) throws
    /// One durable write that sets one person's age (the change `obj.notify` learns of).
    func setAge(_ id: Int64, _ age: Int) throws
    /// Brings a view of every person sorted by age up to date after `setAge`, and says what
    /// changed: Fief delivers an observed Results' change set, SQLite runs the query again.
    /// Returns the number of changed positions (or of rows read).
    func refreshSortedView() throws -> Int
    /// Ends what `refreshSortedView` keeps between calls (Fief: the observer and its context).
    func stopObserving()
    func fileBytes() -> UInt64
    func close()
    /// Commits made and pages they wrote so far (Fief only: pages per commit in the report).
    var commitCounts: Database.CommitCounts? { get }
    /// Pages and leaf fill per table (Fief only).
    func tableSpace() throws -> [TableSpace]
    /// Tree descents made so far by the reading context (Fief only).
    var treeDescents: Int? { get }
}

extension ObjectBenchSystem {
    var commitCounts: Database.CommitCounts? { nil }
    var treeDescents: Int? { nil }
    func tableSpace() throws -> [TableSpace] { [] }
    func stopObserving() {}
}

/// Fief's object layer.
final class FiefObjectSystem: ObjectBenchSystem {
    let system = SystemName.fief
    let path: String
    private var store: ObjectStore?
    private var ctx: ObjectContext
    /// obj.notify's observer: its own context, so its refresh is the only one that delivers.
    private var observer: (ctx: ObjectContext, token: NotificationToken, changes: LockedBox<Int>)?

    init(directory: String, durability: Durability, encryptionKey: [UInt8]? = nil) throws {
        path = directory + "/objects.fief"
        let s = try ObjectStore(
            Configuration(
                path: path, types: [BenchPerson.self, BenchDog.self], durability: durability,
                encryptionKey: encryptionKey))
        store = s
        ctx = s.context()
    }

    func load(_ data: ObjectDataSet) throws {
        var persons: [BenchPerson] = []
        persons.reserveCapacity(data.persons.count)
        for r in data.persons {
            let p = BenchPerson()
            p.id = r.id; p.name = r.name; p.age = r.age; p.city = r.city
            persons.append(p)
        }
        for d in data.dogs {
            let dog = BenchDog()
            dog.name = d.name; dog.age = d.age
            persons[d.owner].dogs.append(dog)
        }
        try ctx.write { try ctx.add(persons) }
    }

    func count(ageAbove age: Int, city: String) throws -> Int {
        try ctx.objects(BenchPerson.self).filter("age > %@ AND city == %@", age, city).countObjects()
    }

    func prefixQuery(_ prefix: String, ageAbove age: Int) throws -> Int {
        var n = 0
        for p in try ctx.objects(BenchPerson.self).filter("name BEGINSWITH %@ AND age > %@", prefix, age) {
            n += p.name.utf8.count
        }
        return n
    }

    func nameLength(ofPerson id: Int64) throws -> Int {
        try ctx.object(ofType: BenchPerson.self, forPrimaryKey: id)?.name.utf8.count ?? -1
    }

    func sumOfAges() throws -> Int {
        var sum = 0
        for p in ctx.objects(BenchPerson.self) { sum += p.age }
        return sum
    }

    func oldest(_ n: Int) throws -> [Int64] {
        try ctx.objects(BenchPerson.self).sorted(byKeyPath: "age", ascending: false).limit(n).objects().map(\.id)
    }

    func walkLinks(ofPerson id: Int64) throws -> Int {
        guard let p = try ctx.object(ofType: BenchPerson.self, forPrimaryKey: id) else { return -1 }
        var n = 0
        for d in p.dogs {
            n += d.name.utf8.count
            for o in d.owners { n += o.name.utf8.count }
        }
        return n
    }

    func birthday(_ ids: [Int64]) throws {
        try ctx.write {
            for id in ids { if let p = try ctx.object(ofType: BenchPerson.self, forPrimaryKey: id) { p.age += 1 } }
        }
    }

    func delete(_ ids: [Int64]) throws {
        try ctx.write {
            for id in ids {
                if let p = try ctx.object(ofType: BenchPerson.self, forPrimaryKey: id) { try ctx.delete(p) }
            }
        }
    }

    func insertOne(_ id: Int64) throws {
        try ctx.write {
            let p = BenchPerson()
            p.id = id; p.name = "n\(id)"; p.age = 1; p.city = "c0"
            try ctx.add(p)
        }
    }

    func setAge(_ id: Int64, _ age: Int) throws {
        try ctx.write { if let p = try ctx.object(ofType: BenchPerson.self, forPrimaryKey: id) { p.age = age } }
    }

    func stopObserving() {
        observer?.token.invalidate()
        observer = nil
    }

    func refreshSortedView() throws -> Int {
        if observer == nil, let store {
            let o = store.context()
            let changes = LockedBox(0)
            let token = o.objects(BenchPerson.self).sorted(byKeyPath: "age").observe { change in
                if case .update(_, let d, let i, let m) = change {
                    changes.mutate { $0 += d.count + i.count + m.count }
                }
            }
            observer = (o, token, changes)
        }
        guard let observer else { return 0 }
        try observer.ctx.refresh()
        let n = observer.changes.value
        observer.changes.mutate { $0 = 0 }
        return n
    }

    func fileBytes() -> UInt64 { fileSize(path) }

    var treeDescents: Int? { ctx.treeDescents }
    func close() { observer?.token.invalidate(); observer = nil; store = nil }
    var commitCounts: Database.CommitCounts? { store?.database.commitCounts }
    func tableSpace() throws -> [TableSpace] { try store?.database.stats(space: true).space ?? [] }
}

/// SQLite with the same columns, the same index, a foreign key with ON DELETE CASCADE,
/// prepared statements, WAL, and the durability paired with Fief's.
final class SQLiteObjectSystem: ObjectBenchSystem {
    let system = SystemName.sqlite
    let path: String
    private var db: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]

    init(directory: String, durability: Durability) throws {
        path = directory + "/objects.sqlite"
        guard
            sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
                == SQLITE_OK
        else {
            defer { sqlite3_close(db) }
            throw BenchError.peer(
                system: "sqlite", operation: "open \(path)",
                detail: db.map { String(cString: sqlite3_errmsg($0)) } ?? "")
        }
        try exec("PRAGMA journal_mode=WAL")
        try exec("PRAGMA synchronous=\(durability == .full ? "FULL" : "OFF")")
        try exec("PRAGMA foreign_keys=ON")
        try exec(
            "CREATE TABLE IF NOT EXISTS person(id INTEGER PRIMARY KEY, "
                + "name TEXT NOT NULL, age INTEGER NOT NULL, city TEXT NOT NULL)"
        )
        try exec("CREATE INDEX IF NOT EXISTS person_name ON person(name)")
        try exec(
            "CREATE TABLE IF NOT EXISTS dog(id INTEGER PRIMARY KEY, owner INTEGER NOT NULL "
                + "REFERENCES person(id) ON DELETE CASCADE, name TEXT NOT NULL, age INTEGER NOT NULL)"
        )
        try exec("CREATE INDEX IF NOT EXISTS dog_owner ON dog(owner)")
    }

    private func fail(_ op: String) -> BenchError {
        .peer(system: "sqlite", operation: op, detail: db.map { String(cString: sqlite3_errmsg($0)) } ?? "closed")
    }

    private func exec(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw fail(sql) }
    }

    /// A prepared statement, made once per connection.
    private func stmt(_ sql: String) throws -> OpaquePointer {
        if let s = statements[sql] { return s }
        var s: OpaquePointer?
        guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &s, nil) == SQLITE_OK, let s else {
            throw fail("prepare \(sql)")
        }
        statements[sql] = s
        return s
    }

    enum Bind { case int(Int64), text(String) }

    /// Runs `sql` with `binds`, calling `row` for each result row.
    private func query(_ sql: String, _ binds: [Bind] = [], _ row: (OpaquePointer) -> Void = { _ in }) throws {
        let s = try stmt(sql)
        defer { sqlite3_reset(s) }
        for (i, b) in binds.enumerated() {
            switch b {
            case .int(let v): sqlite3_bind_int64(s, Int32(i + 1), v)
            case .text(let t):
                sqlite3_bind_text(s, Int32(i + 1), t, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
            }
        }
        while true {
            let rc = sqlite3_step(s)
            if rc == SQLITE_DONE { return }
            guard rc == SQLITE_ROW else { throw fail(sql) }
            row(s)
        }
    }

    private func transaction(_ body: () throws -> Void) throws {
        try exec("BEGIN IMMEDIATE")
        do { try body() } catch { try? exec("ROLLBACK"); throw error }
        try exec("COMMIT")
    }

    func load(_ data: ObjectDataSet) throws {
        try transaction {
            for p in data.persons {
                try query(
                    "INSERT INTO person(id, name, age, city) VALUES(?1, ?2, ?3, ?4)",
                    [.int(p.id), .text(p.name), .int(Int64(p.age)), .text(p.city)])
            }
            for d in data.dogs {
                try query(
                    "INSERT INTO dog(owner, name, age) VALUES(?1, ?2, ?3)",
                    [.int(Int64(d.owner)), .text(d.name), .int(Int64(d.age))])
            }
        }
    }

    func count(ageAbove age: Int, city: String) throws -> Int {
        var n = 0
        try query("SELECT count(*) FROM person WHERE age > ?1 AND city = ?2", [.int(Int64(age)), .text(city)]) {
            n = Int(sqlite3_column_int64($0, 0))
        }
        return n
    }

    func prefixQuery(_ prefix: String, ageAbove age: Int) throws -> Int {
        var n = 0
        // A range on the index, as SQLite's LIKE would not use it under its default collation.
        let upper = String(prefix.dropLast()) + String(UnicodeScalar(prefix.unicodeScalars.last!.value + 1)!)
        try query(
            "SELECT name FROM person WHERE name >= ?1 AND name < ?2 AND age > ?3",
            [.text(prefix), .text(upper), .int(Int64(age))]
        ) {
            n += Int(sqlite3_column_bytes($0, 0))
        }
        return n
    }

    func nameLength(ofPerson id: Int64) throws -> Int {
        var n = -1
        try query("SELECT name FROM person WHERE id = ?1", [.int(id)]) {
            _ = sqlite3_column_text($0, 0); n = Int(sqlite3_column_bytes($0, 0))
        }
        return n
    }

    func sumOfAges() throws -> Int {
        var sum = 0
        try query("SELECT age FROM person") { sum += Int(sqlite3_column_int64($0, 0)) }
        return sum
    }

    func oldest(_ n: Int) throws -> [Int64] {
        var out: [Int64] = []
        try query("SELECT id FROM person ORDER BY age DESC, id LIMIT ?1", [.int(Int64(n))]) {
            out.append(sqlite3_column_int64($0, 0))
        }
        return out
    }

    func walkLinks(ofPerson id: Int64) throws -> Int {
        var dogs: [(Int64, Int)] = []
        try query("SELECT id, name FROM dog WHERE owner = ?1 ORDER BY id", [.int(id)]) { s in
            _ = sqlite3_column_text(s, 1)
            dogs.append((sqlite3_column_int64(s, 0), Int(sqlite3_column_bytes(s, 1))))
        }
        var n = 0
        for (dog, len) in dogs {
            n += len
            try query("SELECT p.name FROM dog d JOIN person p ON p.id = d.owner WHERE d.id = ?1", [.int(dog)]) {
                _ = sqlite3_column_text($0, 0); n += Int(sqlite3_column_bytes($0, 0))
            }
        }
        return n
    }

    func birthday(_ ids: [Int64]) throws {
        try transaction { for id in ids { try query("UPDATE person SET age = age + 1 WHERE id = ?1", [.int(id)]) } }
    }

    func delete(_ ids: [Int64]) throws {
        try transaction { for id in ids { try query("DELETE FROM person WHERE id = ?1", [.int(id)]) } }
    }

    func insertOne(_ id: Int64) throws {
        try transaction {
            try query("INSERT INTO person(id, name, age, city) VALUES(?1, ?2, 1, 'c0')", [.int(id), .text("n\(id)")])
        }
    }

    func setAge(_ id: Int64, _ age: Int) throws {
        try transaction { try query("UPDATE person SET age = ?2 WHERE id = ?1", [.int(id), .int(Int64(age))]) }
    }

    func refreshSortedView() throws -> Int {
        var ids: [Int64] = []
        try query("SELECT id FROM person ORDER BY age, id") { ids.append(sqlite3_column_int64($0, 0)) }
        return ids.count
    }

    func fileBytes() -> UInt64 {
        _ = try? exec("PRAGMA wal_checkpoint(TRUNCATE)")
        return fileSize(path) + fileSize(path + "-wal")
    }

    func close() {
        for s in statements.values { sqlite3_finalize(s) }
        statements = [:]
        sqlite3_close(db)
        db = nil
    }

    deinit { if db != nil { close() } }
}
