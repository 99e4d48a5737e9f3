import Engine

/// What `ObjectStore.check()` found: one line per problem, empty when the graph is sound.
public struct ObjectCheckReport: Sendable, CustomStringConvertible {
    public var problems: [String] = []
    public var objects = 0
    public var links = 0
    public var indexEntries = 0
    public var isSound: Bool { problems.isEmpty }
    public var description: String {
        isSound
            ? "objects sound: \(objects) objects, \(links) links, \(indexEntries) index entries"
            : "objects NOT sound (\(problems.count) problems):\n  " + problems.prefix(50).joined(separator: "\n  ")
    }
}

/// Recomputes everything the object layer keeps twice and compares: every cluster and every
/// row decodes, the object counts match the clusters,
/// every link resolves, backlinks are exactly the inverse of links, every index holds exactly
/// the entries its rows imply (so a unique index, a String or UUID primary key, holds one entry
/// per object), primary keys are unique, list counts match list contents, a list kept in its
/// row has no chunks, list chunks are
/// numbered 0, 1, 2, ... and full but for the last, and every key counter is above every key
/// in use.
enum ObjectCheck {
    static func run(_ t: ObjectTables) throws -> ObjectCheckReport {
        if t.writer != nil { try t.applyPendingIndexes() }
        var walk = Walk(t: t)
        for c in t.schema.classes.values.sorted(by: { $0.cid < $1.cid }) { try walk.checkClass(c) }
        for c in t.schema.classes.values { try walk.checkBacklinks(c) }
        return walk.report
    }

    /// One check's state: the report so far, and the backlinks that the links imply and those
    /// that rows keep, compared once every class is walked.
    private struct Walk {
        let t: ObjectTables
        var report = ObjectCheckReport()
        /// Expected backlinks: target cid -> set of (target, origin cid, pid, origin) -> count;
        /// and those the targets' rows keep, in the same form.
        var expected: [UInt32: [[UInt8]: Int64]] = [:]
        var keptInRows: [UInt32: [[UInt8]: Int64]] = [:]

        init(t: ObjectTables) { self.t = t }

        mutating func checkClass(_ c: ClassSchema) throws {
            let (keys, clusterProblems) = try t.checkedKeys(c)
            report.problems += clusterProblems
            report.objects += keys.count
            report.problems += try keyCounterProblems(t, c, keys)
            let (chunkProblems, chunked) = try listChunkProblems(t, c, Set(keys))
            report.problems += chunkProblems
            var expectedIndex: [UInt32: Set<[UInt8]>] = [:]
            for k in keys { try checkRow(c, k, chunked: chunked, expectedIndex: &expectedIndex) }
            for p in c.properties where p.hasIndex { try checkIndex(c, p, want: expectedIndex[p.pid] ?? []) }
        }

        /// One object: its row decodes, its integer primary key is its key, its lists and links
        /// are sound; notes the index entries and backlinks it implies.
        mutating func checkRow(
            _ c: ClassSchema, _ k: Int64, chunked: Set<ListID>, expectedIndex: inout [UInt32: Set<[UInt8]>]
        ) throws {
            let vals: PidMap<ObjectValue>
            do { vals = try t.values(c, k) } catch {
                report.problems.append("\(c.name) \(k): row does not decode: \(error)")
                return
            }
            for e in try t.rowBacklinks(c, k) {
                keptInRows[c.cid, default: [:]][
                    KeyBytes.backlink(target: k, originClass: e.cid, pid: e.pid, origin: e.origin)] = e.count
            }
            if let pk = c.primaryKey, pk.kind.isInteger, vals[pk.pid] != .int(k) {
                report.problems.append(
                    "\(c.name) \(k): integer primary key \(vals[pk.pid] ?? .null) differs from the object key")
            }
            for p in c.properties where p.hasIndex {
                expectedIndex[p.pid, default: []].insert(t.indexEntry(t.plan(c), vals[p.pid] ?? .null, k))
            }
            for p in c.storedProperties where p.list { try checkList(c, k, p, vals, chunked: chunked) }
            for p in c.storedProperties where p.isLink { try checkLinks(c, k, p, vals) }
        }

        /// A list is kept in its row or in chunks, never both, and its row holds its count.
        mutating func checkList(
            _ c: ClassSchema, _ k: Int64, _ p: Property, _ vals: PidMap<ObjectValue>, chunked: Set<ListID>
        ) throws {
            if chunked.contains(ListID(key: k, pid: p.pid)), try t.keepsListInRow(c, k, p) {
                report.problems.append(
                    "\(c.name) \(k).\(p.name): the row keeps the list, and fief/l holds chunks of it too")
            }
            let items = try t.list(c, k, p)
            if vals[p.pid] != .int(Int64(items.count)) {
                report.problems.append(
                    "\(c.name) \(k).\(p.name): "
                        + "row says \(vals[p.pid] ?? .null) elements, list has \(items.count)"
                )
            }
        }

        /// Every link of a link property resolves; each one implies a backlink.
        mutating func checkLinks(_ c: ClassSchema, _ k: Int64, _ p: Property, _ vals: PidMap<ObjectValue>)
            throws
        {
            guard let tc = p.target.flatMap({ t.schema.classes[$0] }) else {
                report.problems.append("\(c.name).\(p.name): target class \(p.target ?? "?") missing from the schema")
                return
            }
            var targets: [Int64] = []
            if p.list {
                for v in try t.list(c, k, p) {
                    if case .link(let x) = v {
                        targets.append(x)
                    } else {
                        report.problems.append("\(c.name) \(k).\(p.name): list element \(v) is not a link")
                    }
                }
            } else if case .link(let x)? = vals[p.pid] {
                targets.append(x)
            }
            for x in targets {
                report.links += 1
                if try !t.exists(tc, x) {
                    report.problems.append("\(c.name) \(k).\(p.name): links to \(tc.name) \(x), which does not exist")
                }
                expected[tc.cid, default: [:]][
                    KeyBytes.backlink(target: x, originClass: c.cid, pid: p.pid, origin: k), default: 0] += 1
            }
        }

