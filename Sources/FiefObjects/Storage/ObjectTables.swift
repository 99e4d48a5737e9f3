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
    @exclusivity(unchecked) var rowBuffer: [UInt8] = []
    /// The lists a new row keeps in itself (`insert`), a map kept for the next row.
    @exclusivity(unchecked) var inlineListsBuffer: PidMap<[UInt8]> = [:]
    /// Where an insert gathers a list's targets and the entries they hold (`insert`).
    @exclusivity(unchecked) var linkBuffers: (targets: [Int64], heldBy: [Int64]) = ([], [])
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
    @exclusivity(unchecked) var preLinks = PreLinks()
    /// Object keys handed out in this write, written back to `fief/meta` by `flush()`.
    @exclusivity(unchecked) private var pendingKeys: [UInt32: Int64] = [:]

    /// Index entries of objects inserted in this write, per index table, not yet in its tree:
    /// put in key order when the index is next read or changed, or at `flush()`. A bulk load's
    /// names come in random order; sorted, they fill the index's leaves from left to right
    /// (the engine's append split keeps each one full) and each put finds its path in cache.
    @exclusivity(unchecked) var pendingIndexKeys = PendingIndexes()

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
    func ensureTable(_ name: String, key: KeyKind = .bytes, value: KeyKind = .bytes) throws -> WriteTransaction {
        guard let w = writer else { throw ObjectError.notInWriteTransaction("changing objects") }
        if try !hasTable(name) {
            try w.createTable(name, keyKind: key, valueKind: value)
            knownTables.insert(name)
        }
        return w
    }

    /// `hasTable` of one of the class's side tables, remembered in its plan: a table that
    /// exists stays (only a migration drops one, and it drops the plans), a missing one is
    /// missing while the transaction's catalog has not changed since.
    func hasTable(_ side: SideTable, _ plan: ClassPlan) throws -> Bool {
        let seen = plan.seen(side)
        if seen.exists { return true }
        if seen.absentAt == tx.catalogChanges { return false }
        let exists = try hasTable(plan.name(of: side))
        plan.see(side, exists ? TableSeen(exists: true) : TableSeen(absentAt: tx.catalogChanges))
        return exists
    }

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

    /// An object a deletion reached: (class id, key) pairs, not "cid/key" strings, since a
    /// cascade visits every object it reaches.
    struct Visit: Hashable {
        let cid: UInt32
        let key: Int64
    }

    /// Changes made in this transaction: the engine's, and those to clusters in memory.
    var changes: Int { tx.writes &+ hotChanges }
    @exclusivity(unchecked) var hotChanges = 0

    /// A deletion's queue and the first objects it visited, kept for the write and lent to
    /// each deletion: a person and its dogs made and freed both arrays each time.
    @exclusivity(unchecked) var deletionQueue: [(plan: ClassPlan, key: Int64)] = []
    @exclusivity(unchecked) var deletionVisits: [Visit] = []
    /// The values a deletion reads from a row (indexed ones, to-one links), kept likewise.
    @exclusivity(unchecked) var deletionValues = PidMap<ObjectValue>()
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
