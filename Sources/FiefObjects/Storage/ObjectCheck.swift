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
    /// that rows keep, by target class, compared once every class is walked. Flat sorted values
    /// (`CheckFacts.swift`), not sets of byte arrays: a check of a large store is bounded by
    /// a few dozen bytes an object, and sorts instead of hashing.
    private struct Walk {
        let t: ObjectTables
        var report = ObjectCheckReport()
        var expected: [UInt32: BacklinkCounts] = [:]
        var keptInRows: [UInt32: BacklinkCounts] = [:]

        init(t: ObjectTables) { self.t = t }

        /// What a class's rows are checked for, worked out once per class and not per row.
        struct ClassFacts {
            let c: ClassSchema
            let plan: ObjectTables.ClassPlan
            let indexed: [Property]
            let lists: [Property]
            let links: [Property]
            let chunked: Set<ListID>
        }

        mutating func checkClass(_ c: ClassSchema) throws {
            let (keys, clusterProblems) = try t.checkedKeys(c)
            report.problems += clusterProblems
            report.objects += keys.count
            report.problems += try keyCounterProblems(t, c, keys)
            // Sorted for the binary search, though clusters give keys in order: a damaged file's may not be.
            let (chunkProblems, chunked) = try listChunkProblems(t, c, keys.sorted())
            report.problems += chunkProblems
            let stored = c.storedProperties
            let facts = ClassFacts(
                c: c, plan: t.plan(c), indexed: c.properties.filter(\.hasIndex), lists: stored.filter(\.list),
                links: stored.filter(\.isLink), chunked: chunked)
            var expectedIndex = [ByteStrings](repeating: ByteStrings(), count: facts.indexed.count)
            for k in keys { try checkRow(facts, k, expectedIndex: &expectedIndex) }
            for (i, p) in facts.indexed.enumerated() { try checkIndex(facts, p, want: expectedIndex[i]) }
        }

        /// One object: its row decodes, its integer primary key is its key, its lists and links
        /// are sound; notes the index entries and backlinks it implies.
        mutating func checkRow(_ f: ClassFacts, _ k: Int64, expectedIndex: inout [ByteStrings]) throws {
            // One descent for the row, which the values, backlinks and lists below all read. The
            // tables are taken out of `self` first: the closure changes `self`, and reading
            // `self.t` for the call would overlap that access.
            let tables = t
            var lent = false, missing = false
            do {
                try tables.withRow(f.plan, k) { row in
                    lent = true
                    guard let row else {
                        missing = true
                        return
                    }
                    try checkLentRow(f, k, row: row, expectedIndex: &expectedIndex)
                }
            } catch {
                // The lookup itself failed (a damaged cluster): a problem of this row, as a
                // failed decode of it is, not the end of the check.
                guard !lent else { throw error }
                report.problems.append("\(f.c.name) \(k): row does not decode: \(error)")
            }
            if missing {
                report.problems.append(
                    "\(f.c.name) \(k): row does not decode: \(ObjectError.objectDeleted(className: f.c.name))")
            }
        }

        private mutating func checkLentRow(
            _ f: ClassFacts, _ k: Int64, row: UnsafeRawBufferPointer, expectedIndex: inout [ByteStrings]
        ) throws {
            let c = f.c
            let vals: PidMap<ObjectValue>
            do { vals = try t.values(f.plan, k, checkingRow: row) } catch {
                report.problems.append("\(c.name) \(k): row does not decode: \(error)")
                return
            }
            for e in try t.rowBacklinks(f.plan, row: row) {
                keptInRows[c.cid, default: BacklinkCounts()].add(
                    BacklinkFact(target: k, cid: e.cid, pid: e.pid, origin: e.origin), e.count)
            }
            if let pk = c.primaryKey, pk.kind.isInteger, vals[pk.pid] != .int(k) {
                report.problems.append(
                    "\(c.name) \(k): integer primary key \(vals[pk.pid] ?? .null) differs from the object key")
            }
            let compact = f.plan.compactIndexKeys
            for (i, p) in f.indexed.enumerated() {
                expectedIndex[i].append { out in
                    KeyBytes.appendIndexValue(vals[p.pid] ?? .null, to: &out)
                    KeyBytes.appendEntryKey(k, compact: compact, to: &out)
                }
            }
            var items: PidMap<[ObjectValue]> = [:]
            for p in f.lists { items[p.pid] = try checkList(f, k, p, vals, row: row) }
            for p in f.links { try checkLinks(c, k, p, vals, items: items[p.pid] ?? []) }
        }

        /// A list is kept in its row or in chunks, never both, and its row holds its count.
        /// Returns the list's elements.
        mutating func checkList(
            _ f: ClassFacts, _ k: Int64, _ p: Property, _ vals: PidMap<ObjectValue>, row: UnsafeRawBufferPointer
        ) throws -> [ObjectValue] {
            let c = f.c
            if f.chunked.contains(ListID(key: k, pid: p.pid)), try t.keepsListInRow(f.plan, p, row: row) {
                report.problems.append(
                    "\(c.name) \(k).\(p.name): the row keeps the list, and fief/l holds chunks of it too")
            }
            let items = try t.list(f.plan, k, p, ownerRow: row)
            if vals[p.pid] != .int(Int64(items.count)) {
                report.problems.append(
                    "\(c.name) \(k).\(p.name): "
                        + "row says \(vals[p.pid] ?? .null) elements, list has \(items.count)"
                )
            }
            return items
        }

        /// Every link of a link property resolves; each one implies a backlink.
        /// `items`: the list's elements, for a list of links.
        mutating func checkLinks(
            _ c: ClassSchema, _ k: Int64, _ p: Property, _ vals: PidMap<ObjectValue>, items: [ObjectValue]
        ) throws {
            guard let tc = p.target.flatMap({ t.schema.classes[$0] }) else {
                report.problems.append("\(c.name).\(p.name): target class \(p.target ?? "?") missing from the schema")
                return
            }
            var targets: [Int64] = []
            if p.list {
                for v in items {
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
                expected[tc.cid, default: BacklinkCounts()].add(
                    BacklinkFact(target: x, cid: c.cid, pid: p.pid, origin: k), 1)
            }
        }

        /// An index holds exactly the entries its rows imply; a primary key's, each value once.
        mutating func checkIndex(_ f: ClassFacts, _ p: Property, want: ByteStrings) throws {
            let c = f.c
            var found = ByteStrings()
            let name = Tables.index(c.cid, p.pid)
            if try t.hasTable(name) {
                try t.tx.scan(table: name) { k, _ in
                    found.append(k)
                    return true
                }
            }
            report.indexEntries += found.count
            let (stale, lacking) = ByteStrings.differences(found, want)
            if stale > 0 || lacking > 0 {
                report.problems.append("\(c.name).\(p.name): index has \(stale) stale and lacks \(lacking) entries")
            }
            if p.primaryKey {
                let compact = f.plan.compactIndexKeys
                let repeats = want.mapped {
                    UnsafeRawBufferPointer(rebasing: KeyBytes.indexEntryValue($0, compact: compact))
                }
                .repeats
                if repeats > 0 {
                    report.problems.append(
                        "\(c.name).\(p.name): primary key value appears more than once (\(repeats) repeats)")
                }
            }
        }

        /// A class's backlinks, in its rows and in `fief/b` (never both), are exactly the
        /// inverse of the links to it.
        mutating func checkBacklinks(_ c: ClassSchema) throws {
            var table = BacklinkCounts()
            var misshapen = 0
            let name = Tables.backlinks(c.cid)
            if try t.hasTable(name) {
                try t.tx.scan(table: name) { k, v in
                    guard k.count == 24 else {
                        misshapen += 1
                        return true
                    }
                    table.add(
                        BacklinkFact(
                            target: KeyBytes.readObj(k, at: 0), cid: KeyBytes.readU32(k, at: 8),
                            pid: KeyBytes.readU32(k, at: 12), origin: KeyBytes.readObj(k, at: 16)),
                        try Int64(valueBytes: v))
                    return true
                }
                if misshapen > 0 { report.problems.append("\(c.name): \(misshapen) fief/b keys are not 24 bytes") }
            }
            let (found, both) = BacklinkCounts.union(keptInRows[c.cid] ?? BacklinkCounts(), table)
            if both > 0 {
                report.problems.append("\(c.name): \(both) backlinks are kept both in their target's row and in fief/b")
            }
            var want = expected[c.cid] ?? BacklinkCounts()
            want.settle()
            var (stale, missing) = BacklinkCounts.differences(found: found, want: want)
            // A key of another size stands for no backlink the links imply: stale, as before
            // this check read keys as facts.
            stale += misshapen
            if stale > 0 || missing > 0 {
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

    /// Whether sorted `keys` hold `k`: a binary search, where a set of the keys would cost a
    /// hash table the size of the class.
    static func sorted(_ keys: [Int64], contains k: Int64) -> Bool {
        var lo = 0, hi = keys.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if keys[mid] < k { lo = mid + 1 } else { hi = mid }
        }
        return lo < keys.count && keys[lo] == k
    }

    /// One object's list: its key and the list property's id.
    struct ListID: Hashable {
        let key: Int64
        let pid: UInt32
    }

    /// Every list chunk belongs to an object that exists and to one of its list properties;
    /// an object's chunks of one list are numbered from 0 without a gap, and all but the last
    /// hold exactly `ObjectTables.listChunk` elements (none is empty). Lists of properties a
    /// migration retired keep their chunks (as rows keep retired values), even past a delete.
    /// Also returns the lists that have chunks.
    /// `sortedKeys`: the class's keys in order.
    private static func listChunkProblems(_ t: ObjectTables, _ c: ClassSchema, _ sortedKeys: [Int64]) throws -> (
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
                    if !sorted(sortedKeys, contains: key) {
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