        /// An index holds exactly the entries its rows imply; a primary key's, each value once.
        mutating func checkIndex(_ c: ClassSchema, _ p: Property, want: Set<[UInt8]>) throws {
            var found = Set<[UInt8]>()
            let name = Tables.index(c.cid, p.pid)
            if try t.hasTable(name) {
                try t.tx.scan(table: name) { k, _ in
                    found.insert(Array(k)); return true
                }
            }
            report.indexEntries += found.count
            if found != want {
                report.problems.append(
                    "\(c.name).\(p.name): index has \(found.subtracting(want).count) stale "
                        + "and lacks \(want.subtracting(found).count) entries"
                )
            }
            if p.primaryKey {
                var seen = Set<[UInt8]>()
                let compact = t.plan(c).compactIndexKeys
                for e in want where !seen.insert(Array(KeyBytes.indexEntryValue(e, compact: compact))).inserted {
                    report.problems.append("\(c.name).\(p.name): primary key value appears more than once")
                }
            }
        }

        /// A class's backlinks, in its rows and in `fief/b` (never both), are exactly the
        /// inverse of the links to it.
        mutating func checkBacklinks(_ c: ClassSchema) throws {
            var found = keptInRows[c.cid] ?? [:]
            let name = Tables.backlinks(c.cid)
            if try t.hasTable(name) {
                var both = 0
                try t.tx.scan(table: name) { k, v in
                    if found.updateValue(try Int64(valueBytes: v), forKey: Array(k)) != nil { both += 1 }
                    return true
                }
                if both > 0 {
                    report.problems.append(
                        "\(c.name): \(both) backlinks are kept both in their target's row and in fief/b")
                }
            }
            let want = expected[c.cid] ?? [:]
            if found != want {
                let stale = found.filter { want[$0.key] != $0.value }.count
                let missing = want.filter { found[$0.key] != $0.value }.count
                report.problems.append(
                    "\(c.name): backlinks are not the inverse of links "
                        + "(\(stale) stale or wrong, \(missing) missing or wrong)"
                )
            }
        }
    }

    /// A class without an integer primary key takes keys from a counter in `fief/meta`
    /// (`ObjectTables.nextKey`): a counter at or below a key in use would give that key again.
    private static func keyCounterProblems(_ t: ObjectTables, _ c: ClassSchema, _ keys: [Int64]) throws -> [String] {
        if let pk = c.primaryKey, pk.kind.isInteger { return [] }
        guard let highest = keys.max() else { return [] }
        let next = try t.keyCounter(c)
        return next > highest ? [] : ["\(c.name): key counter \(next) is not above key \(highest), which is in use"]
    }

    /// Every list chunk belongs to an object that exists and to one of its list properties;
    /// an object's chunks of one list are numbered from 0 without a gap, and all but the last
    /// hold exactly `ObjectTables.listChunk` elements (none is empty). Lists of properties a
    /// migration retired keep their chunks (as rows keep retired values), even past a delete.
    struct ListID: Hashable {
        let key: Int64
        let pid: UInt32
    }

    /// Also returns the lists that have chunks.
    private static func listChunkProblems(_ t: ObjectTables, _ c: ClassSchema, _ keys: Set<Int64>) throws -> (
        [String], Set<ListID>
    ) {
        let table = Tables.lists(c.cid)
        guard try t.hasTable(table) else { return ([], []) }
        var chunked = Set<ListID>()
        let lists = Set(c.storedProperties.filter(\.list).map(\.pid))
        let retired = Set(c.retired.filter(\.list).map(\.pid))
        var out: [String] = []
        var last: (key: Int64, pid: UInt32, chunk: UInt32, count: Int)?
        func endOfList() {
            guard let l = last, l.count == 0 else { return }
            out.append("\(c.name) \(l.key): list \(l.pid) ends with an empty chunk \(l.chunk)")
        }
        try t.tx.scan(table: table) { k, v in
            guard k.count == 16 else {
                out.append("\(c.name): list chunk key of \(k.count) bytes"); return out.count < 20
            }
            let key = KeyBytes.readObj(k, at: 0), pid = KeyBytes.readU32(k, at: 8), chunk = KeyBytes.readU32(k, at: 12)
            let count = try t.decodeGuarded { try TaggedValue.decodeAll(v).count }
            chunked.insert(ListID(key: key, pid: pid))
            if let l = last, l.key == key, l.pid == pid {
                if chunk != l.chunk + 1 {
                    out.append("\(c.name) \(key): list \(pid) chunk \(chunk) follows chunk \(l.chunk)")
                }
                if l.count != ObjectTables.listChunk {
                    out.append(
                        "\(c.name) \(key): list \(pid) chunk \(l.chunk) holds \(l.count) elements, "
                            + "not \(ObjectTables.listChunk), yet is not the last"
                    )
                }
            } else {
                endOfList()
                if !retired.contains(pid) {
                    if !keys.contains(key) {
                        out.append("\(c.name) \(key): list chunks of an object that does not exist")
                    }
                    if !lists.contains(pid) {
                        out.append("\(c.name) \(key): list chunks of property \(pid), which is not a list")
                    }
                }
                if chunk != 0 { out.append("\(c.name) \(key): list \(pid) starts at chunk \(chunk), not 0") }
            }
            last = (key, pid, chunk, count)
            return out.count < 20
        }
        endOfList()
        return (out, chunked)
    }
}
