import Engine
import Foundation

/// The object layer's reads and writes of one engine transaction under one stored schema:
/// rows, lists, out-of-row values, indexes and backlinks, kept consistent with each other.
/// Typed contexts, dynamic tools, migrations and `check()` all go through here.
final class ObjectTables {
    let tx: Transaction
    private(set) var schema: StoredSchema
    let path: String
    /// A migration may give objects new values of a String or UUID primary key (uniqueness
    /// is verified when it ends); an integer primary key is the object key and never changes.
    var migrating = false

    init(tx: Transaction, schema: StoredSchema, path: String) {
        self.tx = tx
        writer = tx as? WriteTransaction
        self.schema = schema
        self.path = path
    }

    /// Tables of a context's transaction, starting from what is known of its version.
    convenience init(tx: Transaction, facts: VersionFacts, path: String) {
        self.init(tx: tx, schema: facts.schema, path: path)
        knownTables = facts.tables
        absentTables = facts.absentTables
        absentTablesAt = tx.catalogChanges
        knownShifts = facts.clusterShifts
    }

    /// What this transaction knows of its tables now: after a write's last change, what holds
    /// of the version it commits.
    func versionFacts() -> VersionFacts {
        var shifts = knownShifts
        for (cid, state) in clusterStates { shifts[cid] = state.shift ?? shifts[cid] }
        return VersionFacts(
            schema: schema, tables: knownTables,
            absentTables: absentTablesAt == tx.catalogChanges ? absentTables : [], clusterShifts: shifts)
    }

    /// `tx` when it writes. Kept, not cast for each use: a row's put or a property's set
    /// asked for it through a dynamic cast.
    let writer: WriteTransaction?

    func updateSchema(_ s: StoredSchema) {
        schema = s
        dropPlans()
        knownTables = []
        knownShifts = [:]
    }

    /// What `add` needs of a model type in this transaction: its model, stored class, plan and
    /// fields. Found by the type's identity: each object added looked its model up under a
    /// lock, its class by name and its fields under another lock (about 1.6K instructions an
    /// object). Dropped with the plans.
    final class AddTarget {
        let model: ModelInfo
        let cls: ClassSchema
        let plan: ClassPlan
        let fields: ClassLayout.Fields

        init(model: ModelInfo, cls: ClassSchema, plan: ClassPlan, fields: ClassLayout.Fields) {
            self.model = model
            self.cls = cls
            self.plan = plan
            self.fields = fields
        }

        /// `body` with the class schema borrowed from here, not copied out.
        @inline(__always)
        func withClass<R>(_ body: (ClassSchema) throws -> R) rethrows -> R { try body(cls) }
    }
    /// A few model types a transaction, searched in order (a hashed table cost a one-object
    /// write more than it saved): each target unretained for the search, and held in
    /// `heldAddTargets`.
    @exclusivity(unchecked) private var addTargets: [(type: ObjectIdentifier, target: Unmanaged<AddTarget>)] = []
    @exclusivity(unchecked) private var heldAddTargets: [AddTarget] = []

    /// `body` with the add target of `type`, lent without a retain: handed out retained, and
    /// the plan, model and fields read from it retained again, it cost about ten atomic
    /// operations for every object added. Targets live as long as the plans, which `body`
    /// must not drop (a migration's `updateSchema` or `forgetTable`).
    @inline(__always)
    func withAddTarget<R>(_ type: Object.Type, _ body: (AddTarget) throws -> R) throws -> R {
        let id = ObjectIdentifier(type)
        var found: Unmanaged<AddTarget>?
        addTargets.withUnsafeBufferPointer { targets in
            for i in targets.indices where targets[i].type == id {
                found = targets[i].target
                return
            }
        }
        if let found { return try found._withUnsafeGuaranteedRef(body) }
        let model = ModelInfo.of(type)
        let c = try cls(model.name)
        let p = plan(c)
        let a = AddTarget(model: model, cls: c, plan: p, fields: p.fields(of: model))
        heldAddTargets.append(a)
        addTargets.append((id, Unmanaged.passUnretained(a)))
        return try body(a)
    }

    /// What every row operation of a class needs in one transaction: the class's layout
    /// (shared by every transaction under the same stored schema) and what this transaction
    /// learned (a class, so handing it around costs one reference, not a copy of its arrays).
    final class ClassPlan {
        let layout: ClassLayout
        var name: String { layout.name }
        var cid: UInt32 { layout.cid }
        // The property lists every row write reads, kept here as lets: forwarded from the
        // layout, each read handed its array out retained (an atomic pair per list per row).
        let stored: [Property]
        let indexed: [Property]
        let links: [Property]
        let lists: [Property]
        let varLength: [Property]
        let summarized: [Property]
        var deletionReads: [Property] { layout.deletionReads }
        var byName: [String: Property] { layout.byName }
        var primaryKey: Property? { layout.primaryKey }
        var codec: RowCodec { layout.codec }
        var objectsTable: String { layout.objectsTable }
        var outOfRowTable: String { layout.outOfRowTable }
        var backlinksTable: String { layout.backlinksTable }
        var listsTable: String { layout.listsTable }
        var legacyRows: Bool { layout.legacyRows }
        var compactIndexKeys: Bool { layout.compactIndexKeys }
        let indexTables: [String]
        /// The class's clusters this write changed (shared by the
        /// plans of one transaction, which a migration may rebuild).
        let clusters: ClusterState
        /// Set once the objects table was seen to exist in this transaction (it goes away
        /// only in a migration, which drops every plan).
        @exclusivity(unchecked) var objectsTableExists = false
        /// Set likewise once an insert or a deletion made sure every index table of the class exists.
        @exclusivity(unchecked) var indexTablesExist = false
        /// Whether `fief/b`, `fief/l` and `fief/v` of the class exist, as last seen. Most
        /// classes keep their backlinks, lists and strings in their rows, and every read or
        /// deletion asked the catalog again, by a name hashed twice.
        @exclusivity(unchecked) var backlinksSeen = TableSeen()
        @exclusivity(unchecked) var listsSeen = TableSeen()
        @exclusivity(unchecked) var outOfRowSeen = TableSeen()
        /// The row found last, kept while the transaction's bytes outlive it (a read): the
        /// reads of one object come in a run (a property, then its backlinks), and the run
        /// costs one descent.
        @exclusivity(unchecked) var lastRow: (key: Int64, row: UnsafeRawBufferPointer)?
        /// The class id of each link property's target (`linkTargetCid`), once asked for.
        @exclusivity(unchecked) var linkTargetCids: [UInt32?]?
        /// The linking-objects property of this class asked for last, and the origin class and
        /// property whose links it follows: each of a walk's linking objects looked both up by
        /// name, hashing two names.
        @exclusivity(unchecked) var lastLinking: (name: String, origin: String, cid: UInt32, pid: UInt32?)?
        /// The clusters found, kept likewise: a walk from an object to its links and back (a
        /// person, its dogs, their owners) reads neighbours, a query's index hits come back
        /// to clusters found before, and neither costs a descent.
        @exclusivity(unchecked) var stableClusters = ClusterMemo()
        /// In a write, the cluster (nil: none) a lookup found last, and the transaction's
        /// `writes` then: its bytes stay put until the next engine write, so an insert's
        /// duplicate-key check and the decode of the cluster for the row cost one descent.
        /// `owned`: the cluster's bytes in a node the write already copied, which a set of a
        /// fixed-width value patches with no descent, once `WriteTransaction.claimOwned` allows.
        @exclusivity(unchecked) var writeLookup:
            (number: Int64, view: ClusterView?, writes: Int, owned: UnsafeMutableRawBufferPointer?)?

        /// The codec, unretained (the layout holds it as long as this plan holds the layout):
        /// `codec` hands it out retained, an atomic pair per row encoded.
        let codecRef: Unmanaged<RowCodec>

