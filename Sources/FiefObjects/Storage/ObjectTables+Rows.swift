import Engine
import Foundation

/// Reading rows: a row found through its cluster, its values, and a class's keys in order.
extension ObjectTables {
    func withRow<T>(_ c: ClassSchema, _ key: Int64, _ body: (UnsafeRawBufferPointer?) throws -> T) throws -> T {
        try withRow(plan(c), key, body)
    }

    /// The row of object `key`, lent to `body` (nil when there is none); the bytes outlive
    /// the call only when `lendsRowUntilWrite`.
    func withRow<T>(_ plan: ClassPlan, _ key: Int64, _ body: (UnsafeRawBufferPointer?) throws -> T) throws -> T {
        guard try hasObjectsTable(plan) else { return try body(nil) }
        if plan.legacyRows {
            return try key.withKeyBytes { try tx.withValue(table: plan.objectsTable, keyBytes: $0, body) }
        }
        if let last = plan.lastRow, last.key == key, tx.lendsStableBytes { return try body(last.row) }
        let shift = try clusterShift(plan)
        let number = key >> shift, slot = Int(key & ((1 << shift) - 1))
        // The cluster changed last first (an insert's duplicate-key check, in a load in key
        // order, asks for the cluster it is filling): no hashing of its number.
        if let last = plan.clusters.last, last.number == number { return try last.rows.withRow(slot: slot, body) }
        if let hot = plan.clusters.hotRows(number) { return try hot.withRow(slot: slot, body) }
        let stable = tx.lendsStableBytes
        if stable, let view = plan.stableClusters.view(number) {
            let row = try decodeGuarded { try view.row(slot: slot) }
            if let row { plan.lastRow = (key, row) }
            return try body(row)
        }
        let keepsForWrite = !stable && tx.lendsBytesUntilWrite
        return try number.withKeyBytes { k in
            try tx.withValue(table: plan.objectsTable, keyBytes: k) { v, owned in
                guard let v else {
                    if keepsForWrite { plan.writeLookup = (number, nil, tx.writes, nil) }
                    return try body(nil)
                }
                let view = try decodeGuarded { try ClusterView(v, shift: shift) }
                let row = try decodeGuarded { try view.row(slot: slot) }
                if stable {
                    plan.stableClusters.remember(number, view)
                    if let row { plan.lastRow = (key, row) }
                } else if keepsForWrite {
                    plan.writeLookup = (number, view, tx.writes, owned)
                }
                return try body(row)
            }
        }
    }

    /// The rows of the `count` objects `key(0)`, `key(1)`, ..., in that order, when the
    /// transaction lends stable bytes and each is a key with a row; nil otherwise.
    func stableRows(_ plan: ClassPlan, count: Int, _ key: (Int) -> Int64?) throws -> [UnsafeRawBufferPointer]? {
        guard tx.lendsStableBytes, !plan.legacyRows else { return nil }
        var rows: [UnsafeRawBufferPointer] = []
        rows.reserveCapacity(count)
        for i in 0..<count {
            guard let k = key(i), let r = try withRow(plan, k, { $0 }) else { return nil }
            rows.append(r)
        }
        return rows
    }

    /// Whether the row of `key` lent by `withRow` stays valid until this write next changes
    /// anything (`changes` moves): not while its cluster lives in memory, changed by this write
    /// (those bytes move with any change to the cluster). A row lent from the tree stays put
    /// until the next engine write, whatever other clusters are in memory: the first integer
    /// that outgrew its bytes no longer made every later read of the write descend again.
    func lendsRowUntilWrite(_ plan: ClassPlan, _ key: Int64) -> Bool {
        if tx.lendsStableBytes { return true }
        guard tx.lendsBytesUntilWrite else { return false }
        guard !plan.clusters.hot.isEmpty else { return true }
        guard let shift = plan.clusters.shift else { return false }
        return plan.clusters.hotRows(key >> shift) == nil
    }

