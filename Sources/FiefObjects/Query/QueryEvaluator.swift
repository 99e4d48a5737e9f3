import Foundation

/// Where a result set's candidates come from.
enum ResultsSource {
    case all
    /// The elements of a list property of one object: (class, key, property).
    case list(String, Int64, String)
    /// The origins linking to one object through a linking-objects property: (class, key, property).
    case backlinks(String, Int64, String)

    /// A list's objects or an object's linking objects: a few keys, each found on its own.
    var isLinked: Bool {
        if case .all = self { return false }
        return true
    }
}

/// Runs queries over `ObjectTables`: checks a predicate against the schema, picks an index
/// or primary-key plan where one applies, filters, sorts and limits.
struct QueryEvaluator {
    let t: ObjectTables

    // MARK: Validation

    /// Resolves every key path against the schema and refuses comparisons that cannot match
    /// by type, with the position in the query string.
    func validate(_ p: Predicate, _ root: ClassSchema, vars: [String: ClassSchema] = [:]) throws {
        switch p {
        case .constant: return
        case .and(let ps), .or(let ps): for q in ps { try validate(q, root, vars: vars) }
        case .not(let q): try validate(q, root, vars: vars)
        case .compare(let l, let op, let r, _, _):
            let lt = try type(of: l, root, vars), rt = try type(of: r, root, vars)
            try checkComparable(lt, rt, op, position(l) ?? position(r) ?? 1)
        case .between(let x, let lo, let hi, _):
            let xt = try type(of: x, root, vars)
            try checkComparable(xt, try type(of: lo, root, vars), .greaterOrEqual, position(x) ?? 1)
            try checkComparable(xt, try type(of: hi, root, vars), .lessOrEqual, position(x) ?? 1)
        case .in(let l, let r, _):
            let lt = try type(of: l, root, vars), rt = try type(of: r, root, vars)
            try checkComparable(lt, rt, .equal, position(l) ?? position(r) ?? 1)
        }
    }

    /// The kind of value an expression yields (nil: any, as for the null constant).
    private func type(of e: QueryExpression, _ root: ClassSchema, _ vars: [String: ClassSchema]) throws -> PropertyKind?
    {
        switch e {
        case .value(let v): return kind(of: v)
        case .values(let vs): return vs.lazy.compactMap { kind(of: $0) }.first
        case .keyPath(let k): return try resolve(k, root, vars).kind
        case .aggregate(let k, let op, let rest):
            let last = try resolve(k, root, vars)
            guard last.collection else {
                throw QueryError.typeMismatch(
                    position: k.position,
                    detail:
                        "\(op.rawValue) needs a list or linking objects, "
                        + "\(k.components.joined(separator: ".")) is neither"
                )
            }
            if op == .count { return .int }
            if rest.isEmpty {
                guard last.kind != .object else {
                    throw QueryError.typeMismatch(
                        position: k.position,
                        detail:
                            "\(op.rawValue) of objects needs a property: "
                            + "\(k.components.joined(separator: ".")).\(op.rawValue).<property>"
                    )
                }
                guard last.kind.isNumeric || last.kind == .date || op == .min || op == .max else {
                    throw QueryError.typeMismatch(position: k.position, detail: "\(op.rawValue) needs numbers")
                }
                return op == .avg ? .double : last.kind
            }
            guard let target = last.target else {
                throw QueryError.typeMismatch(
                    position: k.position,
                    detail: "\(op.rawValue).\(rest.joined(separator: ".")) needs a list of objects")
            }
            let inner = try resolve(KeyPathExpression(components: rest, position: k.position), target, vars)
            guard inner.kind.isNumeric || inner.kind == .date else {
                throw QueryError.typeMismatch(
                    position: k.position,
                    detail:
                        "\(op.rawValue) needs a numeric property, "
                        + "\(rest.joined(separator: ".")) is \(inner.kind.rawValue)"
                )
            }
            return op == .avg ? .double : inner.kind
        case .subqueryCount(let k, let v, let pred):
            let last = try resolve(k, root, vars)
            guard last.collection, let target = last.target else {
                throw QueryError.typeMismatch(
                    position: k.position, detail: "SUBQUERY needs a list of objects or linking objects")
            }
            var inner = vars
            inner[v] = target
            try validate(pred, root, vars: inner)
            return .int
        }
    }

    private func kind(of v: ObjectValue) -> PropertyKind? {
        switch v {
        case .null: return nil
        case .bool: return .bool
        case .int: return .int
        case .float: return .float
        case .double: return .double
        case .string: return .string
        case .data: return .data
        case .date: return .date
        case .uuid: return .uuid
        case .link: return .object
        }
    }

    private func position(_ e: QueryExpression) -> Int? {
        switch e {
        case .keyPath(let k), .aggregate(let k, _, _), .subqueryCount(let k, _, _): return k.position
        default: return nil
        }
    }

    struct Resolved {
        var kind: PropertyKind
        var collection: Bool
        var target: ClassSchema?
    }

    func resolve(_ k: KeyPathExpression, _ root: ClassSchema, _ vars: [String: ClassSchema]) throws -> Resolved {
        var cls = root
        if let v = k.variable {
            guard let c = vars[v] else {
                throw QueryError.syntax(position: k.position, detail: "unknown variable $\(v)")
            }
            cls = c
        }
        var out = Resolved(kind: .object, collection: false, target: cls)
        for (i, name) in k.components.enumerated() {
            guard let p = t.plan(cls).byName[name] else {
                throw QueryError.unknownProperty(position: k.position, className: cls.name, property: name)
            }
            let last = i == k.components.count - 1
            out.kind = p.kind == .linkingObjects ? .object : p.kind
            if p.list || p.kind == .linkingObjects { out.collection = true }
            if p.kind == .object || p.kind == .linkingObjects {
                guard let tc = p.target.flatMap({ t.schema.classes[$0] }) else {
                    throw QueryError.unknownProperty(position: k.position, className: p.target ?? "?", property: name)
                }
                cls = tc
                out.target = tc
            } else {
                out.target = nil
                if !last {
                    throw QueryError.typeMismatch(
                        position: k.position,
                        detail:
                            "\(cls.name).\(name) is \(p.typeName), not a link; "
                            + "it has no property '\(k.components[i + 1])'"
                    )
                }
            }
        }
        return out
    }