        init(_ layout: ClassLayout, clusters: ClusterState) {
            self.layout = layout
            self.clusters = clusters
            codecRef = Unmanaged.passUnretained(layout.codec)
            (stored, indexed, links, lists) = (layout.stored, layout.indexed, layout.links, layout.lists)
            (varLength, summarized, indexTables) = (layout.varLength, layout.summarized, layout.indexTables)
        }

        func seen(_ side: SideTable) -> TableSeen {
            switch side {
            case .backlinks: return backlinksSeen
            case .lists: return listsSeen
            case .outOfRow: return outOfRowSeen
            }
        }

        func see(_ side: SideTable, _ seen: TableSeen) {
            switch side {
            case .backlinks: backlinksSeen = seen
            case .lists: listsSeen = seen
            case .outOfRow: outOfRowSeen = seen
            }
        }

        func name(of side: SideTable) -> String {
            switch side {
            case .backlinks: return backlinksTable
            case .lists: return listsTable
            case .outOfRow: return outOfRowTable
            }
        }

        func fields(of info: ModelInfo) -> ClassLayout.Fields { layout.fields(of: info) }
    }
    // One transaction's, used by one thread: the state below skips run-time exclusivity
    // checks, which every insert paid on each of these several times.
    @exclusivity(unchecked) private var plans: [UInt32: ClassPlan] = [:]
    /// Where `putRow` encodes each row before its cluster copies it (one buffer per write,
    /// not an array allocated and freed per row).
    @exclusivity(unchecked) private var rowBuffer: [UInt8] = []
    /// The lists a new row keeps in itself (`insert`), a map kept for the next row.
    @exclusivity(unchecked) private var inlineListsBuffer: PidMap<[UInt8]> = [:]
    /// Where an insert gathers a list's targets and the entries they hold (`insert`).
    @exclusivity(unchecked) private var linkBuffers: (targets: [Int64], heldBy: [Int64]) = ([], [])
    /// Per class id, kept when a migration drops the plans.
    @exclusivity(unchecked) private var clusterStates: [UInt32: ClusterState] = [:]
    /// Cluster sizes known of the version before this transaction (`VersionFacts`).
    @exclusivity(unchecked) private var knownShifts: [UInt32: Int] = [:]

    func plan(_ c: ClassSchema) -> ClassPlan {
        // The class asked for last first: an insert asks for its class's plan several times.
        if let last = lastPlan, last.cid == c.cid { return last }
        // Then the one before it: adding objects with new linked ones (a person and its dogs)
        // alternates between two classes, and hashed the class id at every switch.
        if let previous = previousPlan, previous.cid == c.cid {
            previousPlan = lastPlan
            lastPlan = previous
            return previous
        }
        if let p = plans[c.cid] {
            previousPlan = lastPlan
            lastPlan = p
            return p
        }
        let state: ClusterState
        if let s = clusterStates[c.cid] {
            state = s
        } else {
            state = ClusterState()
            state.shift = knownShifts[c.cid]
            clusterStates[c.cid] = state
        }
        let p = ClassPlan(schema.layouts.layout(of: c, format: schema.format), clusters: state)
        plans[c.cid] = p
        return p
    }

    /// The plan of the class named `name`. The one found last is checked first: accessors
    /// read one class many times in a row, and comparing a name is cheaper than hashing it.
    func plan(named name: String) throws -> ClassPlan {
        if let last = lastPlan, last.name == name { return last }
        // Then the one before it: a walk between two classes (a dog's owners, their dogs)
        // alternates, and hashed the name at every step.
        if let previous = previousPlan, previous.name == name {
            previousPlan = lastPlan
            lastPlan = previous
            return previous
        }
        // Then by name: each miss of the last plan cost a copy of the class's schema.
        let p: ClassPlan
        if let known = plansByName[name] {
            p = known
        } else {
            p = plan(try cls(name))
            plansByName[name] = p
        }
        previousPlan = lastPlan
        lastPlan = p
        return p
    }
    @exclusivity(unchecked) private var lastPlan: ClassPlan? {
        didSet { lastPlanRef = lastPlan.map { Unmanaged.passUnretained($0) } }
    }
    @exclusivity(unchecked) private var lastPlanRef: Unmanaged<ClassPlan>?

    /// `body` with the plan of class `name`; the one asked for last is lent without a retain
    /// (`plan(named:)` hands it out retained, an atomic pair per call). Plans live as long as
    /// the tables, but for a migration's `dropPlans`, which `body` must not cause.
    @inline(__always)
    func withPlan<R>(named name: String, _ body: (ClassPlan) throws -> R) throws -> R {
        if let p = lastPlanRef, p._withUnsafeGuaranteedRef({ $0.name == name }) {
            return try p._withUnsafeGuaranteedRef(body)
        }
        return try body(plan(named: name))
    }
    @exclusivity(unchecked) private var previousPlan: ClassPlan?
    @exclusivity(unchecked) private var plansByName: [String: ClassPlan] = [:]

    /// Tables seen to exist in this transaction (they only go away in a migration, which
    /// resets this through `updateSchema` or `forgetTable`).
    @exclusivity(unchecked) private var knownTables = Set<String>()
    /// Tables found missing (a class without lists, backlinks or long values has none): each
    /// delete and list read asks, and a miss is a descent of the catalog. Good while the
    /// transaction's `catalogChanges` is what it was when they were found.
    @exclusivity(unchecked) private var absentTables = Set<String>()
    @exclusivity(unchecked) private var absentTablesAt = -1
    /// Backlinks new rows hold for origins not yet inserted (`PreLinks`).
    @exclusivity(unchecked) private var preLinks = PreLinks()
    /// Object keys handed out in this write, written back to `fief/meta` by `flush()`.
    @exclusivity(unchecked) private var pendingKeys: [UInt32: Int64] = [:]

    /// Index entries of objects inserted in this write, per index table, not yet in its tree:
    /// put in key order when the index is next read or changed, or at `flush()`. A bulk load's
    /// names come in random order; sorted, they fill the index's leaves from left to right
    /// (the engine's append split keeps each one full) and each put finds its path in cache.
    @exclusivity(unchecked) private var pendingIndexKeys = PendingIndexes()

    /// Puts the pending entries of index `t` into its tree, in key order.
    private func applyPendingIndex(_ t: String) throws {
        guard !pendingIndexKeys.isEmpty, let keys = pendingIndexKeys.take(t) else { return }
        let w = try ensureTable(t)
        try keys.apply(to: t, in: w)
    }

    /// Every index's pending entries, in their trees (before a check reads the indexes).
    func applyPendingIndexes() throws {
        for t in pendingIndexKeys.names.sorted() { try applyPendingIndex(t) }
    }

    func forgetTable(_ name: String) {
        _ = pendingIndexKeys.take(name)
        for (cid, state) in clusterStates where Tables.clusters(cid) == name { state.hot = [:] }
        knownTables.remove(name)
        dropPlans()
    }

    /// Forgets every class plan and what was found through them (the last two asked for, the
    /// model types added): a migration changed the schema or the tables they describe.
    private func dropPlans() {
        plans = [:]
        plansByName = [:]
        lastPlan = nil
        previousPlan = nil
        addTargets = []
        heldAddTargets = []
    }

    func cls(_ name: String) throws -> ClassSchema {
        guard let c = schema.classes[name] else { throw ObjectError.unknownClass(name) }
        return c
    }

    func codec(_ c: ClassSchema) -> RowCodec { plan(c).codec }

    func hasTable(_ name: String) throws -> Bool {
        if knownTables.contains(name) { return true }
        if absentTablesAt == tx.catalogChanges, absentTables.contains(name) { return false }
        guard try tx.tableInfo(name) != nil else {
            if absentTablesAt != tx.catalogChanges {
                absentTables = []
                absentTablesAt = tx.catalogChanges
            }
            absentTables.insert(name)
            return false
        }
        knownTables.insert(name)
        return true
    }