    /// Rows of many objects, looked up in ascending key order the cheapest (`TreeCursor`).
    struct RowCursor {
        /// The tables the cursor reads (they outlive it), unretained: only a damaged cluster's
        /// error reads their path. The path copied into each lookup's closure was a retain and a
        /// release of its string per row looked up.
        fileprivate unowned(unsafe) let tables: ObjectTables
        /// The plan of the class read, unretained likewise: its clusters found (`ClusterMemo`)
        /// are those of every lookup of the version, this cursor's and the others'. Read through
        /// `_withUnsafeGuaranteedRef`: an `unowned(unsafe)` plan was retained for each borrow of
        /// its memo, an atomic pair per row looked up.
        fileprivate let planRef: Unmanaged<ClassPlan>
        fileprivate var cursor: TreeCursor?
        fileprivate var legacyRows = false
        fileprivate var shift = 0
        /// The transaction's bytes outlive a lookup (a read): the clusters found are kept, so
        /// the next keys in them (an index's hits, in key order) cost no descent.
        fileprivate var keepsCluster = false

        fileprivate init(
            tables: ObjectTables, plan: ClassPlan, cursor: TreeCursor?, legacyRows: Bool = false, shift: Int = 0,
            keepsCluster: Bool = false
        ) {
            self.tables = tables
            planRef = Unmanaged.passUnretained(plan)
            (self.cursor, self.legacyRows, self.shift, self.keepsCluster) = (cursor, legacyRows, shift, keepsCluster)
        }

        mutating func withRow<T>(_ key: Int64, _ body: (UnsafeRawBufferPointer?) throws -> T) throws -> T {
            guard cursor != nil else { return try body(nil) }
            if legacyRows { return try key.withKeyBytes { try cursor!.withValue($0, body) } }
            let number = key >> shift, slot = Int(key & ((1 << shift) - 1)), shift = shift
            unowned(unsafe) let tables = tables
            func row(_ v: ClusterView) throws -> UnsafeRawBufferPointer? {
                do { return try v.row(slot: slot) } catch let e as RowError {
                    throw EngineError.corrupt(path: tables.path, detail: "object cluster: \(e.description)")
                }
            }
            let keeps = keepsCluster
            if keeps, let v = planRef._withUnsafeGuaranteedRef({ $0.stableClusters.view(number) }) {
                return try body(try row(v))
            }
            var found: ClusterView?
            let result = try number.withKeyBytes { k in
                try cursor!.withValue(k) { v -> T in
                    guard let v else { return try body(nil) }
                    let cluster: ClusterView
                    do { cluster = try ClusterView(v, shift: shift) } catch let e as RowError {
                        throw EngineError.corrupt(path: tables.path, detail: "object cluster: \(e.description)")
                    }
                    if keeps { found = cluster }
                    return try body(try row(cluster))
                }
            }
            if let found { planRef._withUnsafeGuaranteedRef { $0.stableClusters.remember(number, found) } }
            return result
        }
    }

    func rowCursor(_ plan: ClassPlan) throws -> RowCursor {
        guard try hasObjectsTable(plan) else { return RowCursor(tables: self, plan: plan, cursor: nil) }
        if plan.legacyRows {
            return RowCursor(
                tables: self, plan: plan, cursor: try tx.cursor(table: plan.objectsTable), legacyRows: true)
        }
        try writeClusters(plan)
        return RowCursor(
            tables: self, plan: plan, cursor: try tx.cursor(table: plan.objectsTable), shift: try clusterShift(plan),
            keepsCluster: tx.lendsStableBytes)
    }

    /// Whether the class has a table of rows yet (remembered in the plan once seen).
    func hasObjectsTable(_ plan: ClassPlan) throws -> Bool {
        if plan.objectsTableExists { return true }
        guard try hasTable(plan.objectsTable) else { return false }
        plan.objectsTableExists = true
        return true
    }

    /// How many objects the class's clusters hold (2^shift), from `fief/meta`.
    func clusterShift(_ plan: ClassPlan) throws -> Int {
        if let s = plan.clusters.shift { return s }
        guard try hasTable(Tables.meta), let b = try tx.get(table: Tables.meta, key: ObjectTables.shiftKey(plan.cid))
        else {
            throw EngineError.corrupt(
                path: path, detail: "class \(plan.name) has clusters but fief/meta gives no cluster size")
        }
        let v = try b.withUnsafeBytes { try Int64(valueBytes: $0) }
        guard (0...Int64(ClusterView.maxShift)).contains(v) else {
            throw EngineError.corrupt(
                path: path, detail: "fief/meta gives class \(plan.name) clusters of 2^\(v) objects")
        }
        plan.clusters.shift = Int(v)
        return Int(v)
    }