    private func checkComparable(_ a: PropertyKind?, _ b: PropertyKind?, _ op: CompareOperator, _ pos: Int) throws {
        guard let a, let b else {
            if op.isOrdering || op.isStringOperator, a == nil || b == nil {
                throw QueryError.typeMismatch(position: pos, detail: "\(op.rawValue) cannot compare with nil")
            }
            return
        }
        if op.isStringOperator {
            guard a.isVariableLength, b.isVariableLength else {
                throw QueryError.typeMismatch(
                    position: pos, detail: "\(op.rawValue) needs strings, found \(a.rawValue) and \(b.rawValue)")
            }
            return
        }
        // Kinds compared with each other: every number with every number, data with bytes.
        func group(_ k: PropertyKind) -> PropertyKind { k.isNumeric ? .double : k == .bytes ? .data : k }
        let ga = group(a), gb = group(b)
        // A UUID against its string form; Data against a string's UTF-8 bytes (see `compare`).
        func stringForm(_ x: PropertyKind, _ y: PropertyKind) -> Bool { x == .string && (y == .uuid || y == .data) }
        guard ga == gb || stringForm(ga, gb) || stringForm(gb, ga) else {
            throw QueryError.typeMismatch(position: pos, detail: "cannot compare \(a.rawValue) with \(b.rawValue)")
        }
        if op.isOrdering, a == .bool || a == .object || a == .uuid {
            throw QueryError.unsupportedOperator(position: pos, detail: "\(op.rawValue) on \(a.rawValue)")
        }
    }

    // MARK: Evaluation

    struct Env {
        var root: (ClassSchema, Int64)
        var vars: [String: (ClassSchema, Int64)] = [:]
        /// The root object's row, borrowed from a scan (valid only during its callback), so
        /// its properties are read in place instead of looked up again.
        var row: UnsafeRawBufferPointer?
    }

    /// How many objects `keys` would give, without making them: a class's objects are counted
    /// by the engine (its catalog keeps each table's count), a scan's matches as it goes.
    func count(_ className: String, source: ResultsSource, predicate: Predicate?, limit: Int?) throws -> Int {
        let limit = limit.map { max(0, $0) } ?? .max
        guard case .all = source else {
            return min(limit, try keys(className, source: source, predicate: predicate, sorts: [], limit: nil).count)
        }
        let c = try t.cls(className)
        guard let p = predicate else { return min(limit, try t.count(c)) }
        if let planned = try plan(p, c) { return min(limit, try filter(planned, c, p).count) }
        var n = 0
        let test = RowTest(self, c, p)
        if let flat = test.compiled?.flat, !t.plan(c).legacyRows {
            let codec = test.compiled!.codec, source = test.source
            try t.clusters(c) { number, v in
                n += try flat.count(in: v, number: number, codec, source)
                return n < limit
            }
            return min(n, limit)
        }
        try scan(c, matching: p) { _, _ in
            n += 1
            return n < limit
        }
        return min(n, limit)
    }