    /// Creates the table on first write.
    private func ensureTable(_ name: String, key: KeyKind = .bytes, value: KeyKind = .bytes) throws -> WriteTransaction
    {
        guard let w = writer else { throw ObjectError.notInWriteTransaction("changing objects") }
        if try !hasTable(name) {
            try w.createTable(name, keyKind: key, valueKind: value)
            knownTables.insert(name)
        }
        return w
    }

    // MARK: Reads

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

    /// Changes made in this transaction: the engine's, and those to clusters in memory.
    var changes: Int { tx.writes &+ hotChanges }
    @exclusivity(unchecked) private var hotChanges = 0

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
    private func hasObjectsTable(_ plan: ClassPlan) throws -> Bool {
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

    /// Whether the row of `key` keeps list `p` in itself (for `ObjectCheck`).
    func keepsListInRow(_ c: ClassSchema, _ key: Int64, _ p: Property) throws -> Bool {
        try inlineLists(plan(c), key)[p.pid] != nil
    }

    /// The lists the row of `key` keeps in itself, by pid.
    private func inlineLists(_ plan: ClassPlan, _ key: Int64) throws -> PidMap<[UInt8]> {
        try withRow(plan, key) { row in try row.map { r in try decodeGuarded { try plan.codec.inlineLists(r) } } ?? [:]
        }
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

    /// `ownerRow`: the owner's row when the caller holds it (valid now), so a list kept in
    /// the row costs no descent.
    func list(_ c: ClassSchema, _ key: Int64, _ p: Property, ownerRow: UnsafeRawBufferPointer? = nil) throws
        -> [ObjectValue]
    {
        try list(plan(c), key, p, ownerRow: ownerRow)
    }

    func list(_ plan: ClassPlan, _ key: Int64, _ p: Property, ownerRow: UnsafeRawBufferPointer? = nil) throws
        -> [ObjectValue]
    {
        try list(plan, key, pid: p.pid, ownerRow: ownerRow)
    }

    func list(_ plan: ClassPlan, _ key: Int64, pid: UInt32, ownerRow: UnsafeRawBufferPointer?) throws -> [ObjectValue] {
        func inline(_ row: UnsafeRawBufferPointer?) throws -> [ObjectValue]? {
            guard let row else { return nil }
            return try decodeGuarded {
                try plan.codec.inlineList(row, pid: pid).map { try TaggedValue.decodeAll($0) }
            }
        }
        let inRow = try ownerRow.map(inline) ?? withRow(plan, key, inline)
        if let inRow { return inRow }
        let t = plan.listsTable
        guard try hasTable(.lists, plan) else { return [] }
        var out: [ObjectValue] = []
        let prefix = KeyBytes.property(key, pid)
        try tx.scan(table: t, from: prefix, to: KeyBytes.successor(prefix)) { _, v in
            out.append(contentsOf: try decodeGuarded { try TaggedValue.decodeAll(v) })
            return true
        }
        return out
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

    /// Origins linking to `key` through `origin`'s property `p`, each once, in key order: those
    /// the target's row keeps, then any `fief/b` keeps.
    func backlinks(to target: ClassSchema, _ key: Int64, from origin: ClassSchema, _ p: Property) throws -> [Int64] {
        try backlinks(to: plan(target), key, fromCid: origin.cid, pid: p.pid)
    }

    /// As `backlinks(to:_:from:_:)`, for a caller holding the target's plan and the origin
    /// property's ids (a linking objects' count, asked at each step of a for-in).
    func backlinks(to plan: ClassPlan, _ key: Int64, fromCid cid: UInt32, pid: UInt32) throws -> [Int64] {
        var out: [Int64] = []
        try withRow(plan, key) { row in
            guard let row else { return }
            try decodeGuarded { try plan.codec.backlinkOrigins(row, cid: cid, pid: pid, into: &out) }
        }
        let t = plan.backlinksTable
        guard try hasTable(.backlinks, plan) else { return out }
        let inRow = out.count
        let prefix = KeyBytes.obj(key) + KeyBytes.u32(cid) + KeyBytes.u32(pid)
        try tx.scan(table: t, from: prefix, to: KeyBytes.successor(prefix)) { k, _ in
            out.append(KeyBytes.readObj(k, at: 16))
            return true
        }
        if inRow > 0 && out.count > inRow { out.sort() }
        return out
    }

    /// `hasTable` of one of the class's side tables, remembered in its plan: a table that
    /// exists stays (only a migration drops one, and it drops the plans), a missing one is
    /// missing while the transaction's catalog has not changed since.
    private func hasTable(_ side: SideTable, _ plan: ClassPlan) throws -> Bool {
        let seen = plan.seen(side)
        if seen.exists { return true }
        if seen.absentAt == tx.catalogChanges { return false }
        let exists = try hasTable(plan.name(of: side))
        plan.see(side, exists ? TableSeen(exists: true) : TableSeen(absentAt: tx.catalogChanges))
        return exists
    }

    /// The backlinks the row of `key` keeps (none when it has no row).
    func rowBacklinks(_ target: ClassSchema, _ key: Int64) throws -> [CompactRow.Backlink] {
        try rowBacklinks(plan(target), key)
    }

    func rowBacklinks(_ plan: ClassPlan, _ key: Int64) throws -> [CompactRow.Backlink] {
        try withRow(plan, key) { row in
            try row.map { r in try decodeGuarded { try plan.codec.backlinks(r) } } ?? []
        }
    }

    /// The backlink entries to `key` that `fief/b` keeps (those its row had no room for), appended
    /// to `out` as the row's are: (origin class id, property id, origin key, multiplicity).
    private func tableBacklinks(_ plan: ClassPlan, _ key: Int64, into out: inout [CompactRow.Backlink]) throws {
        let t = plan.backlinksTable
        guard try hasTable(.backlinks, plan) else { return }
        let prefix = KeyBytes.obj(key)
        try tx.scan(table: t, from: prefix, to: KeyBytes.successor(prefix)) { k, v in
            out.append(
                CompactRow.Backlink(
                    cid: KeyBytes.readU32(k, at: 8), pid: KeyBytes.readU32(k, at: 12),
                    origin: KeyBytes.readObj(k, at: 16), count: try Int64(valueBytes: v)))
            return true
        }
    }

    /// Keys whose indexed value lies in [from, to) of index-key bytes.
    func indexScan(_ c: ClassSchema, _ p: Property, from: [UInt8]?, to: [UInt8]?, _ body: (Int64) throws -> Bool) throws
    {
        let t = Tables.index(c.cid, p.pid)
        try applyPendingIndex(t)
        guard try hasTable(t) else { return }
        let compact = plan(c).compactIndexKeys
        try tx.scan(table: t, from: from, to: to) { k, _ in try body(KeyBytes.indexEntryKey(k, compact: compact)) }
    }

    /// The entry of object `key` with value `v` in an index of the class.
    func indexEntry(_ plan: ClassPlan, _ v: ObjectValue, _ key: Int64) -> [UInt8] {
        KeyBytes.indexEntry(KeyBytes.indexValue(v), key, compact: plan.compactIndexKeys)
    }

    func indexLookup(_ c: ClassSchema, _ p: Property, _ v: ObjectValue) throws -> [Int64] {
        let prefix = KeyBytes.indexValue(v)
        var out: [Int64] = []
        try indexScan(c, p, from: prefix, to: KeyBytes.successor(prefix)) {
            out.append($0); return true
        }
        return out
    }

    /// The object with primary key `v`, if any.
    func lookupPrimaryKey(_ c: ClassSchema, _ v: ObjectValue) throws -> Int64? {
        guard let pk = c.primaryKey else { return nil }
        return try lookupPrimaryKey(c, pk, v)
    }

    /// As `lookupPrimaryKey(c, v)`, with the class's primary key at hand (its plan's): found
    /// in the schema, it was a search and a copy of the property per object added.
    func lookupPrimaryKey(_ c: ClassSchema, _ pk: Property, _ v: ObjectValue) throws -> Int64? {
        if pk.kind.isInteger {
            guard case .int(let k) = v else { return nil }
            return try exists(c, k) ? k : nil
        }
        return try indexLookup(c, pk, v).first
    }

    // MARK: Writes

    /// A fresh key for a class without an integer primary key; never reused.
    func nextKey(_ c: ClassSchema) throws -> Int64 {
        if let k = pendingKeys[c.cid] {
            pendingKeys[c.cid] = k + 1
            return k
        }
        _ = try ensureTable(Tables.meta)
        let cur = try keyCounter(c)
        pendingKeys[c.cid] = cur + 1
        return cur
    }

    /// The next key `nextKey` gives for class `c`, as committed.
    func keyCounter(_ c: ClassSchema) throws -> Int64 {
        guard try hasTable(Tables.meta) else { return 1 }
        return try tx.get(table: Tables.meta, key: Array("next/\(c.cid)".utf8)).map {
            try $0.withUnsafeBytes { try Int64(valueBytes: $0) }
        } ?? 1
    }

    /// Writes the clusters, index entries and key counters this write changed; call before
    /// the commit.
    func flush() throws {
        // Held for an origin never inserted (every failure takes its own back first).
        try revoke(preLinks.takeAll())
        try applyPendingIndexes()
        guard let w = writer else { return }
        for cid in clusterStates.keys.sorted() {
            guard let c = schema.byCid(cid) else { continue }
            try writeClusters(plan(c))
        }
        guard !pendingKeys.isEmpty else { return }
        for (cid, next) in pendingKeys {
            let stored = BrokenObjectLayer.on(.keyCounterBehind) ? next - 1 : next
            try w.put(table: Tables.meta, key: Array("next/\(cid)".utf8), value: stored.valueBytes)
        }
        pendingKeys = [:]
    }

    /// Writes a new object's row, list contents, index entries and backlinks.
    /// `keyIsFree`: the caller has just seen that no object has `key` (a primary key lookup).
    /// `linkedFrom`: the entry of an origin being added with this object, which links to it;
    /// the new row holds it from the start (`PreLinks`).
    /// `plan`: the class's, at hand (an add's), lent: found again here, it was held (an atomic
    /// pair per object added, and one more for the existence check's own lookup).
    func insert(
        _ c: ClassSchema, _ plan: ClassPlan, _ key: Int64, values vals: inout PidMap<ObjectValue>,
        lists: PidMap<[ObjectValue]>, keyIsFree: Bool = false, linkedFrom: CompactRow.Backlink? = nil
    ) throws {
        if !keyIsFree, try exists(plan, key) {
            throw ObjectError.duplicatePrimaryKey(className: c.name, value: String(key))
        }
        // The properties by index, their fields read in place: a `for p in` copied each
        // `Property` (its name and target retained and released) for every object.
        let listProperties = plan.lists, indexed = plan.indexed
        for i in listProperties.indices {
            let pid = listProperties[i].pid
            vals[pid] = .int(Int64(lists[pid]?.count ?? 0))
        }
        // Each value lent where it lies (copied out, a string's retain and release apiece).
        var hint = 0
        for i in indexed.indices {
            func add(_ v: ObjectValue) throws {
                if indexed[i].primaryKey, !indexed[i].kind.isInteger || !keyIsFree,
                    try !indexLookup(c, indexed[i], v).isEmpty
                {
                    throw ObjectError.duplicatePrimaryKey(className: c.name, value: v.description)
                }
                let t = plan.indexTables[i]
                if !plan.indexTablesExist { _ = try ensureTable(t) }
                pendingIndexKeys.append(value: v, key: key, compact: plan.compactIndexKeys, to: t)
            }
            if try vals.lend(indexed[i].pid, hint: &hint, add) == nil { try add(ObjectTables.defaultValue(indexed[i])) }
        }
        plan.indexTablesExist = true
        // The write's map of inline lists, lent for this insert (no object is added during it).
        var inRow: PidMap<[UInt8]> = [:]
        swap(&inRow, &inlineListsBuffer)
        defer {
            inRow.removeAll()
            swap(&inRow, &inlineListsBuffer)
        }
        for i in listProperties.indices {
            let pid = listProperties[i].pid
            inRow[pid] = RowCodec.inlineBytes(lists[pid] ?? [])
        }
        let held = plan.legacyRows || BrokenObjectLayer.on(.skipBacklink) ? nil : linkedFrom
        try putRow(c, plan, key, vals, inlineLists: inRow, fresh: true, heldBacklink: held)
        if let held { preLinks.add(held, targetCid: c.cid, target: key) }
        // Entries new targets already hold for this object (added with it, before it).
        var pre = preLinks.take(cid: c.cid, key: key)
        // By index: a `for p in` copied each `Property` (its strings retained) per object.
        let links = plan.links
        for li in links.indices {
            // Held by rows of the property's target class only (a dynamic add may give an
            // object of another class, whose entry is then taken back).
            let pid = links[li].pid, tc = pre.isEmpty ? nil : linkTargetCid(plan, li)
            let mine = { (h: PreLinks.Held) in h.pid == pid && h.targetCid == tc }
            if links[li].list {
                let items = lists[pid] ?? []
                if !inRow.contains(pid) { try writeList(c, key, links[li], items, fresh: true) }
                // A new object has no backlink entries yet: each target's is put once, with
                // its multiplicity, in key order (no read of the entry first).
                // The write's buffers, lent while this list's entries are put (nothing in
                // between adds an object): two arrays per list of links added before.
                var targets: [Int64] = [], heldBy: [Int64] = []
                swap(&targets, &linkBuffers.targets)
                swap(&heldBy, &linkBuffers.heldBy)
                defer {
                    // One by one, as `PidMap.removeAll`: a list holds a few.
                    while !targets.isEmpty { targets.removeLast() }
                    while !heldBy.isEmpty { heldBy.removeLast() }
                    swap(&targets, &linkBuffers.targets)
                    swap(&heldBy, &linkBuffers.heldBy)
                }
                targets.reserveCapacity(items.count)
                for case .link(let t) in items { targets.append(t) }
                // Sorted only when out of order: sorting an empty list's array allocated a
                // buffer of its own for it, and targets added with their origin come in key
                // order already (sorting them anyway was a merge sort per list).
                if !ObjectTables.ascending(targets) { targets.sort() }
                // Each held entry counts one of its target's links (a target is added once).
                // Both sorted, they are matched in one merge walk (a Set of them cost an
                // allocation and a hash per target).
                if tc != nil, pre.contains(where: mine) {
                    // Split in one pass: `removeAll(where:)` after the search partitioned and
                    // moved the entries for each list.
                    var rest: [PreLinks.Held] = []
                    for h in pre {
                        if mine(h) { heldBy.append(h.target) } else { rest.append(h) }
                    }
                    pre = rest
                    if !ObjectTables.ascending(heldBy) { heldBy.sort() }
                }
                var unmatched: [Int64] = []
                var i = 0, h = 0
                while i < targets.count {
                    var j = i + 1
                    while j < targets.count && targets[j] == targets[i] { j += 1 }
                    while h < heldBy.count && heldBy[h] < targets[i] {
                        unmatched.append(heldBy[h])
                        h += 1
                    }
                    var n = j - i
                    if h < heldBy.count && heldBy[h] == targets[i] {
                        n -= 1
                        h += 1
                        // A target held twice (none should be) keeps its second entry unmatched.
                        while h < heldBy.count && heldBy[h] == targets[i] {
                            unmatched.append(heldBy[h])
                            h += 1
                        }
                    }
                    if n > 0 { try adjustBacklink(c, links[li], from: key, to: targets[i], by: Int64(n), fresh: true) }
                    i = j
                }
                // Only when some are left: a slice of `heldBy` holds its buffer (an atomic pair).
                if h < heldBy.count { unmatched.append(contentsOf: heldBy[h...]) }
                if let tc {
                    pre += unmatched.map { PreLinks.Held(cid: c.cid, origin: key, pid: pid, targetCid: tc, target: $0) }
                }
            } else if case .link(let t)? = vals[pid] {
                if tc != nil, let h = pre.firstIndex(where: { mine($0) && $0.target == t }) {
                    pre.remove(at: h)
                } else {
                    try adjustBacklink(c, links[li], from: key, to: t, by: 1)
                }
            }
        }
        // Held for a link the object did not keep (none should be): taken back.
        try revoke(pre)
        // Only for a class with lists of values: asking each list property whether it links
        // copied the `Property` (three retains and releases) for every object added.
        guard plan.layout.hasValueLists else { return }
        for i in listProperties.indices where !listProperties[i].isLink && !inRow.contains(listProperties[i].pid) {
            try writeList(c, key, listProperties[i], lists[listProperties[i].pid] ?? [], fresh: true)
        }
    }

    /// Whether `keys` are in ascending order (an empty list and one of one are).
    private static func ascending(_ keys: [Int64]) -> Bool {
        var i = 1
        while i < keys.count {
            if keys[i - 1] > keys[i] { return false }
            i += 1
        }
        return true
    }

    /// The class id of the target of link property `i` of `plan` (`plan.links[i]`), found by
    /// name once per plan: every object added with new targets looked it up by name.
    private func linkTargetCid(_ plan: ClassPlan, _ i: Int) -> UInt32? {
        if plan.linkTargetCids == nil {
            plan.linkTargetCids = plan.links.map { p in p.target.flatMap { schema.classes[$0]?.cid } }
        }
        return plan.linkTargetCids![i]
    }

    /// A value of another kind than its property's, thrown before anything is written.
    private func checkKinds(_ c: ClassSchema, _ plan: ClassPlan, _ vals: PidMap<ObjectValue>) throws {
        // Against the kinds alone, each value lent: looking each stored property's value up
        // copied the value, and the property, per row.
        let kinds = plan.layout.storedKinds
        let bad = vals.firstPid { pid, v in
            // A value of no stored property (none should be) is not the row's: not checked.
            guard let k = kinds.first(where: { $0.pid == pid }) else { return false }
            return !v.fits(kind: k.kind, list: k.list)
        }
        guard let bad, let p = plan.stored.first(where: { $0.pid == bad }), let v = vals[bad] else { return }
        throw ObjectError.typeMismatch(className: c.name, property: p.name, expected: p.typeName, found: "\(v)")
    }

    /// `heldBacklink`: a new row's first backlink entry (`fresh` only). `plan`: the class's,
    /// which each caller has at hand (found again here and for the codec, each was a lookup
    /// and an atomic pair per row).
    private func putRow(
        _ c: ClassSchema, _ plan: ClassPlan, _ key: Int64, _ vals: PidMap<ObjectValue>, inlineLists: PidMap<[UInt8]>,
        fresh: Bool = false, heldBacklink: CompactRow.Backlink? = nil
    ) throws {
        let varLength = plan.varLength
        var hint = 0
        for i in varLength.indices {
            let n =
                vals.lend(varLength[i].pid, hint: &hint) { v -> Int in
                    switch v {
                    case .string(let s): return s.utf8.count
                    case .data(let d): return d.count
                    default: return 0
                    }
                } ?? 0
            if n > 16 << 20 { throw ObjectError.valueTooLarge(className: c.name, property: varLength[i].name, size: n) }
        }
        try checkKinds(c, plan, vals)
        let held = fresh ? heldBacklink.map { RowCodec.backlinksSize(CompactRow.size(of: $0)) } ?? 0 : 0
        // The write's row buffer, taken while this row is encoded and put (nothing in between
        // puts another row). The row goes after those before it; the buffer is emptied now
        // and then.
        var row: [UInt8] = []
        swap(&row, &rowBuffer)
        defer { swap(&row, &rowBuffer) }
        if row.count > 1 << 12 { row.removeAll(keepingCapacity: true) }
        let start = row.count
        let moved = plan.codecRef._withUnsafeGuaranteedRef {
            $0.encode(vals, inlineLists: inlineLists, key: key, extraCapacity: held, into: &row)
        }
        guard let w = writer else { throw ObjectError.notInWriteTransaction("changing objects") }
        if !fresh && !BrokenObjectLayer.on(.rewriteDropsBacklinks) {
            // The links to the object that its row kept stay with it, appended from where the
            // old row lies (its own bytes, not the buffer's).
            try withRow(plan, key) { old in
                guard let old else { return }
                try decodeGuarded { RowCodec.appendBacklinks(try plan.codec.backlinkBytes(old), to: &row) }
            }
        } else if fresh, let heldBacklink {
            RowCodec.appendBacklink(heldBacklink, to: &row)
        }
        // Values that moved out before and stay in row now must not linger in fief/v. (The
        // table's name read only where it is used: a new row of short values retained and
        // released it.)
        if !fresh, try hasTable(.outOfRow, plan) {
            let vt = plan.outOfRowTable
            for p in plan.varLength where moved[p.pid] == nil {
                try w.delete(table: vt, key: KeyBytes.property(key, p.pid))
            }
        }
        if !moved.isEmpty {
            let vt = plan.outOfRowTable
            let w2 = try ensureTable(vt)
            for (pid, bytes) in moved { try w2.put(table: vt, key: KeyBytes.property(key, pid), value: bytes) }
        }
        try row.withUnsafeBytes { all in
            let r = UnsafeRawBufferPointer(rebasing: all[start...])
            let cut = BrokenObjectLayer.on(.shortRow) && key % 4 == 1 && r.count > 8
            try putRowBytes(plan, key, cut ? UnsafeRawBufferPointer(rebasing: r.dropLast(8)) : r)
        }
    }

    // MARK: Clusters a write changes

    /// Puts an encoded row into its cluster (the row of a converted format-1 file, too).
    func putRowBytes(_ plan: ClassPlan, _ key: Int64, _ row: [UInt8]) throws {
        // Lent by address: captured by the closure, the row was retained and released.
        try row.withUnsafeBytes { try putRowBytes(plan, key, $0) }
    }

    /// As above, the row lent by address (a new row, from the write's row buffer).
    private func putRowBytes(_ plan: ClassPlan, _ key: Int64, _ row: UnsafeRawBufferPointer) throws {
        _ = try withHotCluster(plan, key) { $0.put(slot: $1, row) }
    }

    /// Removes an object's row from its cluster.
    private func removeRow(_ plan: ClassPlan, _ key: Int64) throws {
        _ = try withHotCluster(plan, key) { $0.remove(slot: $1) }
    }

    /// The class's cluster size: chosen from its layout by the write that makes its first
    /// cluster, and kept in `fief/meta` for the file's life.
    private func writableShift(_ plan: ClassPlan) throws -> Int {
        if let s = plan.clusters.shift { return s }
        if try hasObjectsTable(plan) { return try clusterShift(plan) }
        let s = ClusterShift.choose(plan.codec.current)
        try ensureTable(Tables.meta).put(
            table: Tables.meta, key: ObjectTables.shiftKey(plan.cid), value: Int64(s).valueBytes)
        plan.clusters.shift = s
        return s
    }

    /// Runs `body` on the cluster that holds (or will hold) `key`, decoded for this write to
    /// change, with the key's slot in it.
    private func withHotCluster<T>(_ plan: ClassPlan, _ key: Int64, _ body: (ClusterRows, Int) throws -> T) throws -> T
    {
        guard !plan.legacyRows else {
            throw ObjectError.notInWriteTransaction("changing a format-1 file before it is converted")
        }
        let shift = try writableShift(plan)
        let number = key >> shift, slot = Int(key & ((1 << shift) - 1))
        hotChanges &+= 1
        let state = plan.clusters
        let rows: ClusterRows
        if let last = state.last, last.number == number {
            rows = last.rows
        } else if let hot = state.hotRows(number) {
            rows = hot
            state.last = (number, hot)
        } else {
            if !plan.objectsTableExists {
                _ = try ensureTable(plan.objectsTable, key: .int64)
                plan.objectsTableExists = true
            }
            if let found = plan.writeLookup, found.number == number, found.writes == tx.writes {
                if let v = found.view {
                    rows = try decodeGuarded { try ClusterRows(v) }
                } else {
                    rows = ClusterRows.empty(shift: shift)
                }
            } else {
                rows = try number.withKeyBytes { k in
                    try tx.withValue(table: plan.objectsTable, keyBytes: k) { v in
                        guard let v else { return ClusterRows.empty(shift: shift) }
                        return try decodeGuarded { try ClusterRows(ClusterView(v, shift: shift)) }
                    }
                }
            }
            plan.writeLookup = nil
            state.hot[number] = rows
            state.last = (number, rows)
        }
        let before = rows.count
        let out = try body(rows, slot)
        // A cluster an insert filled is written at once (a load in key order does not come
        // back to it), and many changed ones too, so a bulk load keeps few rows in memory.
        if rows.isFull && rows.count > before {
            try writeCluster(plan, number)
        } else if state.hot.count > ObjectTables.maxHotClusters {
            try writeClusters(plan)
        }
        return out
    }

    static let maxHotClusters = 64

    private func writeCluster(_ plan: ClassPlan, _ number: Int64) throws {
        guard let rows = plan.clusters.hot.removeValue(forKey: number), let w = writer else { return }
        hotChanges &+= 1
        if let bytes = rows.encoded(summary: ClusterSummary.of(rows, number: number, plan)) {
            try number.withKeyBytes { try w.put(table: plan.objectsTable, keyBytes: $0, value: bytes) }
        } else {
            try w.delete(table: plan.objectsTable, key: KeyBytes.obj(number))
        }
    }

    /// Writes the class's changed clusters back to its tree, one put each.
    func writeClusters(_ plan: ClassPlan) throws {
        guard !plan.clusters.hot.isEmpty else { return }
        for n in plan.clusters.hot.keys.sorted() { try writeCluster(plan, n) }
    }

    /// Patches a fixed-width value in the row of `key` where it lies: in a cluster this write
    /// holds decoded, or in the leaf this write copied (`mutateValue`: one descent, no decode
    /// of the cluster, no put). Returns nil when no object has `key`; `.some(nil)` when the
    /// row must be encoded again (its layout is not the current one).
    /// The write's engine transaction is reached through `tx` (the caller has seen it writes):
    /// bound from `writer`, it was an atomic pair per set.
    private func patchRow(_ plan: ClassPlan, _ key: Int64, _ p: Property, _ v: ObjectValue) throws -> ObjectValue?? {
        guard try hasObjectsTable(plan), !plan.legacyRows else { return nil }
        let shift = try clusterShift(plan)
        let number = key >> shift, slot = Int(key & ((1 << shift) - 1))
        var old: ObjectValue?
        var found = false
        if let hot = plan.clusters.hotRows(number) {
            hotChanges &+= 1
            found = try hot.mutateRow(slot: slot) { row in
                old = try decodeGuarded { try plan.codec.patch(row, pid: p.pid, v, key: key) }
            }
        } else {
            // The cluster a lookup just found in a node this write copied is patched there,
            // with no second descent (an update finds its object, then sets a property).
            if let lookup = plan.writeLookup, lookup.number == number, let blob = lookup.owned,
                tx.claimOwned(at: lookup.writes)
            {
                plan.writeLookup = nil
                // The lookup's view is of these very bytes: not decoded again.
                let view = lookup.view.flatMap {
                    $0.bytes.baseAddress == UnsafeRawPointer(blob.baseAddress) && $0.bytes.count == blob.count
                        ? $0 : nil
                }
                (found, old) = try patchCluster(blob, view, plan, shift: shift, slot: slot, p, v, key: key)
            } else {
                _ = try number.withKeyBytes { k in
                    try tx.mutateValue(table: plan.objectsTable, keyBytes: k) { blob in
                        (found, old) = try patchCluster(blob, nil, plan, shift: shift, slot: slot, p, v, key: key)
                    }
                }
            }
        }
        return found ? .some(old) : nil
    }

    /// Patches property `p` of the object in `slot` of a cluster's bytes, changed in place:
    /// whether the slot holds an object, and the value it had (nil when the row must be
    /// encoded again). `decoded`: a view of `blob` already made (by the lookup that found it).
    private func patchCluster(
        _ blob: UnsafeMutableRawBufferPointer, _ decoded: ClusterView?, _ plan: ClassPlan, shift: Int, slot: Int,
        _ p: Property, _ v: ObjectValue, key: Int64
    ) throws -> (found: Bool, old: ObjectValue?) {
        try decodeGuarded {
            let view = try decoded ?? ClusterView(UnsafeRawBufferPointer(blob), shift: shift)
            guard let i = view.index(ofSlot: slot) else { return (false, nil) }
            let old = try plan.codecRef._withUnsafeGuaranteedRef {
                try $0.patch(
                    UnsafeMutableRawBufferPointer(rebasing: blob[try view.rowRange(at: i)]), pid: p.pid, v, key: key)
            }
            if let b = view.bounds(of: p.pid), !BrokenObjectLayer.on(.staleClusterSummary) {
                // Bounds that no longer hold are dropped, not widened: the new numbers may
                // not fit where the old ones were.
                if case .int(let x) = v, b.holds(x) { return (true, old) }
                blob[1] &= ~ClusterSummary.flag
            }
            return (true, old)
        }
    }

    /// Takes back the entries new rows hold for origin `key` of class `c`, which failed before
    /// its row was written.
    func revokePreLinks(_ c: ClassSchema, _ key: Int64) throws {
        try revoke(preLinks.take(cid: c.cid, key: key))
    }

    /// Takes `held` back from the rows that hold them, whatever the origin's property is now.
    private func revoke(_ held: [PreLinks.Held]) throws {
        for h in held {
            guard let tc = schema.byCid(h.targetCid) else { continue }
            _ = try adjustBacklinkInRow(
                plan(tc), h.target, CompactRow.Backlink(cid: h.cid, pid: h.pid, origin: h.origin, count: -1))
        }
    }

    /// Changes by `delta` how many times `from` links to `target` through `p` (the entry goes at
    /// 0). The entry lives in the target's row when it has room (`CompactRow`), else in
    /// `fief/b`, where an old file's entries stay too. `fresh`: the origin is new, so no entry
    /// exists yet and `fief/b` is not read.
    private func adjustBacklink(
        _ origin: ClassSchema, _ p: Property, from: Int64, to target: Int64, by delta: Int64,
        fresh: Bool = false
    ) throws {
        guard let tname = p.target, let tc = schema.classes[tname] else { return }
        if BrokenObjectLayer.on(.skipBacklink) && p.list && delta > 0 { return }
        let tplan = plan(tc)
        let t = tplan.backlinksTable
        let k = KeyBytes.backlink(target: target, originClass: origin.cid, pid: p.pid, origin: from)
        if !fresh, try hasTable(.backlinks, tplan), let w = writer, let cur = try w.get(table: t, key: k) {
            let (next, overflow) = try cur.withUnsafeBytes { try Int64(valueBytes: $0) }.addingReportingOverflow(delta)
            if next <= 0 || overflow {
                try w.delete(table: t, key: k)
            } else {
                try w.put(table: t, key: k, value: next.valueBytes)
            }
            return
        }
        let entry = CompactRow.Backlink(cid: origin.cid, pid: p.pid, origin: from, count: delta)
        if try adjustBacklinkInRow(tplan, target, entry) { return }
        guard delta > 0 else { return }
        try ensureTable(t, value: .int64).put(table: t, key: k, value: delta.valueBytes)
    }

    /// Adds `change.count` to the entry for `change`'s origin in the row of `target`; false,
    /// changing nothing, when there is no compact row or the entry does not fit in it.
    private func adjustBacklinkInRow(_ plan: ClassPlan, _ target: Int64, _ change: CompactRow.Backlink) throws -> Bool {
        guard !plan.legacyRows, try withRow(plan, target, { $0.map { CompactRow.header($0) != nil } }) == true else {
            return false
        }
        return try withHotCluster(plan, target) { rows, slot in
            let new = try rows.withRow(slot: slot) { row -> [UInt8]?? in
                guard let row else { return nil }
                var entries = try decodeGuarded { try plan.codec.backlinks(row) }
                if let i = entries.firstIndex(where: { $0.sameSource(change) }) {
                    entries[i].count += change.count
                    if entries[i].count <= 0 {
                        entries.remove(at: i)
                    } else if CompactRow.encode(entries) == nil {
                        // Grown past the row's room: the entry moves whole to fief/b, so it is
                        // never kept in both places.
                        let moved = entries.remove(at: i)
                        let t = plan.backlinksTable
                        let k = KeyBytes.backlink(
                            target: target, originClass: moved.cid, pid: moved.pid, origin: moved.origin)
                        try ensureTable(t, value: .int64).put(table: t, key: k, value: moved.count.valueBytes)
                    }
                } else {
                    guard change.count > 0 else { return .some(nil) }
                    entries.insert(change, at: entries.firstIndex { change.precedes($0) } ?? entries.count)
                }
                guard let bytes = CompactRow.encode(entries) else { return nil }
                return try decodeGuarded { try plan.codec.replacingBacklinks(row, with: bytes) }
            }
            guard let new else { return false }
            if let new { rows.put(slot: slot, new) }
            return true
        }
    }

    /// Sets one stored, non-list property, keeping its index and backlinks in step.
    func set(_ c: ClassSchema, _ key: Int64, _ p: Property, _ v: ObjectValue) throws {
        try set(plan(c), key, p, v, schema: c)
    }

    /// As above, with the class's plan at hand (an accessor's setter finds it by name): the
    /// class schema is looked up only where an index, a link or a whole row needs it, so an
    /// age or a flag set costs no lookup and copy of it.
    /// `schema`: the class schema, when the caller has it (a migration's may not be the one
    /// stored yet).
    func set(_ plan: ClassPlan, _ key: Int64, _ p: Property, _ v: ObjectValue, schema c: ClassSchema? = nil) throws {
        guard v.fits(p) else {
            throw ObjectError.typeMismatch(className: plan.name, property: p.name, expected: p.typeName, found: "\(v)")
        }
        if !p.primaryKey, !p.list, !p.kind.isVariableLength, writer != nil {
            // A fixed-width value in a row of the current layout: its bytes patched in place
            // (no decode into a dictionary, no re-encode).
            guard let patched = try patchRow(plan, key, p, v) else {
                throw ObjectError.objectDeleted(className: plan.name)
            }
            if let old = patched {
                if old == v, !(old.numeric?.isNaN ?? false) { return }
                if p.hasIndex || p.isLink {
                    try changeIndexAndBacklinks(try c ?? cls(plan.name), key, p, from: old, to: v)
                }
                return
            }
        }
        let c = try c ?? cls(plan.name)
        var vals = try values(c, key)
        let old = vals[p.pid] ?? ObjectTables.defaultValue(p)
        if p.primaryKey && (!migrating || p.kind.isInteger) {
            if old != v { throw ObjectError.primaryKeyChange(className: c.name, property: p.name) }
            return
        }
        if old == v, !(old.numeric?.isNaN ?? false) { return }
        vals[p.pid] = v
        try changeIndexAndBacklinks(c, key, p, from: old, to: v)
        try putRow(c, plan, key, vals, inlineLists: try inlineLists(plan, key))
    }

    /// Keeps a property's index entry and, for a link, the target's backlinks in step with a
    /// change of its value.
    private func changeIndexAndBacklinks(
        _ c: ClassSchema, _ key: Int64, _ p: Property, from old: ObjectValue, to v: ObjectValue
    ) throws {
        if p.hasIndex {
            let t = Tables.index(c.cid, p.pid)
            try applyPendingIndex(t)
            let w = try ensureTable(t)
            if !BrokenObjectLayer.on(.staleIndex) {
                try w.delete(table: t, key: indexEntry(plan(c), old, key))
            }
            try w.put(table: t, key: indexEntry(plan(c), v, key), value: [])
        }
        if p.isLink {
            if case .link(let t) = old { try adjustBacklink(c, p, from: key, to: t, by: -1) }
            if case .link(let t) = v { try adjustBacklink(c, p, from: key, to: t, by: 1) }
        }
    }

    /// Replaces a list's contents (and its count in the row, and its backlinks).
    func setList(_ c: ClassSchema, _ key: Int64, _ p: Property, _ items: [ObjectValue]) throws {
        let old = try list(c, key, p)
        if p.isLink {
            var delta: [Int64: Int64] = [:]
            for case .link(let t) in old { delta[t, default: 0] -= 1 }
            for case .link(let t) in items { delta[t, default: 0] += 1 }
            for (t, d) in delta where d != 0 { try adjustBacklink(c, p, from: key, to: t, by: d) }
        }
        var vals = try values(c, key)
        vals[p.pid] = .int(Int64(items.count))
        let plan = plan(c)
        var inRow = try inlineLists(plan, key)
        inRow[p.pid] = RowCodec.inlineBytes(items)
        if inRow[p.pid] == nil { try writeList(c, key, p, items) } else { try deleteList(plan, key, pid: p.pid) }
        try putRow(c, plan, key, vals, inlineLists: inRow)
    }

    static let listChunk = 240

    private func writeList(_ c: ClassSchema, _ key: Int64, _ p: Property, _ items: [ObjectValue], fresh: Bool = false)
        throws
    {
        if fresh && items.isEmpty { return }
        let t = plan(c).listsTable
        let w = try ensureTable(t)
        if !fresh { try deleteList(plan(c), key, pid: p.pid) }
        var chunk: UInt32 = BrokenObjectLayer.on(.listChunkFromOne) ? 1 : 0
        var i = 0
        while i < items.count {
            var bytes: [UInt8] = []
            for v in items[i..<min(i + ObjectTables.listChunk, items.count)] { TaggedValue.encode(v, into: &bytes) }
            try w.put(table: t, key: KeyBytes.listChunk(key, p.pid, chunk), value: bytes)
            chunk += 1
            i += ObjectTables.listChunk
        }
    }

    private func deleteList(_ plan: ClassPlan, _ key: Int64, pid: UInt32) throws {
        let t = plan.listsTable
        guard try hasTable(.lists, plan), let w = writer else { return }
        let prefix = KeyBytes.property(key, pid)
        var old: [[UInt8]] = []
        try w.scan(table: t, from: prefix, to: KeyBytes.successor(prefix)) { k, _ in
            old.append(Array(k)); return true
        }
        for k in old { try w.delete(table: t, key: k) }
    }

    /// An object a deletion reached: (class id, key) pairs, not "cid/key" strings, since a
    /// cascade visits every object it reaches.
    private struct Visit: Hashable {
        let cid: UInt32
        let key: Int64
    }

    /// A deletion's queue and the first objects it visited, kept for the write and lent to
    /// each deletion: a person and its dogs made and freed both arrays each time.
    @exclusivity(unchecked) private var deletionQueue: [(plan: ClassPlan, key: Int64)] = []
    @exclusivity(unchecked) private var deletionVisits: [Visit] = []
    /// The values a deletion reads from a row (indexed ones, to-one links), kept likewise.
    @exclusivity(unchecked) private var deletionValues = PidMap<ObjectValue>()

    /// Deletes objects: removes their rows, lists, index entries and outgoing backlinks,
    /// nullifies links to them and removes them from lists, then deletes cascade targets.
    /// Cycle-safe: each object is deleted once.
    func delete(_ c: ClassSchema, _ key: Int64) throws { try delete(plan(c), key) }

    func delete(_ plan: ClassPlan, _ key: Int64) throws {
        // Taken from the write, so a deletion inside this one (there is none) would make its own.
        var pending = deletionQueue, few = deletionVisits
        (deletionQueue, deletionVisits) = ([], [])
        defer {
            if !pending.isEmpty { pending.removeAll(keepingCapacity: true) }
            while few.popLast() != nil {}
            (deletionQueue, deletionVisits) = (pending, few)
        }
        pending.append((plan, key))
        // A cascade's first few in an array searched in order, the rest in a set: a set made
        // for each deletion (a person and its two dogs) cost a twentieth of deleting them.
        var many = Set<Visit>()
        while let (p, k) = pending.popLast() {
            let id = Visit(cid: p.cid, key: k)
            guard !few.contains(id), many.isEmpty || !many.contains(id), try exists(p, k) else { continue }
            if few.count < 16 { few.append(id) } else { many.insert(id) }
            try deleteOne(p, k, cascade: &pending)
        }
    }

    /// The values of `props` in `row`, the row of `key` (a property the row's layout predates
    /// has its default), into `out`, which is emptied first. Slot by slot: every field of the
    /// row, in an array, cost a deletion more than it read.
    private func values(
        _ plan: ClassPlan, _ key: Int64, row: UnsafeRawBufferPointer, of props: [Property],
        into out: inout PidMap<ObjectValue>
    ) throws {
        out.removeAll()
        try decodeGuarded {
            try plan.codecRef._withUnsafeGuaranteedRef { codec in
                let l = try codec.layout(of: row)
                // By index: `for p in props` copied each property, its strings retained.
                for i in props.indices {
                    let pid = props[i].pid
                    guard let s = l.slot(of: pid) else {
                        out.set(pid, ObjectTables.defaultValue(props[i]))
                        continue
                    }
                    out.set(
                        pid,
                        try codec.value(
                            row, layout: l, slot: s, key: key,
                            outOfRow: { try self.tx.get(table: plan.outOfRowTable, key: KeyBytes.property(key, pid)) }
                        ))
                }
            }
        }
    }

    /// Deletes one object; appends the cascade targets it linked to to `cascade`.
    private func deleteOne(_ plan: ClassPlan, _ key: Int64, cascade: inout [(plan: ClassPlan, key: Int64)]) throws {
        // The object's cluster, decoded for the removal below, first: the reads of its row
        // on the way (values, lists, backlinks) find it in memory, not by a descent each.
        if !plan.legacyRows { _ = try withHotCluster(plan, key) { _, _ in } }
        var vals = deletionValues
        deletionValues = PidMap()
        defer { deletionValues = vals }
        let links = plan.links
        // What the deletion reads from the row, in one visit of it (a visit each was a tenth of
        // deleting a person): the indexed values and to-one links, the lists of links (a
        // cascade's targets queued at once), and the links into the object the row keeps.
        var listed: [(link: Int, targets: [Int64])] = []
        var incoming: [CompactRow.Backlink] = []
        try withRow(plan, key) { row in
            guard let row else { throw ObjectError.objectDeleted(className: plan.name) }
            try values(plan, key, row: row, of: plan.deletionReads, into: &vals)
            for i in links.indices where links[i].list {
                guard let name = links[i].target, let targetPlan = try? self.plan(named: name) else { continue }
                let items = try list(plan, key, pid: links[i].pid, ownerRow: row)
                if links[i].onDelete == .cascade && !BrokenObjectLayer.on(.noCascade) {
                    for case .link(let t) in items { cascade.append((targetPlan, t)) }
                } else {
                    listed.append((i, items.compactMap { if case .link(let t) = $0 { return t } else { return nil } }))
                }
            }
            incoming = try decodeGuarded { try plan.codec.backlinks(row) }
        }
        // By index, the properties read in place (a copy of each, its strings retained, per
        // object), and the tables' existence asked once per transaction, not by name each time.
        let indexed = plan.indexed
        for i in indexed.indices {
            let t = plan.indexTables[i]
            try applyPendingIndex(t)
            let w: WriteTransaction
            if plan.indexTablesExist, let known = writer { w = known } else { w = try ensureTable(t) }
            try w.delete(
                table: t, key: indexEntry(plan, vals[indexed[i].pid] ?? ObjectTables.defaultValue(indexed[i]), key))
        }
        plan.indexTablesExist = true
        for i in links.indices {
            let targets: [Int64]
            if links[i].list {
                // Read above; a cascade's targets are queued already.
                guard let l = listed.first(where: { $0.link == i }) else { continue }
                targets = l.targets
            } else if case .link(let t)? = vals[links[i].pid] {
                // A target class the schema lacks has no objects to delete or entries to drop.
                guard let name = links[i].target, let targetPlan = try? self.plan(named: name) else { continue }
                if links[i].onDelete == .cascade && !BrokenObjectLayer.on(.noCascade) {
                    // Deleted next, its entries with it: one for an origin gone is passed over,
                    // and a target listed twice is deleted once (`delete` skips what it visited).
                    cascade.append((targetPlan, t))
                    continue
                }
                targets = [t]
            } else {
                continue
            }
            let c = try cls(plan.name)
            var seen = Set<Int64>()
            for t in targets where targets.count == 1 || seen.insert(t).inserted {
                // However many times it links there: the entry goes.
                try adjustBacklink(c, links[i], from: key, to: t, by: -(1 << 48))
            }
        }
        let lists = plan.lists
        for i in lists.indices { try deleteList(plan, key, pid: lists[i].pid) }
        let vt = plan.outOfRowTable
        if try hasTable(.outOfRow, plan) {
            let stored = plan.stored
            for i in stored.indices where stored[i].kind.isVariableLength {
                try writer?.delete(table: vt, key: KeyBytes.property(key, stored[i].pid))
            }
        }
        // Links into this object (its row keeps some, read above), read before the row goes:
        // nullify to-one links, drop list occurrences.
        try tableBacklinks(plan, key, into: &incoming)
        try removeRow(plan, key)
        for link in incoming {
            let (cid, pid, origin) = (link.cid, link.pid, link.origin)
            guard let oc = schema.byCid(cid), let op = oc.property(pid: pid), try exists(oc, origin) else { continue }
            if op.list {
                let items = try list(oc, origin, op).filter { $0 != .link(key) }
                try setList(oc, origin, op, items)
            } else {
                try set(oc, origin, op, .null)
            }
        }
        // Whatever the changes above left of those entries (an origin that is gone): nothing
        // adds entries under this key meanwhile, so no second scan is needed to find them.
        let bt = plan.backlinksTable
        guard try hasTable(.backlinks, plan) else { return }
        for link in incoming {
            try writer?.delete(
                table: bt,
                key: KeyBytes.backlink(target: key, originClass: link.cid, pid: link.pid, origin: link.origin))
        }
    }

    /// Removes every object of a class (its tables go; the class stays in the schema).
    func deleteAll(_ c: ClassSchema) throws {
        var keys: [Int64] = []
        try self.keys(c) { k, _ in
            keys.append(k); return true
        }
        for k in keys { try delete(c, k) }
    }
}

/// A class's tables beside its clusters, each made by the first write that needs it.
enum SideTable {
    case backlinks, lists, outOfRow
}

/// Whether a table exists, as a transaction last saw: `exists`, or missing as of the catalog
/// change count `absentAt` (-1: not asked).
struct TableSeen {
    var exists = false
    var absentAt = -1
}