    static func shiftKey(_ cid: UInt32) -> [UInt8] { Array("shift/\(cid)".utf8) }

    func exists(_ c: ClassSchema, _ key: Int64) throws -> Bool { try exists(plan(c), key) }

    func exists(_ plan: ClassPlan, _ key: Int64) throws -> Bool { try withRow(plan, key) { $0 != nil } }

    func outOfRow(_ c: ClassSchema, _ key: Int64, _ pid: UInt32) throws -> [UInt8]? {
        try tx.get(table: plan(c).outOfRowTable, key: KeyBytes.property(key, pid))
    }

    /// A stored property's value (a list's element count for lists); the property's default
    /// when the row predates it. Throws `objectDeleted` when the row is gone.
    func value(_ c: ClassSchema, _ key: Int64, _ p: Property) throws -> ObjectValue {
        try withRow(c, key) { row in
            guard let row else { throw ObjectError.objectDeleted(className: c.name) }
            return try decodeGuarded { try self.value(c, key, p, row: row) }
        }
    }

    func value(_ c: ClassSchema, _ key: Int64, _ p: Property, row: UnsafeRawBufferPointer) throws -> ObjectValue {
        try value(plan(c), key, p, row: row)
    }

    func value(_ plan: ClassPlan, _ key: Int64, _ p: Property, row: UnsafeRawBufferPointer) throws -> ObjectValue {
        try value(plan, key, pid: p.pid, row: row) ?? ObjectTables.defaultValue(p)
    }

    /// The value of `pid` in a row, nil when the row's layout predates the property.
    func value(_ plan: ClassPlan, _ key: Int64, pid: UInt32, row: UnsafeRawBufferPointer) throws -> ObjectValue? {
        try plan.codec.value(
            row, pid: pid, key: key,
            outOfRow: { try self.tx.get(table: plan.outOfRowTable, key: KeyBytes.property(key, pid)) })
    }

    static func defaultValue(_ p: Property) -> ObjectValue {
        if p.list { return .int(0) }
        if p.optional || p.kind == .object { return .null }
        switch p.kind {
        case .bool: return .bool(false)
        case .int, .int8, .int16, .int32, .int64: return .int(0)
        case .float: return .float(0)
        case .double: return .double(0)
        case .string: return .string("")
        case .data, .bytes: return .data([])
        case .date: return .date(Date(timeIntervalSinceReferenceDate: 0))
        case .uuid: return .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        case .object, .linkingObjects: return .null
        }
    }