    /// Calls `body` with the key and row of every object of `c` that matches `predicate` (all
    /// when nil), in key order, until it returns false: each row is tested in place.
    private func scan(
        _ c: ClassSchema, matching predicate: Predicate?, _ body: (Int64, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        let test = RowTest(self, c, predicate)
        if let compiled = test.compiled, let flat = compiled.flat {
            // The common case with everything the row test needs held here, so each row costs
            // a layout lookup and the terms, not the retains of reaching them through `test`.
            // Damage anywhere in the scan is reported as it is row by row (`decodeGuarded`).
            let codec = compiled.codec, source = test.source, t = t
            guard !t.plan(c).legacyRows else {
                try t.decodeGuarded {
                    try t.keys(c) { k, row in try !flat.test(row, codec, source, k) || body(k, row) }
                }
                return
            }
            try t.decodeGuarded {
                try t.clusters(c) { number, v in try flat.forEachMatch(in: v, number: number, codec, source, body) }
            }
            return
        }
        try t.keys(c) { k, row in try !test.matches(k, row) || body(k, row) }
    }

    /// The keys, and rows when `rows` is not nil, of the objects of `c` that `test` matches,
    /// in key order, from cluster `from` on, until `atLeast` keys are taken (whole clusters):
    /// the number of the cluster to go on from, nil past the last. A `ResultsStream`'s batch.
    func matches(
        _ c: ClassSchema, _ test: RowTest, from: Int64, atLeast: Int, keys: inout [Int64],
        rows: inout [UnsafeRawBufferPointer]?
    ) throws -> Int64? {
        var next: Int64?
        let flat = test.compiled?.flat, codec = test.compiled?.codec, source = test.source, t = t
        if flat == nil, rows != nil { return try everyRow(c, from: from, atLeast: atLeast, &keys, &rows) }
        try t.decodeGuarded {
            try t.clusters(c, from: from) { number, v in
                if keys.count >= atLeast {
                    next = number
                    return false
                }
                if let flat, let codec {
                    _ = try flat.forEachMatch(in: v, number: number, codec, source) { k, r in
                        keys.append(k)
                        rows?.append(r)
                        return true
                    }
                    return true
                }
                // Keys only (every row is taken by `everyRow`).
                let base = number << v.shift
                var cursor = ClusterView.RowCursor(v)
                QueryEvaluator.reserve(&keys, v.count)
                while let (s, _) = try cursor.next() { keys.append(base | Int64(s)) }
                return true
            }
        }
        return next
    }

    /// Every object's key and row, whole clusters from `from` until `keys` holds at least
    /// `atLeast`, added to `keys` and `rows`; the cluster the next batch starts at. The clusters
    /// are found first and their rows written into arrays made at their size: appended one by
    /// one, each key and row checked its array's uniqueness and capacity, most of a batch's
    /// cost. The views outlive the scan that found them, which nothing changes meanwhile.
    private func everyRow(
        _ c: ClassSchema, from: Int64, atLeast: Int, _ keys: inout [Int64], _ rows: inout [UnsafeRawBufferPointer]?
    ) throws -> Int64? {
        var next: Int64?
        var views: [(number: Int64, view: ClusterView)] = []
        var total = 0
        let before = keys.count
        try t.clusters(c, from: from) { number, v in
            if before + total >= atLeast {
                next = number
                return false
            }
            views.append((number, v))
            total += v.count
            return true
        }
        let t = t
        var written: [UnsafeRawBufferPointer] = []
        let found = try [Int64](unsafeUninitializedCapacity: total) { k, kn in
            written = try [UnsafeRawBufferPointer](unsafeUninitializedCapacity: total) { r, rn in
                var at = 0
                for (number, v) in views {
                    try t.decodeGuarded {
                        try v.writeRows(
                            base: number << v.shift, keys: k.baseAddress! + at, rows: r.baseAddress! + at)
                    }
                    at += v.count
                    kn = at
                    rn = at
                }
            }
        }
        // Handed over whole into the empty arrays a batch starts with.
        if keys.isEmpty { keys = found } else { keys += found }
        if rows?.isEmpty ?? true { rows = written } else { rows! += written }
        return next
    }

    /// Room for `n` more elements, grown at least twofold: reserving exactly what each
    /// cluster adds reallocated the array, and copied it, at every cluster.
    private static func reserve<E>(_ a: inout [E], _ n: Int) {
        if a.capacity < a.count + n { a.reserveCapacity(max(2 * a.capacity, a.count + n)) }
    }

    /// A predicate made ready for testing rows of one class in place: compiled where it can
    /// be, else evaluated through `matches` with the row at hand.
    ///
    /// A class: as a struct, each row's test copied its optional references through a
    /// generic value witness (about 120 instructions each).
    final class RowTest {
        let ev: QueryEvaluator
        let c: ClassSchema
        let predicate: Predicate?
        let compiled: CompiledPredicate?
        /// The compiled predicate's flat terms and codec, held apart so a row's test starts there.
        let flat: RowConjunction?
        let codec: RowCodec?
        /// `flat` and `codec`, unretained (they hold them).
        private let flatRef: Unmanaged<RowConjunction>?
        private let codecRef: Unmanaged<RowCodec>?
        let source: CompiledPredicate.Source

        init(_ ev: QueryEvaluator, _ c: ClassSchema, _ predicate: Predicate?) {
            self.ev = ev
            self.c = c
            self.predicate = predicate
            let plan = ev.t.plan(c)
            compiled = predicate.flatMap { CompiledPredicate($0, plan) }
            flat = compiled?.flat
            codec = compiled?.codec
            flatRef = flat.map { Unmanaged.passUnretained($0) }
            codecRef = codec.map { Unmanaged.passUnretained($0) }
            source = CompiledPredicate.Source(tx: ev.t.tx, table: plan.outOfRowTable)
        }

        func matches(_ k: Int64, _ row: UnsafeRawBufferPointer) throws -> Bool {
            if let f = flatRef, let cd = codecRef {
                // Lent, not bound: bound (or through `decodeGuarded`'s closure), the terms and
                // the codec were retained and released for every row tested, atomically.
                do {
                    return try f._withUnsafeGuaranteedRef { flat in
                        try cd._withUnsafeGuaranteedRef { codec in try flat.test(row, codec, source, k) }
                    }
                } catch let e as RowError {
                    throw ev.t.corrupt(e)
                }
            }
            if let compiled {
                return try ev.t.decodeGuarded { try compiled.matches(row, key: k, source: source) }
            }
            guard let p = predicate else { return true }
            return try ev.matches(p, Env(root: (c, k), row: row))
        }
    }

    /// The candidates (from an index, a primary key, a list or backlinks) that match the whole
    /// predicate, each row found once and tested in place against `rowTest` (what the index
    /// left to test; all of `p` by default); `row` gets the row of each match.
    private func filter(
        _ candidates: [Int64], _ c: ClassSchema, _ p: Predicate, testing rowTest: Predicate? = nil,
        row: (UnsafeRawBufferPointer) -> Void = { _ in }
    ) throws -> [Int64] {
        let test = RowTest(self, c, rowTest ?? p)
        // Candidates from an index come sorted by key: one merge walk over the rows.
        var rows = try t.rowCursor(t.plan(c))
        // Room for every candidate: grown by doubling, a query's matches were copied ~8 times.
        var out: [Int64] = []
        out.reserveCapacity(candidates.count)
        for k in candidates {
            let hit = try rows.withRow(k) { r -> Bool in
                // No row for an index entry: the evaluation without one says what (deleted).
                guard let r else { return try matches(p, Env(root: (c, k))) }
                guard try test.matches(k, r) else { return false }
                row(r)
                return true
            }
            if hit { out.append(k) }
        }
        return out
    }

    /// An index plan's candidates that match `p`, each tested for what the index left.
    private func filter(
        _ plan: IndexPlan, _ c: ClassSchema, _ p: Predicate, row: (UnsafeRawBufferPointer) -> Void = { _ in }
    ) throws -> [Int64] {
        try filter(plan.keys, c, p, testing: plan.rowTest, row: row)
    }

    func keys(_ className: String, source: ResultsSource, predicate: Predicate?, sorts: [SortDescriptor], limit: Int?)
        throws -> [Int64]
    {
        var rows: [UnsafeRawBufferPointer]?
        return try keys(className, source: source, predicate: predicate, sorts: sorts, limit: limit, rows: &rows)
    }

    /// As `keys`; when the keys come from one unsorted scan and the transaction lends stable
    /// bytes, `rows` is set to each object's row (for accessors that need no descent).
    func keys(
        _ className: String, source: ResultsSource, predicate: Predicate?, sorts: [SortDescriptor], limit: Int?,
        rows: inout [UnsafeRawBufferPointer]?
    ) throws -> [Int64] {
        let limit = limit.map { max(0, $0) }
        // An object's linking objects, counted at each step of a for-in, need no class schema.
        if case .backlinks(let target, let key, let prop) = source, predicate == nil, sorts.isEmpty {
            let k = try linkingKeys(to: target, key, prop, from: className)
            return limit.map { Array(k.prefix($0)) } ?? k
        }
        let c = try t.cls(className)
        // Sort keys are resolved only where there are any: a list's or an object's linking
        // objects, counted at each step of a for-in, paid for resolving none.
        var candidates: [Int64]
        switch source {
        case .all:
            if let p = predicate, let plan = try plan(p, c) {
                if sorts.isEmpty && t.tx.lendsStableBytes {
                    var found: [UnsafeRawBufferPointer] = []
                    found.reserveCapacity(plan.keys.count)
                    candidates = try filter(plan, c, p) { found.append($0) }
                    // A match without a row (a damaged index) leaves the rows out of step: none then.
                    let inStep = found.count == candidates.count
                    if let limit, limit < candidates.count { candidates.removeLast(candidates.count - limit) }
                    rows = inStep ? Array(found.prefix(candidates.count)) : nil
                    return candidates
                }
                candidates = try filter(plan, c, p)
            } else {
                // One pass over the rows: the predicate and the sort keys read each row in place.
                if sorts.isEmpty && t.tx.lendsStableBytes {
                    var found: [UnsafeRawBufferPointer] = []
                    let k = try scanUnsorted(c, predicate, limit) { found.append($0) }
                    rows = found
                    return k
                }
                return try scanOrdered(c, predicate, SortKeys(self, c, sorts), limit, rows: &rows)
            }
        case .list(let owner, let key, let prop):
            let oc = try t.cls(owner)
            guard let p = oc.property(prop), try t.exists(oc, key) else { return [] }
            candidates = try t.list(oc, key, p).compactMap {
                if case .link(let k) = $0 { return k } else { return nil }
            }
            if let p = predicate { candidates = try filter(candidates, c, p) }
        case .backlinks(let target, let key, let prop):
            candidates = try linkingKeys(to: target, key, prop, from: className)
            if let p = predicate { candidates = try filter(candidates, c, p) }
        }
        if sorts.isEmpty { return limit.map { Array(candidates.prefix(max(0, $0))) } ?? candidates }
        let keys = SortKeys(self, c, sorts)
        let rows = try candidates.enumerated().map { i, k in try keys.ranked(i, k, row: nil) }
        return keys.order.sorted(rows, limit: limit)
    }

    /// The objects of class `origin` linking to object `key` of class `target` through the
    /// property `prop` of `target` names. Through the plans, found by name: the schemas'
    /// property lists were searched by name and copied on every count of a linking objects.
    func linkingKeys(to target: String, _ key: Int64, _ prop: String, from origin: String) throws -> [Int64] {
        let tp = try t.plan(named: target)
        if let l = tp.lastLinking, l.name == prop, l.origin == origin {
            guard let pid = l.pid else { return [] }
            return try t.backlinks(to: tp, key, fromCid: l.cid, pid: pid)
        }
        guard let originProperty = tp.byName[prop]?.originProperty else { return [] }
        let op = try t.plan(named: origin)
        let pid = op.byName[originProperty]?.pid
        tp.lastLinking = (prop, origin, op.cid, pid)
        guard let pid else { return [] }
        return try t.backlinks(to: tp, key, fromCid: op.cid, pid: pid)
    }

    /// The matching keys of a class in result order, from one scan: unsorted, it stops at the
    /// limit; with a limit, only rows that can enter the top k have their sort values read.
    private func scanOrdered(
        _ c: ClassSchema, _ predicate: Predicate?, _ keys: SortKeys, _ limit: Int?,
        rows: inout [UnsafeRawBufferPointer]?
    ) throws -> [Int64] {
        if keys.isEmpty { return try scanUnsorted(c, predicate, limit) { _ in } }
        if let limit {
            let top = TopK(order: keys.order, limit: limit)
            let ascending = keys.order.sorts[0].ascending
            let column = keys.integerColumn(0).flatMap { pid in keys.plan.stored.first { $0.pid == pid } }
                .map { PropertyAccess($0, plan: keys.plan) }
            let test = RowTest(self, c, predicate)
            if let column, predicate == nil || test.flat != nil, !t.plan(c).legacyRows, t.tx.lendsStableBytes {
                let best = try bestFirst(c, top, column, ascending, keys, test)
                rows = best.rows
                return best.keys
            }
            var scan = TopKScan(top: top, column: column, ascending: ascending)
            if column != nil, predicate == nil || test.flat != nil, !t.plan(c).legacyRows {
                let flat = test.flat, codec = test.codec, source = test.source
                try t.clusters(c) { number, v in
                    try scan.take(v, number: number, keys, flat, codec, source)
                    return true
                }
                return scan.top.keys
            }
            try self.scan(c, matching: predicate) { k, row in
                try scan.offer(k, row, keys)
                return true
            }
            return scan.top.keys
        }
        var ranked: [Ranked] = []
        try scan(c, matching: predicate) { k, row in
            ranked.append(try keys.ranked(ranked.count, k, row: row))
            return true
        }
        return keys.order.sorted(ranked, limit: nil)
    }

    /// A top k over the clusters best first (`BestFirstClusters`), until one cannot beat the
    /// last kept row, nor then can any after it: the best rows fill the top k first, and most
    /// clusters are never read past their summary.
    private func bestFirst(
        _ c: ClassSchema, _ top: TopK, _ column: PropertyAccess, _ ascending: Bool, _ keys: SortKeys, _ test: RowTest
    ) throws -> TopK {
        var clusters = try BestFirstClusters(t, c, pid: column.property.pid, ascending: ascending)
        var scan = TopKScan(top: top, column: column, ascending: ascending, byKey: true)
        while let (number, v) = clusters.next(), !scan.passes(over: v, number: number) {
            try scan.take(v, number: number, keys, test.flat, test.codec, test.source)
        }
        return scan.top
    }

    /// The matching keys in key order, up to `limit`, handing each row to `row`.
    private func scanUnsorted(
        _ c: ClassSchema, _ predicate: Predicate?, _ limit: Int?, row: (UnsafeRawBufferPointer) -> Void
    ) throws -> [Int64] {
        var out: [Int64] = []
        guard limit != 0 else { return out }
        if predicate == nil && limit == nil && !t.plan(c).legacyRows {
            // Every object: each cluster's keys and rows in one loop, no test per row.
            try t.clusters(c) { number, v in
                let base = number << v.shift
                var rows = ClusterView.RowCursor(v)
                while let (s, r) = try rows.next() {
                    out.append(base | Int64(s))
                    row(r)
                }
                return true
            }
            return out
        }
        try scan(c, matching: predicate) { k, r in
            out.append(k)
            row(r)
            return limit.map { out.count < $0 } ?? true
        }
        return out
    }

    /// Where each sort key's value comes from: a scalar property of the object's own row
    /// (read in place during a scan), or a key path walked through links.
    struct SortKeys {
        let ev: QueryEvaluator
        let c: ClassSchema
        let order: ResultOrder
        let paths: [ArraySlice<String>]
        let plan: ObjectTables.ClassPlan
        /// For a key that is a scalar property of the object itself: its pid, and its value in
        /// a row that predates it.
        let direct: [(pid: UInt32, absent: ObjectValue)?]

        init(_ ev: QueryEvaluator, _ c: ClassSchema, _ sorts: [SortDescriptor]) {
            self.ev = ev
            self.c = c
            order = ResultOrder(sorts: sorts)
            paths = sorts.map { $0.keyPath.split(separator: ".").map(String.init)[...] }
            let plan = ev.t.plan(c)
            self.plan = plan
            direct = paths.map { path in
                guard path.count == 1, let p = plan.byName[path[path.startIndex]], !p.list, p.kind != .linkingObjects
                else { return nil }
                return (p.pid, ObjectTables.defaultValue(p))
            }
        }

        var isEmpty: Bool { paths.isEmpty }

        /// The pid of sort key `j` when it is an integer property of the object itself.
        func integerColumn(_ j: Int) -> UInt32? {
            guard let (pid, absent) = direct[j], case .int = absent,
                plan.stored.contains(where: { $0.pid == pid && $0.kind.isInteger })
            else { return nil }
            return pid
        }

        func value(_ j: Int, _ k: Int64, row: UnsafeRawBufferPointer?) throws -> ObjectValue {
            guard let (pid, absent) = direct[j] else { return try ev.walk(c, k, paths[j], row: row).first ?? .null }
            let t = ev.t, plan = plan
            func read(_ r: UnsafeRawBufferPointer) throws -> ObjectValue {
                try t.decodeGuarded { try t.value(plan, k, pid: pid, row: r) ?? absent }
            }
            if let row { return try read(row) }
            return try t.withRow(plan, k) { r in
                guard let r else { throw ObjectError.objectDeleted(className: plan.name) }
                return try read(r)
            }
        }

        func ranked(_ i: Int, _ k: Int64, row: UnsafeRawBufferPointer?, first: ObjectValue? = nil) throws -> Ranked {
            let f = try first ?? value(0, k, row: row)
            let rest = paths.count > 1 ? try (1..<paths.count).map { try value($0, k, row: row) } : []
            return Ranked(index: i, key: k, first: f, rest: rest)
        }
    }

    /// Candidate keys from the primary key or an index, for the first conjunct that has one;
    /// nil when the whole class must be scanned. The full predicate is checked on each after.
    /// The candidates an index or the primary key finds for `p`, in key order, and what each
    /// one's row must still pass: `p` without the conjunct the index answered exactly (its
    /// candidates all pass it), so that conjunct is not tested again per row.
    private func plan(_ p: Predicate, _ c: ClassSchema) throws -> IndexPlan? {
        guard let (probe, rest) = probeAndRest(p, c) else { return nil }
        return IndexPlan(keys: KeySort.ascendingUnique(try candidates(probe, c)), rowTest: rest)
    }

    struct IndexPlan {
        let keys: [Int64]
        let rowTest: Predicate
    }

    /// Whether `p` finds its candidates through the primary key or an index (a lazy
    /// iteration, which scans, would be slower).
    func usesIndex(_ p: Predicate, _ c: ClassSchema) -> Bool {
        if case .and(let ps) = p { return ps.contains { probeOne($0, c) != nil } }
        return probeOne(p, c) != nil
    }

    /// How a conjunct finds its candidates: keys looked up by value, or a range of index keys
    /// (`op` against `value`, or from `value` through `through` for BETWEEN), turned into key
    /// bytes only when read (`bounds`): asking whether an index answers builds none.
    enum IndexProbe {
        case lookup(Property, [ObjectValue])
        case range(Property, CompareOperator, ObjectValue, through: ObjectValue?)

        /// A range's index-key bytes, `from` up to (not including) `to`.
        static func bounds(_ op: CompareOperator, _ v: ObjectValue, through hi: ObjectValue?) -> (
            from: [UInt8], to: [UInt8]
        ) {
            let enc = KeyBytes.indexValue(v)
            let kindStart = [enc[0]], kindEnd = [enc[0] + 1]
            if let hi {
                let b = KeyBytes.indexValue(hi)
                return (enc, KeyBytes.successor(b) ?? [b[0] + 1])
            }
            switch op {
            case .greater: return (KeyBytes.successor(enc) ?? kindEnd, kindEnd)
            case .greaterOrEqual: return (enc, kindEnd)
            case .less: return (kindStart, enc)
            case .lessOrEqual: return (kindStart, KeyBytes.successor(enc) ?? kindEnd)
            default:
                // BEGINSWITH: `probeOne` makes it only for a string.
                guard case .string(let s) = v else { return (kindStart, kindEnd) }
                let pre = KeyBytes.indexStringPrefix(s)
                return (pre, KeyBytes.successor(pre) ?? kindEnd)
            }
        }
    }

    /// The probe of the first conjunct of `p` that has one, with what a candidate must still
    /// pass: `p` without the probed conjunct when the index answers it exactly, else all of `p`.
    private func probeAndRest(_ p: Predicate, _ c: ClassSchema) -> (probe: IndexProbe, rest: Predicate)? {
        let conjuncts: [Predicate]
        if case .and(let ps) = p { conjuncts = ps } else { conjuncts = [p] }
        for (i, q) in conjuncts.enumerated() {
            guard let probe = probeOne(q, c) else { continue }
            guard QueryEvaluator.indexAnswersExactly(q) else { return (probe, p) }
            var rest = conjuncts
            rest.remove(at: i)
            return (probe, rest.isEmpty ? .constant(true) : rest.count == 1 ? rest[0] : .and(rest))
        }
        return nil
    }

    /// Whether every candidate an index finds for conjunct `q` (one `probeOne` answers) passes
    /// `q`: an equality, or a byte-wise prefix of a string, without options. Both compare
    /// bytes as the index keys do. Ranges are left to the row test (a string's `<` is not
    /// byte order).
    private static func indexAnswersExactly(_ q: Predicate) -> Bool {
        guard case .compare(_, let op, .value(let v), let opts, _) = q, opts.isEmpty, !v.isNull else { return false }
        if op == .equal { return true }
        if op == .beginsWith, case .string = v { return true }
        return false
    }

    private func probeOne(_ q: Predicate, _ c: ClassSchema) -> IndexProbe? {
        func direct(_ e: QueryExpression) -> Property? {
            guard case .keyPath(let k) = e, k.variable == nil, k.components.count == 1,
                let p = c.property(k.components[0]), !p.list
            else { return nil }
            return p
        }
        func sameKind(_ p: Property, _ v: ObjectValue) -> Bool {
            switch (p.kind, v) {
            case (.int, .int), (.int8, .int), (.int16, .int), (.int32, .int), (.int64, .int), (.string, .string),
                (.bool, .bool), (.date, .date), (.uuid, .uuid):
                return true
            default: return false
            }
        }
        func usable(_ p: Property) -> Bool { p.hasIndex || (p.primaryKey && p.kind.isInteger) }
        switch q {
        case .compare(let l, let op, .value(let v), let opts, let quant)
        where opts.isEmpty && quant != .all && quant != .none:
            guard let p = direct(l), usable(p), sameKind(p, v) else { return nil }
            switch op {
            case .equal: return .lookup(p, [v])
            case .greater, .greaterOrEqual, .less, .lessOrEqual: return .range(p, op, v, through: nil)
            case .beginsWith:
                guard case .string = v, !(p.primaryKey && p.kind.isInteger) else { return nil }
                return .range(p, op, v, through: nil)
            default: return nil
            }
        case .in(let l, .values(let vs), let quant) where quant != .all && quant != .none:
            guard let p = direct(l), usable(p), vs.allSatisfy({ sameKind(p, $0) }) else { return nil }
            return .lookup(p, vs)
        case .between(let l, .value(let lo), .value(let hi), let quant) where quant != .all && quant != .none:
            guard let p = direct(l), usable(p), sameKind(p, lo), sameKind(p, hi) else { return nil }
            return .range(p, .greaterOrEqual, lo, through: hi)
        default:
            return nil
        }
    }

    /// The keys a probe finds, in index order (not yet sorted by key).
    private func candidates(_ probe: IndexProbe, _ c: ClassSchema) throws -> [Int64] {
        switch probe {
        case .lookup(let p, let vs):
            return try vs.flatMap { v -> [Int64] in
                if p.primaryKey && p.kind.isInteger { return try t.lookupPrimaryKey(c, v).map { [$0] } ?? [] }
                return try t.indexLookup(c, p, v)
            }
        case .range(let p, let op, let v, let hi):
            let (from, to) = IndexProbe.bounds(op, v, through: hi)
            var out: [Int64] = []
            // A range's hits come by the hundred: grown from empty, the array was copied ~8 times.
            out.reserveCapacity(256)
            if p.primaryKey && p.kind.isInteger {
                try t.keys(c) { k, _ in
                    let e = KeyBytes.indexValue(ObjectValue.int(k))
                    if e.lexicographicallyPrecedes(from) { return true }
                    if !e.lexicographicallyPrecedes(to) { return false }
                    out.append(k)
                    return true
                }
                return out
            }
            try t.indexScan(c, p, from: from, to: to) {
                out.append($0); return true
            }
            if BrokenObjectLayer.on(.indexRangeDropsLast) { out = out.dropLast() }
            return out
        }
    }

    func matches(_ p: Predicate, _ env: Env) throws -> Bool {
        switch p {
        case .constant(let b): return b
        case .and(let ps):
            for q in ps where try !matches(q, env) { return false }
            return true
        case .or(let ps):
            for q in ps where try matches(q, env) { return true }
            return false
        case .not(let q): return try !matches(q, env)
        case .compare(.keyPath(let k), let op, .value(let v), let opts, .implicit)
        where k.variable == nil && k.components.count == 1:
            // The common case, a property of the object against a constant: no arrays.
            let c = env.root.0
            guard let p = t.plan(c).byName[k.components[0]], !p.list, p.kind != .linkingObjects else {
                return try quantify(values(.keyPath(k), env), .implicit) { QueryEvaluator.compare($0, op, v, opts) }
            }
            let x =
                try env.row.map { r in try t.decodeGuarded { try t.value(c, env.root.1, p, row: r) } }
                ?? t.value(c, env.root.1, p)
            return QueryEvaluator.compare(x, op, v, opts)
        case .compare(let l, let op, let r, let opts, let quant):
            let lv = try values(l, env), rv = try values(r, env)
            return quantify(lv, quant) { a in rv.contains { b in QueryEvaluator.compare(a, op, b, opts) } }
        case .between(let x, let lo, let hi, let quant):
            let xv = try values(x, env)
            guard let a = try values(lo, env).first, let b = try values(hi, env).first else { return false }
            return quantify(xv, quant) { v in
                QueryEvaluator.compare(v, .greaterOrEqual, a, []) && QueryEvaluator.compare(v, .lessOrEqual, b, [])
            }
        case .in(let l, let r, let quant):
            let lv = try values(l, env), rv = try values(r, env)
            return quantify(lv, quant) { a in rv.contains { QueryEvaluator.compare(a, .equal, $0, []) } }
        }
    }

    private func quantify(_ vs: [ObjectValue], _ q: Quantifier, _ test: (ObjectValue) -> Bool) -> Bool {
        switch q {
        case .implicit, .any: return vs.contains(where: test)
        case .all: return vs.allSatisfy(test)
        case .none: return !vs.contains(where: test)
        }
    }

    func values(_ e: QueryExpression, _ env: Env) throws -> [ObjectValue] {
        switch e {
        case .value(let v): return [v]
        case .values(let vs): return vs
        case .keyPath(let k):
            let (c, key) = try start(k, env)
            return try walk(c, key, k.components[...], row: k.variable == nil ? env.row : nil)
        case .aggregate(let k, let op, let rest):
            let (c, key) = try start(k, env)
            let items = try walk(c, key, k.components[...])
            if op == .count { return [.int(Int64(items.count))] }
            var vals = items
            if !rest.isEmpty {
                let target = try QueryEvaluator(t: t).resolve(k, c, [:]).target
                vals = try items.flatMap { v -> [ObjectValue] in
                    guard case .link(let tk) = v, let target else { return [] }
                    return try walk(target, tk, rest[...])
                }
            }
            vals = vals.filter { !$0.isNull }
            switch op {
            case .count: return [.int(Int64(vals.count))]
            case .min: return [vals.min { ObjectValue.order($0, $1) < 0 } ?? .null]
            case .max: return [vals.max { ObjectValue.order($0, $1) < 0 } ?? .null]
            case .sum:
                if vals.allSatisfy({ if case .int = $0 { return true } else { return false } }) {
                    return [.int(vals.reduce(0) { if case .int(let i) = $1 { return $0 &+ i } else { return $0 } })]
                }
                return [.double(vals.reduce(0) { $0 + ($1.numeric ?? 0) })]
            case .avg:
                guard !vals.isEmpty else { return [.null] }
                return [.double(vals.reduce(0) { $0 + ($1.numeric ?? 0) } / Double(vals.count))]
            }
        case .subqueryCount(let k, let v, let pred):
            let (c, key) = try start(k, env)
            let target = try QueryEvaluator(t: t).resolve(k, c, [:]).target
            var n: Int64 = 0
            for case .link(let ik) in try walk(c, key, k.components[...]) {
                guard let target else { break }
                var inner = env
                inner.vars[v] = (target, ik)
                if try matches(pred, inner) { n += 1 }
            }
            return [.int(n)]
        }
    }

    private func start(_ k: KeyPathExpression, _ env: Env) throws -> (ClassSchema, Int64) {
        if let v = k.variable {
            guard let b = env.vars[v] else {
                throw QueryError.syntax(position: k.position, detail: "unknown variable $\(v)")
            }
            return b
        }
        return env.root
    }

    /// The values at `path` of every object of `c` matching `predicate` (all when nil), each
    /// read with its object's row at hand: one scan (an aggregate's column pass), or the index's
    /// hits when an index answers the predicate. No key array and no lookup per object.
    func values(_ c: ClassSchema, _ path: ArraySlice<String>, matching predicate: Predicate?) throws -> [ObjectValue] {
        var out: [ObjectValue] = []
        if let p = predicate, let planned = try plan(p, c) {
            var rows: [UnsafeRawBufferPointer] = []
            let keys = try filter(planned, c, p) { rows.append($0) }
            // A hit without a row (a damaged index) leaves the rows out of step: walked by key then.
            for (i, k) in keys.enumerated() {
                out.append(
                    contentsOf: try walk(
                        c, k, path, row: rows.count == keys.count && t.tx.lendsStableBytes ? rows[i] : nil))
            }
            return out
        }
        try scan(c, matching: predicate) { k, row in
            out.append(contentsOf: try walk(c, k, path, row: row))
            return true
        }
        return out
    }

    /// The values a key path reaches from one object: one value through to-one links (nil when a
    /// link on the way is nil), every element's through lists and linking objects.
    func walk(_ c: ClassSchema, _ key: Int64, _ comps: ArraySlice<String>, row: UnsafeRawBufferPointer? = nil) throws
        -> [ObjectValue]
    {
        guard let name = comps.first else { return [.link(key)] }
        guard let p = t.plan(c).byName[name] else {
            throw QueryError.unknownProperty(position: 0, className: c.name, property: name)
        }
        let rest = comps.dropFirst()
        if p.kind == .linkingObjects {
            let oc = try t.cls(p.target ?? "")
            guard let op = oc.property(p.originProperty ?? "") else { return [] }
            let origins = try t.backlinks(to: c, key, from: oc, op)
            if rest.isEmpty { return origins.map { .link($0) } }
            return try origins.flatMap { try walk(oc, $0, rest) }
        }
        if p.list {
            let items = try t.list(c, key, p)
            guard p.isLink, !rest.isEmpty else { return items }
            let tc = try t.cls(p.target ?? "")
            return try items.flatMap { v -> [ObjectValue] in
                guard case .link(let k) = v else { return [] }
                return try walk(tc, k, rest)
            }
        }
        let v = try row.map { r in try t.decodeGuarded { try t.value(c, key, p, row: r) } } ?? t.value(c, key, p)
        guard p.isLink, !rest.isEmpty else { return [v] }
        guard case .link(let k) = v else { return [.null] }
        return try walk(try t.cls(p.target ?? ""), k, rest)
    }

    // MARK: Comparison

    static func fold(_ s: String, _ o: StringOptions) -> String {
        var f: String.CompareOptions = []
        if o.contains(.caseInsensitive) { f.insert(.caseInsensitive) }
        if o.contains(.diacriticInsensitive) { f.insert(.diacriticInsensitive) }
        return f.isEmpty ? s : s.folding(options: f, locale: nil)
    }

    static func compare(_ a: ObjectValue, _ op: CompareOperator, _ b: ObjectValue, _ o: StringOptions) -> Bool {
        // A string against Data means its UTF-8 bytes (as realm-core's parser reads a string
        // literal against a binary column), for every operator: the same rule as the scan's
        // byte fast path in CompiledPredicate.
        switch (a, b) {
        case (.data, .string(let y)): return compare(a, op, .data(Array(y.utf8)), o)
        case (.string(let x), .data): return compare(.data(Array(x.utf8)), op, b, o)
        default: break
        }
        switch op {
        case .equal: return equal(a, b, o)
        case .notEqual: return !equal(a, b, o)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            if a.isNull || b.isNull { return false }
            if let x = a.numeric, let y = b.numeric, x.isNaN || y.isNaN { return false }
            var c: Int
            if case .string(let x) = a, case .string(let y) = b, !o.isEmpty {
                c = compareUTF8(fold(x, o), fold(y, o))
            } else {
                c = ObjectValue.order(a, b)
            }
            switch op {
            case .less: return c < 0
            case .lessOrEqual: return c <= 0
            case .greater: return c > 0
            default: return c >= 0
            }
        case .beginsWith, .endsWith, .contains, .like:
            switch (a, b) {
            case (.string(let x), .string(let y)):
                let s = fold(x, o), p = fold(y, o)
                switch op {
                case .beginsWith: return s.utf8.starts(with: p.utf8)
                case .endsWith: return s.utf8.reversed().starts(with: p.utf8.reversed())
                case .contains: return p.isEmpty || s.utf8.count >= p.utf8.count && s.contains(p)
                default: return like(Array(s.unicodeScalars), Array(p.unicodeScalars))
                }
            case (.data(let x), .data(let y)):
                switch op {
                case .beginsWith: return x.starts(with: y)
                case .endsWith: return x.reversed().starts(with: y.reversed())
                case .contains:
                    return y.isEmpty
                        || (0...max(0, x.count - y.count)).contains {
                            x.count >= y.count && Array(x[$0..<($0 + y.count)]) == y
                        }
                default: return false
                }
            default: return false
            }
        }
    }

    static func equal(_ a: ObjectValue, _ b: ObjectValue, _ o: StringOptions) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.string(let x), .string(let y)):
            return o.isEmpty ? x.utf8.elementsEqual(y.utf8) : fold(x, o) == fold(y, o)
        case (.int(let x), .int(let y)): return x == y
        case (.uuid(let x), .string(let y)), (.string(let y), .uuid(let x)): return UUID(uuidString: y) == x
        default:
            if let x = a.numeric, let y = b.numeric, a.isNumberLike == b.isNumberLike { return x == y }
            return a == b
        }
    }

    /// `*` any run, `?` one character.
    static func like(_ s: [Unicode.Scalar], _ p: [Unicode.Scalar]) -> Bool {
        var si = 0, pi = 0, star = -1, mark = 0
        while si < s.count {
            if pi < p.count, p[pi] == "?" || p[pi] == s[si] {
                si += 1; pi += 1
            } else if pi < p.count, p[pi] == "*" {
                star = pi; mark = si; pi += 1
            } else if star >= 0 {
                pi = star + 1; mark += 1; si = mark
            } else {
                return false
            }
        }
        while pi < p.count, p[pi] == "*" { pi += 1 }
        return pi == p.count
    }
}

extension ObjectValue {
    /// Numbers compare with numbers, dates with dates, bools with bools.
    var isNumberLike: Int {
        switch self {
        case .int, .float, .double: return 0
        case .date: return 1
        case .bool: return 2
        default: return 3
        }
    }
}
