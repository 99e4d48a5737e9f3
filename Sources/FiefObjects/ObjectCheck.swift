import Engine

/// What `ObjectStore.check()` found: one line per problem, empty when the graph is sound.
public struct ObjectCheckReport: Sendable, CustomStringConvertible {
    public var problems: [String] = []
    public var objects = 0
    public var links = 0
    public var indexEntries = 0
    public var isSound: Bool { problems.isEmpty }
    public var description: String {
        isSound ? "objects sound: \(objects) objects, \(links) links, \(indexEntries) index entries"
            : "objects NOT sound (\(problems.count) problems):\n  " + problems.prefix(50).joined(separator: "\n  ")
    }
}

/// Recomputes everything the object layer keeps twice and compares: every row decodes,
/// every link resolves, backlinks are exactly the inverse of links, every index holds exactly
/// the entries its rows imply, primary keys are unique, list counts match list contents.
enum ObjectCheck {
    static func run(_ t: ObjectTables) throws -> ObjectCheckReport {
        var r = ObjectCheckReport()
        // Expected backlinks: target cid -> set of (target, origin cid, pid, origin) -> count.
        var expected: [UInt32: [[UInt8]: Int64]] = [:]
        for c in t.schema.classes.values.sorted(by: { $0.cid < $1.cid }) {
            var keys: [Int64] = []
            try t.keys(c) { k, _ in keys.append(k); return true }
            r.objects += keys.count
            var expectedIndex: [UInt32: Set<[UInt8]>] = [:]
            for k in keys {
                let vals: [UInt32: ObjectValue]
                do { vals = try t.values(c, k) } catch {
                    r.problems.append("\(c.name) \(k): row does not decode: \(error)")
                    continue
                }
                if let pk = c.primaryKey, pk.kind.isInteger, vals[pk.pid] != .int(k) {
                    r.problems.append("\(c.name) \(k): integer primary key \(vals[pk.pid] ?? .null) differs from the object key")
                }
                for p in c.properties where p.hasIndex {
                    expectedIndex[p.pid, default: []].insert(KeyBytes.indexValue(vals[p.pid] ?? .null) + KeyBytes.obj(k))
                }
                for p in c.storedProperties where p.list {
                    let items = try t.list(c, k, p)
                    if vals[p.pid] != .int(Int64(items.count)) {
                        r.problems.append("\(c.name) \(k).\(p.name): row says \(vals[p.pid] ?? .null) elements, list has \(items.count)")
                    }
                }
                for p in c.storedProperties where p.isLink {
                    guard let tc = p.target.flatMap({ t.schema.classes[$0] }) else {
                        r.problems.append("\(c.name).\(p.name): target class \(p.target ?? "?") missing from the schema")
                        continue
                    }
                    var targets: [Int64] = []
                    if p.list {
                        for v in try t.list(c, k, p) {
                            if case .link(let x) = v { targets.append(x) } else { r.problems.append("\(c.name) \(k).\(p.name): list element \(v) is not a link") }
                        }
                    } else if case .link(let x)? = vals[p.pid] {
                        targets.append(x)
                    }
                    for x in targets {
                        r.links += 1
                        if try !t.exists(tc, x) { r.problems.append("\(c.name) \(k).\(p.name): links to \(tc.name) \(x), which does not exist") }
                        expected[tc.cid, default: [:]][KeyBytes.backlink(target: x, originClass: c.cid, pid: p.pid, origin: k), default: 0] += 1
                    }
                }
            }
            for p in c.properties where p.hasIndex {
                var found = Set<[UInt8]>()
                let name = Tables.index(c.cid, p.pid)
                if try t.hasTable(name) {
                    try t.tx.scan(table: name) { k, _ in found.insert(Array(k)); return true }
                }
                r.indexEntries += found.count
                let want = expectedIndex[p.pid] ?? []
                if found != want {
                    r.problems.append("\(c.name).\(p.name): index has \(found.subtracting(want).count) stale and lacks \(want.subtracting(found).count) entries")
                }
                if p.primaryKey {
                    var seen = Set<[UInt8]>()
                    for e in want where !seen.insert(Array(e.dropLast(8))).inserted {
                        r.problems.append("\(c.name).\(p.name): primary key value appears more than once")
                    }
                }
            }
        }
        for c in t.schema.classes.values {
            var found: [[UInt8]: Int64] = [:]
            let name = Tables.backlinks(c.cid)
            if try t.hasTable(name) {
                try t.tx.scan(table: name) { k, v in found[Array(k)] = try Int64(valueBytes: v); return true }
            }
            let want = expected[c.cid] ?? [:]
            if found != want {
                let stale = found.filter { want[$0.key] != $0.value }.count
                let missing = want.filter { found[$0.key] != $0.value }.count
                r.problems.append("\(c.name): backlinks are not the inverse of links (\(stale) stale or wrong, \(missing) missing or wrong)")
            }
        }
        return r
    }
}