    func decodeGuarded<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let e as RowError { throw corrupt(e) }
    }

    /// A row that did not decode, as the error every read reports it with.
    func corrupt(_ e: RowError) -> EngineError {
        EngineError.corrupt(path: path, detail: "object row: \(e.description)")
    }

    /// The stored values of a row, by pid, in the class's current properties; the row is
    /// checked whole first (a compact row must end where its last slot does).
    func values(_ c: ClassSchema, _ key: Int64) throws -> PidMap<ObjectValue> {
        try withRow(c, key) { row in
            guard let row else { throw ObjectError.objectDeleted(className: c.name) }
            return try values(plan(c), key, checkingRow: row)
        }
    }

    /// The same, from `row`, the row of `key`, at hand (a check walks every row once).
    func values(_ plan: ClassPlan, _ key: Int64, checkingRow row: UnsafeRawBufferPointer) throws -> PidMap<ObjectValue>
    {
        try decodeGuarded {
            let codec = plan.codec
            var out: PidMap<ObjectValue> = [:]
            let (l, fields) = try codec.fields(row, key: key)
            for p in plan.stored {
                guard let s = l.slot(of: p.pid) else {
                    out[p.pid] = ObjectTables.defaultValue(p)
                    continue
                }
                out[p.pid] = try codec.value(
                    of: fields[s], kind: l.kinds[s],
                    outOfRow: { try self.tx.get(table: plan.outOfRowTable, key: KeyBytes.property(key, p.pid)) })
            }
            return out
        }
    }

    /// Keys of a class in key order, each with its row.
    func keys(_ c: ClassSchema, _ body: (Int64, UnsafeRawBufferPointer) throws -> Bool) throws {
        let plan = plan(c)
        if plan.legacyRows {
            guard try hasObjectsTable(plan) else { return }
            try tx.scan(table: plan.objectsTable) { k, v in try body(KeyBytes.readObj(k, at: 0), v) }
            return
        }
        try clusters(c) { number, v in try v.forEachObject(number: number, body) }
    }

    /// Each cluster of a format-2 class with its number, in order, until `body` returns false
    /// (a query's kernels test a cluster's rows in one loop). A cluster that does not decode
    /// is damage, thrown as `EngineError.corrupt`. Calls nothing for a format-1 class.
    func clusters(_ c: ClassSchema, from: Int64? = nil, _ body: (Int64, ClusterView) throws -> Bool) throws {
        let plan = plan(c)
        guard try hasObjectsTable(plan), !plan.legacyRows else { return }
        try writeClusters(plan)
        let shift = try clusterShift(plan)
        try tx.scan(table: plan.objectsTable, from: from.map(KeyBytes.obj)) { k, v in
            try decodeGuarded { try body(KeyBytes.readObj(k, at: 0), try ClusterView(v, shift: shift)) }
        }
    }

    /// The class's object count: the counts in its clusters' headers, one visit per cluster.
    /// Not a counter kept beside them: a count that disagreed with the clusters (a damaged
    /// file) made `Results` hand out indices its keys did not have, and the caller trapped.
    func count(_ c: ClassSchema) throws -> Int {
        let plan = plan(c)
        if plan.legacyRows { return try hasObjectsTable(plan) ? try tx.count(table: plan.objectsTable) : 0 }
        var n = 0
        try clusters(c) { _, v in
            try v.checkRowEnds()
            n += v.count
            return true
        }
        return n
    }

    /// The rows of the clusters `numbers` of class `cid`, by object key, without the backlinks
    /// they keep (for change sets: a new link to an object is not a change of it).
    func clusterRows(_ cid: UInt32, _ numbers: Set<Int64>) throws -> [Int64: [UInt8]] {
        guard !numbers.isEmpty, let c = schema.byCid(cid) else { return [:] }
        let plan = plan(c)
        guard try hasObjectsTable(plan), !plan.legacyRows else { return [:] }
        let shift = try clusterShift(plan)
        var out: [Int64: [UInt8]] = [:]
        for n in numbers {
            try n.withKeyBytes { k in
                try tx.withValue(table: plan.objectsTable, keyBytes: k) { v in
                    guard let v else { return }
                    _ = try decodeGuarded {
                        try ClusterView(v, shift: shift).forEachObject(number: n) { k, row in
                            out[k] = Array(try plan.codec.withoutBacklinks(row))
                            return true
                        }
                    }
                }
            }
        }
        return out
    }

    /// Every key of a class, read cluster by cluster, and what is wrong with its clusters: one
    /// that does not decode (a count, presence bits or row ends that disagree, a row outside
    /// it, another class's cluster size). Keys come in order: clusters by number, slots
    /// within one.
    func checkedKeys(_ c: ClassSchema) throws -> (keys: [Int64], problems: [String]) {
        let plan = plan(c)
        var keys: [Int64] = [], problems: [String] = []
        if plan.legacyRows {
            try self.keys(c) { k, _ in
                keys.append(k); return true
            }
            return (keys, [])
        }
        guard try hasObjectsTable(plan) else { return ([], []) }
        try writeClusters(plan)
        let shift: Int
        do { shift = try clusterShift(plan) } catch { return ([], ["\(c.name): \(error)"]) }
        try tx.scan(table: plan.objectsTable) { k, v in
            let number = KeyBytes.readObj(k, at: 0)
            do {
                guard k.count == 8 else { throw RowError("cluster key of \(k.count) bytes") }
                let view = try ClusterView(v, shift: shift)
                _ = try view.forEachObject(number: number) { k, _ in
                    keys.append(k)
                    return true
                }
                if let kept = try view.summary() {
                    let actual = ClusterSummary.of(try ClusterRows(view), number: number, plan)
                    for (pid, b) in kept.columns {
                        guard let a = actual?.bounds(pid), b.holds(a.least), b.holds(a.greatest) else {
                            throw RowError("cluster keeps bounds for property \(pid) that its rows break")
                        }
                    }
                }
            } catch {
                problems.append("\(c.name) cluster \(number): \(error)")
            }
            return problems.count < 50
        }
        return (keys, problems)
    }
}
