import Engine
import Foundation

/// How `add` treats an object whose primary key exists already.
public enum UpdatePolicy: Sendable {
    /// Throw `duplicatePrimaryKey`.
    case error
    /// Write every property.
    case all
    /// Write only the properties whose values differ.
    case modified
}

/// One thread's (or actor's) view of a store: it reads one version until `refresh()` or a
/// `write { }`, and sees its own uncommitted writes inside `write { }`. Not Sendable.
public final class ObjectContext {
    // The state every property read touches is exempt from run-time exclusivity checks: a
    // context is used by one thread, and the checks were a tenth of an enumeration.
    public let store: ObjectStore
    private var readTx: ReadTransaction?
    @exclusivity(unchecked) private var readTables: ObjectTables? { didSet { lendTables() } }
    @exclusivity(unchecked) private(set) var writeTables: ObjectTables? { didSet { lendTables() } }
    /// A migration's context reads and writes these tables only.
    private let fixedTables: ObjectTables?
    /// The tables `tables()` gives while the context holds them, unretained, for `withTables`.
    @exclusivity(unchecked) private var tablesInUse: Unmanaged<ObjectTables>?
    /// The tables whose changes `rowStamp` counts, unretained (bound, they were an atomic pair
    /// per property read inside a write).
    @exclusivity(unchecked) private var writingTables: Unmanaged<ObjectTables>?
    /// Changes whenever what this context sees may have changed (results re-run then).
    @exclusivity(unchecked) @usableFromInline private(set) var stamp = 0
    private var pendingError: Error?
    private var invalidated = false
    /// Property of each `@Persisted` storage key path (the runtime gives one key path object
    /// per property), for the tables this context reads now; emptied when they change.
    @exclusivity(unchecked) @usableFromInline var propertyCache = PropertyCache()
    @exclusivity(unchecked) private var modelNames: [ObjectIdentifier: String] = [:]
    /// The model asked for last and its name: a loop of lookups asks for one model, and the
    /// dictionary's hashing was a twentieth of a primary-key lookup.
    @exclusivity(unchecked) private var lastModelName: (id: ObjectIdentifier, name: String)?
    /// The value and list maps of objects being added, one pair per depth of links (`add`).
    @exclusivity(unchecked) private var addMaps: [(PidMap<ObjectValue>, PidMap<[ObjectValue]>)] = []
    /// Registered callbacks (see Notifications.swift), by registration order.
    var observations: [Int: Observation] = [:]
    var nextObservation = 0
    /// True while callbacks run: a `refresh()` they cause waits for the round to end.
    var delivering = false
    private var refreshPending = false
    /// An auto-refreshing context's subscription to commits (see `autoRefreshingContext`).
    var commitWatch: CommitObservation?
    /// Inside `throwingReads { }`: how deep, and the first read that failed (see ThrowingReads.swift).
    var throwingReadDepth = 0
    @exclusivity(unchecked) var failedRead: Error?

    init(store: ObjectStore) {
        self.store = store
        fixedTables = nil
    }

    init(store: ObjectStore, tables: ObjectTables) {
        self.store = store
        fixedTables = tables
        lendTables()
    }

    private func lendTables() {
        tablesInUse = (fixedTables ?? writeTables ?? readTables).map { Unmanaged.passUnretained($0) }
        writingTables = (fixedTables ?? writeTables).map { Unmanaged.passUnretained($0) }
    }

    /// `body` with the tables `tables()` gives, lent without a retain while the context holds
    /// them: `tables()` hands them out retained, an atomic pair per call, and a lookup by
    /// primary key or a list's iteration asked more than once. `body` must not move the
    /// context to another version.
    @inline(__always)
    func withTables<R>(_ body: (ObjectTables) throws -> R) throws -> R {
        if let t = tablesInUse { return try t._withUnsafeGuaranteedRef(body) }
        return try body(tables())
    }

    deinit { readTx?.end() }

    var path: String { store.configuration.path }

    func tables() throws -> ObjectTables {
        if let t = fixedTables ?? writeTables { return t }
        if let t = readTables { return t }
        let tx = try store.database.beginRead()
        let t = try tables(of: tx)
        readTx = tx
        readTables = t
        propertyCache = PropertyCache()
        invalidated = false
        return t
    }

    /// The object tables of `tx`, from what its version is known to hold when a write here
    /// committed it (`VersionFacts`).
    private func tables(of tx: Transaction) throws -> ObjectTables {
        if let facts = VersionFacts.of(tx) { return ObjectTables(tx: tx, facts: facts, path: path) }
        return ObjectTables(tx: tx, schema: try store.schema(tx), path: path)
    }

    /// Tree descents made by the transaction this context reads (or writes) through, for the
    /// benchmarks' counters (`Transaction.descents`).
    package var treeDescents: Int { (try? tables().tx.descents) ?? 0 }

    /// The version this context reads (inside a write: the version it will commit).
    public var version: UInt64 { (try? tables().tx.version) ?? 0 }

    public var isInWriteTransaction: Bool { writeTables != nil || fixedTables?.writer != nil }

    /// Moves to the newest committed version, and hands observers what changed (see
    /// `Results.observe`, `Object.observe`).
    public func refresh() throws {
        guard fixedTables == nil, writeTables == nil else { return }
        if delivering {
            refreshPending = true
            return
        }
        if !observations.isEmpty {
            try refreshAndDeliver()
            while refreshPending {
                refreshPending = false
                try refreshAndDeliver()
            }
            return
        }
        if let tx = readTx {
            try tx.refresh()
            readTables = try tables(of: tx)
            propertyCache = PropertyCache()
        } else {
            _ = try tables()
        }
        invalidated = false
        stamp += 1
    }

    /// The read transaction this context reads through (nil inside a migration or a write).
    func readTransaction() throws -> ReadTransaction? {
        guard fixedTables == nil, writeTables == nil else { return nil }
        _ = try tables()
        return readTx
    }

    /// Moves this context to exactly the version `pinned` holds.
    func moveReadTransaction(to pinned: PinnedVersion) throws {
        let tx = try readTx ?? store.database.beginRead()
        try tx.move(to: pinned)
        readTx = tx
        readTables = try tables(of: tx)
        propertyCache = PropertyCache()
        invalidated = false
        stamp += 1
    }

    /// Releases the version this context reads (its pin); the next read starts a new one.
    public func invalidate() {
        guard fixedTables == nil, writeTables == nil else { return }
        readTx?.end()
        readTx = nil
        readTables = nil
        // Emptied now, not when the next read makes new tables: a getter may hold a cached
        // property borrowed (`withProperty`) when its read makes them.
        propertyCache = PropertyCache()
        invalidated = true
        stamp += 1
    }

    /// Runs `body` as the store's only writer (across threads and processes), on the newest
    /// version; commits when it returns, rolls everything back when it throws. Objects and
    /// results read inside see the transaction's own changes.
    @discardableResult
    public func write<T>(_ body: () throws -> T) throws -> T {
        guard writeTables == nil, fixedTables == nil else { throw ObjectError.nestedWrite }
        if store.configuration.readOnly { throw ObjectError.readOnly(path) }
        defer { pendingError = nil }
        let result: T = try store.database.write { wtx in
            if let maximum = store.configuration.maximumLiveVersions {
                // As the writer (no other commit can come between) and before any change: the
                // write makes at most one more version, so the live ones never exceed `maximum`.
                let live = try store.database.liveVersionCount()
                if live >= maximum { throw ObjectError.tooManyLiveVersions(path: path, live: live, maximum: maximum) }
            }
            writeTables = try tables(of: wtx)
            propertyCache = PropertyCache()
            stamp += 1
            defer { writeTables = nil; propertyCache = PropertyCache(); stamp += 1 }
            let r = try body()
            if let e = pendingError { throw e }
            try writeTables?.flush()
            wtx.committedSidecar = writeTables?.versionFacts()
            return r
        }
        // Observers hear of the write now. Otherwise the new version is read when something
        // next reads: a run of writes (small transactions) moves no read transaction between
        // them, and holds no pin on a version the next write could reuse the pages of.
        if observations.isEmpty { releaseReadVersion() } else { try refresh() }
        return result
    }

    /// Lets go of the version this context reads; the next read starts on the newest one.
    private func releaseReadVersion() {
        readTx?.end()
        readTx = nil
        readTables = nil
        propertyCache = PropertyCache()
        stamp += 1
    }

    func takePendingError() -> Error? {
        defer { pendingError = nil }
        return pendingError
    }

    /// `what` is formatted only for the error (every setter asks for the writer).
    func writer(_ what: @autoclosure () -> String) throws -> ObjectTables {
        let t = try tables()
        guard t.writer != nil else { throw ObjectError.notInWriteTransaction(what()) }
        return t
    }

    /// As `writer(_:)`, the tables lent to `body` (`withTables`), not handed out retained.
    @inline(__always)
    func withWriter<R>(_ what: @autoclosure () -> String, _ body: (ObjectTables) throws -> R) throws -> R {
        try withTables { t in
            guard t.writer != nil else { throw ObjectError.notInWriteTransaction(what()) }
            return try body(t)
        }
    }

    // MARK: Property access for managed objects (non-throwing: a failure here is a bug or damage,
    // which traps, or inside `throwingReads { }` is recorded and thrown when the scope ends)

    /// Runs `body` on the property `key` names, borrowed from the cache (no retain) when cached.
    /// Inlinable, so a model's getter calls its type's read directly: through this generic
    /// function it went through three closure thunks and a protocol witness per read.
    @inlinable
    func withProperty<V, R>(
        _ obj: Object, _ key: PropertyKey, wrapper: Persisted<V>.Type, _ body: (PropertyAccess) -> R
    ) -> R {
        if let p = propertyCache.borrow(key) { return p._withUnsafeGuaranteedRef(body) }
        return propertyRef(obj._ref.unsafelyUnwrapped, key, wrapper: wrapper)._withUnsafeGuaranteedRef(body)
    }

    func property<V>(_ ref: ManagedRef, _ key: PropertyKey, wrapper: Persisted<V>.Type) -> PropertyAccess {
        propertyRef(ref, key, wrapper: wrapper).takeUnretainedValue()
    }

    /// The property `key` names, unretained: the cache (or, for one that could not be
    /// resolved, its placeholders) keeps it until the context moves to another version. Handed
    /// out retained, a walk that reads a few properties in turn paid an atomic pair per read.
    @usableFromInline
    func propertyRef<V>(_ ref: ManagedRef, _ key: PropertyKey, wrapper: Persisted<V>.Type)
        -> Unmanaged<PropertyAccess>
    {
        if let p = propertyCache.promote(key) ?? propertyCache.find(key).map(Unmanaged.passUnretained) { return p }
        let name = ModelInfo.of(key.owner).propertyName(wrapperAt: key.offset, wrapper)
        do {
            let t = try tables()
            let plan = try t.plan(named: ref.className)
            guard let p = plan.byName[name] else {
                throw ObjectError.unknownProperty(className: ref.className, property: name)
            }
            let access = PropertyAccess(p, plan: plan)
            propertyCache.add(key, access)
            return Unmanaged.passUnretained(access)
        } catch {
            // The read that follows fails the same way and returns its default; the failure is
            // reported at every read, through one placeholder per property.
            let placeholder = propertyCache.placeholder(key, name)
            return Unmanaged.passUnretained(unreadable(placeholder, "\(ref.className).\(name)", error))
        }
    }

    func property(_ ref: ManagedRef, _ name: String) throws -> Property {
        let t = try tables()
        guard let p = t.plan(try t.cls(ref.className)).byName[name] else {
            throw ObjectError.unknownProperty(className: ref.className, property: name)
        }
        return p
    }

    func exists(_ ref: ManagedRef) -> Bool {
        guard ref.ctx === self, let t = try? tables(), let c = try? t.cls(ref.className) else { return false }
        return (try? t.exists(c, ref.key)) ?? false
    }

    /// What a remembered row is valid for (`Object.row(at:)`): this context's version, and in
    /// a write also the transaction's count of changes, since a change may move or rewrite
    /// the bytes a row was lent from (`Transaction.lendsBytesUntilWrite`).
    @usableFromInline var rowStamp: Int {
        guard let t = writingTables else { return stamp }
        return stamp &+ (t._withUnsafeGuaranteedRef { $0.changes } &<< 32)
    }

    /// As `exists(ref)`, true at once when the object holds its row for this version.
    func exists(_ obj: Object, _ ref: ManagedRef) -> Bool {
        ref.ctx === self && obj.row(at: rowStamp) != nil || exists(ref)
    }

    func readValue(_ obj: Object, _ ref: ManagedRef, _ access: PropertyAccess) -> ObjectValue {
        let p = access.property
        do {
            let t = try tables()
            let plan = try access.plan ?? t.plan(named: ref.className)
            if let row = obj.row(at: rowStamp) {
                return try t.decodeGuarded { try t.value(plan, ref.key, p, row: row) }
            }
            return try t.withRow(plan, ref.key) { row in
                guard let row else { throw ObjectError.objectDeleted(className: ref.className) }
                if t.lendsRowUntilWrite(plan, ref.key) { obj.remember(row: row, at: rowStamp) }
                return try t.decodeGuarded { try t.value(plan, ref.key, p, row: row) }
            }
        } catch {
            return unreadable(.null, "reading \(ref.className).\(p.name)", error)
        }
    }

    /// An integer property read on the 8 bytes of the object's remembered row, without an
    /// `ObjectValue` between; nil sends the caller down `readValue` (no row at hand, a null,
    /// a layout that stores it otherwise).
    @inline(__always)
    func storedInt(_ obj: Object, _ key: Int64, _ access: PropertyAccess) -> Int64? {
        guard let row = obj.row(at: rowStamp) else { return nil }
        return access.storedInt(row, key: key)
    }

    /// As `storedInt`, for a string kept in the row.
    @inline(__always)
    func storedString(_ obj: Object, _ access: PropertyAccess) -> String? {
        guard let row = obj.row(at: rowStamp) else { return nil }
        return access.storedString(row)
    }

    /// The rows of the objects of class `className` that `links` point at, for accessors whose
    /// first read needs no descent: nil unless this is a read (whose bytes stay put) and every
    /// link has a row. A failure here is left to the reads, which report it.
    func stableRows(links: [ObjectValue], className: String) -> [UnsafeRawBufferPointer]? {
        // The keys read out of the links as the rows are found: an array of them first was an
        // allocation per list iterated.
        stableRows(count: links.count, className: className) { i in
            guard case .link(let k) = links[i] else { return nil }
            return k
        }
    }

    /// As `stableRows(links:className:)`, for keys.
    func stableRows(keys: [Int64], className: String) -> [UnsafeRawBufferPointer]? {
        stableRows(count: keys.count, className: className) { keys[$0] }
    }

    /// The rows of the `count` objects `key(i)` names (nil when one is not a key).
    private func stableRows(count: Int, className: String, _ key: (Int) -> Int64?) -> [UnsafeRawBufferPointer]? {
        guard count > 0 else { return nil }
        return try? withTables { t in
            guard t.tx.lendsStableBytes else { return nil }
            return try t.withPlan(named: className) { plan in try t.stableRows(plan, count: count, key) }
        }
    }

    /// The origins of `link` and, in a read, their rows, for an iteration of an object's
    /// linking objects; nil on a failure, left to the results' own read to report.
    @usableFromInline
    func linkingIteration(_ link: LinkSource) -> (keys: [Int64], rows: [UnsafeRawBufferPointer]?)? {
        guard
            let keys = try? withTables({ t in
                try QueryEvaluator(t: t).linkingKeys(to: link.target, link.key, link.property, from: link.origin)
            })
        else { return nil }
        let rows = stableRows(keys: keys, className: link.origin)
        return (keys, rows?.count == keys.count ? rows : nil)
    }

    /// `ownerRow`: the owner's row, valid now, when the caller holds it (then neither the
    /// owner's existence nor a list kept in its row costs a lookup).
    func readList(_ ref: ManagedRef, _ p: Property, ownerRow: UnsafeRawBufferPointer? = nil) -> [ObjectValue] {
        readList(ref, pid: p.pid, name: p.name, ownerRow: ownerRow)
    }

    /// As above, by the property's id and name: a `List` passes them from its `PropertyAccess`
    /// without a copy of the whole `Property` (its strings retained and released) per read.
    func readList(_ ref: ManagedRef, pid: UInt32, name: String, ownerRow: UnsafeRawBufferPointer?) -> [ObjectValue] {
        do {
            // The plan, not the class: found by name through the plan asked for last, where
            // the class was a dictionary lookup and a copy of its schema per read.
            return try withTables { t in
                try t.withPlan(named: ref.className) { plan in
                    guard try ownerRow != nil || t.exists(plan, ref.key) else {
                        throw ObjectError.objectDeleted(className: plan.name)
                    }
                    return try t.list(plan, ref.key, pid: pid, ownerRow: ownerRow)
                }
            }
        } catch {
            return unreadable([], "reading \(ref.className).\(name)", error)
        }
    }

    /// Runs a managed write from a setter: outside a write it is a programmer error; inside,
    /// a broken rule makes the enclosing `write` throw and roll back.
    func guardedWrite(_ ref: ManagedRef, _ name: String, _ body: () throws -> Void) {
        guard isInWriteTransaction else {
            preconditionFailure("setting \(ref.className).\(name) on a managed object outside ctx.write { }")
        }
        do {
            try body()
            stamp += 1
        } catch {
            if pendingError == nil { pendingError = error }
        }
    }

    func writeProperty(_ ref: ManagedRef, _ p: Property, _ u: _UnmanagedValue) throws {
        // A value through the class's plan, found by name: no lookup and copy of its schema.
        // The tables and the plan are lent (a set changes neither the version nor the plans):
        // handed out, they were two atomic pairs per set.
        if case .value(let v) = u {
            return try withWriter("setting \(ref.className).\(p.name)") { t in
                try t.withPlan(named: ref.className) { plan in try t.set(plan, ref.key, p, v) }
            }
        }
        let t = try writer("setting \(ref.className).\(p.name)")
        let c = try t.cls(ref.className)
        switch u {
        case .list, .objects:
            guard try t.exists(c, ref.key) else { throw ObjectError.objectDeleted(className: c.name) }
            try t.setList(c, ref.key, p, try resolveList(u, .error, t) ?? [])
        case .computed: break
        // `set` finds the row first and throws `objectDeleted` when there is none; it resolves
        // (adds) a linked unmanaged object only after that, as the check here used to.
        default:
            guard try !needsResolving(u) || t.exists(c, ref.key) else {
                throw ObjectError.objectDeleted(className: c.name)
            }
            try t.set(c, ref.key, p, try resolve(u, .error, t))
        }
    }

    /// Whether resolving `u` would add an object (so the owner's existence is checked first).
    private func needsResolving(_ u: _UnmanagedValue) -> Bool {
        if case .object(let o?) = u, o._ref == nil { return true }
        return false
    }

    /// `u` consumed: a value read out of a wrapper moves on into the row's values, not copied
    /// (a string's retain and release apiece).
    func resolve(
        _ u: consuming _UnmanagedValue, _ update: UpdatePolicy, _ t: ObjectTables,
        linkedFrom: CompactRow.Backlink? = nil
    ) throws -> ObjectValue {
        switch consume u {
        case .value(let v): return v
        case .object(let o): return try o.map { .link(try addObject($0, update, t, linkedFrom: linkedFrom)) } ?? .null
        case .list, .objects, .computed: return .null
        }
    }

    /// The elements of a list value, each resolved (`resolve`); nil when `u` is no list.
    func resolveList(
        _ u: _UnmanagedValue, _ update: UpdatePolicy, _ t: ObjectTables, linkedFrom: CompactRow.Backlink? = nil
    ) throws -> [ObjectValue]? {
        switch u {
        case .list(let items): return try items.map { try resolve($0, update, t, linkedFrom: linkedFrom) }
        case .objects(let objects):
            var out: [ObjectValue] = []
            out.reserveCapacity(objects.count)
            // By index, each object lent by the array (an iterator handed each out retained).
            try objects.withUnsafeBufferPointer { b in
                for i in b.indices { out.append(.link(try addObject(b[i], update, t, linkedFrom: linkedFrom))) }
            }
            return out
        default: return nil
        }
    }

    /// The class name of a model type. Kept per context (one thread), so accessors made for
    /// list elements and links skip `ModelInfo`'s lock.
    func modelName(_ type: Object.Type) -> String {
        let id = ObjectIdentifier(type)
        if let last = lastModelName, last.id == id { return last.name }
        let n: String
        if let known = modelNames[id] {
            n = known
        } else {
            n = ModelInfo.of(type).name
            modelNames[id] = n
        }
        lastModelName = (id, n)
        return n
    }

    /// An accessor of a stored object.
    func accessor<T: Object>(_ type: T.Type, key: Int64, className: String? = nil) -> T {
        let o = T()
        o.manage(ManagedRef(ctx: self, className: className ?? modelName(type), key: key))
        return o
    }

    /// An accessor of a stored object whose row a read just found: kept when the bytes stay
    /// valid (see `Object.row(at:)`), so its first property read needs no descent either.
    func accessor<T: Object>(_ type: T.Type, key: Int64, className: String, row: UnsafeRawBufferPointer?) -> T {
        let o = T()
        o.manage(ManagedRef(ctx: self, className: className, key: key))
        if let row { o.remember(row: row, at: rowStamp) }
        return o
    }

    // MARK: Adding, creating, deleting

    /// Stores an unmanaged object and every unmanaged object it links to; the object becomes
    /// managed. With `update`, an object whose primary key exists is updated instead.
    public func add(_ obj: Object, update: UpdatePolicy = .error) throws {
        // The tables lent (adding moves no version): handed out, an atomic pair per object.
        _ = try withWriter("add") { t in try addObject(obj, update, t) }
    }

    /// Inlinable, so the caller's sequence is iterated specialized: through the generic
    /// iterator, each element cost a witness call and a value-witness copy (about 440
    /// instructions an object added).
    @inlinable
    public func add<S: Sequence>(_ objs: S, update: UpdatePolicy = .error) throws where S.Element: Object {
        for o in objs { try add(o, update: update) }
    }

    func addObject(_ obj: Object, _ update: UpdatePolicy, _ t: ObjectTables) throws -> Int64 {
        try addObject(obj, update, t, linkedFrom: nil)
    }

    /// `linkedFrom`: the entry of the new object being added that links to `obj`; a new `obj`
    /// holds it in its first row (`PreLinks`).
    private func addObject(
        _ obj: Object, _ update: UpdatePolicy, _ t: ObjectTables, linkedFrom: CompactRow.Backlink?
    ) throws -> Int64 {
        if let r = obj._ref {
            guard r.ctx === self else { throw ObjectError.objectFromAnotherStore(className: r.className) }
            return r.key
        }
        // The class, plan and fields read through the target (a class holding them as `let`)
        // where they are used: copied out, the class schema and fields retained their arrays,
        // and the primary key its strings, for every object added.
        return try t.withAddTarget(type(of: obj)) { target in
            try addObject(obj, target, update, t, linkedFrom: linkedFrom)
        }
    }

    /// As above, with the object's add target lent.
    private func addObject(
        _ obj: Object, _ target: ObjectTables.AddTarget, _ update: UpdatePolicy, _ t: ObjectTables,
        linkedFrom: CompactRow.Backlink?
    ) throws -> Int64 {
        let plan = target.plan
        // Read in place while `obj`, which the caller holds, is alive.
        let unmanaged = target.model.unmanagedValues(obj)
        var pk: ObjectValue?
        if let i = target.fields.primaryKey, case .value(let v) = unmanaged[i] { pk = v }
        // The class schema lent by its target for the whole add: read out of it for `keyFor`
        // and `store`, it was copied (four retains and releases) for every object added.
        return try target.withClass { c in
            let (key, existing) = try keyFor(c, plan, pk, update, t)
            obj.manage(ManagedRef(ctx: self, className: plan.name, key: key))
            let stampBeforeLinks = stamp
            // Maps kept from the last object added at this depth (an object's new links are
            // added while its own maps fill): two arrays allocated and freed per object before.
            var (values, lists) = addMaps.popLast() ?? ([:], [:])
            defer {
                values.removeAll()
                lists.removeAll()
                // Moved back through empty maps, not copied (a retain and a release of each map
                // per object; `consume` here crashed the release build).
                var (v, l) = (PidMap<ObjectValue>(), PidMap<[ObjectValue]>())
                swap(&v, &values)
                swap(&l, &lists)
                addMaps.append((v, l))
            }
            values.reserveCapacity(plan.stored.count)
            lists.reserveCapacity(plan.lists.count)
            do {
                let pids = target.fields.pids, cid = plan.cid
                for i in 0..<unmanaged.count {
                    guard let pid = pids[i] else { continue }
                    // A new object's new targets hold its backlink from their first row.
                    let link = existing ? nil : CompactRow.Backlink(cid: cid, pid: pid, origin: key, count: 1)
                    let u = unmanaged[i]
                    if let items = try resolveList(u, update, t, linkedFrom: link) {
                        lists[pid] = items
                    } else {
                        values.set(pid, try resolve(consume u, update, t, linkedFrom: link))
                    }
                }
                // The key found free is still free unless a linked object added since took it.
                // Handed over, not copied: the insert adds the list counts to it.
                try store(
                    c, plan, key, existing: existing, &values, lists, update, t,
                    keyIsFree: plan.layout.primaryKeyIsInteger && stamp == stampBeforeLinks,
                    linkedFrom: linkedFrom)
            } catch {
                // Entries its new targets hold for it, its row never written: taken back (an
                // error a caller catches must leave the objects it keeps consistent).
                try t.revokePreLinks(c, key)
                throw error
            }
            return key
        }
    }

    /// The key for a new or existing object with primary key value `pk`.
    /// `plan`: the class's (its layout's primary key is not searched for again, and the
    /// existence check needs no lookup of the plan).
    private func keyFor(
        _ c: ClassSchema, _ plan: ObjectTables.ClassPlan, _ pk: ObjectValue?, _ update: UpdatePolicy, _ t: ObjectTables
    ) throws -> (Int64, Bool) {
        let layout = plan.layout
        // An integer primary key given is the key when no object has it: no copy of the
        // property (its strings retained and released) for each object added.
        if layout.primaryKeyIsInteger, case .int(let k)? = pk {
            if try t.exists(plan, k) {
                guard update != .error else {
                    throw ObjectError.duplicatePrimaryKey(className: c.name, value: String(k))
                }
                return (k, true)
            }
            return (k, false)
        }
        guard let p = layout.primaryKey else { return (try t.nextKey(c), false) }
        let v = pk ?? ObjectTables.defaultValue(p)
        if let k = try t.lookupPrimaryKey(c, p, v) {
            guard update != .error else {
                throw ObjectError.duplicatePrimaryKey(className: c.name, value: v.description)
            }
            return (k, true)
        }
        if p.kind.isInteger {
            guard case .int(let k) = v else {
                throw ObjectError.typeMismatch(className: c.name, property: p.name, expected: p.typeName, found: "nil")
            }
            return (k, false)
        }
        return (try t.nextKey(c), false)
    }

    /// `keyIsFree`: `keyFor` looked the (integer primary) key up and found no object.
    private func store(
        _ c: ClassSchema, _ plan: ObjectTables.ClassPlan, _ key: Int64, existing: Bool,
        _ values: inout PidMap<ObjectValue>,
        _ lists: PidMap<[ObjectValue]>, _ update: UpdatePolicy, _ t: ObjectTables,
        keyIsFree: Bool = false, linkedFrom: CompactRow.Backlink? = nil
    ) throws {
        if existing {
            let old = try t.values(c, key)
            for p in c.storedProperties where !p.primaryKey {
                if p.list, let l = lists[p.pid] {
                    if update == .all {
                        try t.setList(c, key, p, l)
                    } else if try t.list(c, key, p) != l {
                        try t.setList(c, key, p, l)
                    }
                } else if !p.list, let v = values[p.pid], update == .all || old[p.pid] != v {
                    try t.set(c, key, p, v)
                }
            }
        } else {
            try t.insert(c, plan, key, values: &values, lists: lists, keyIsFree: keyIsFree, linkedFrom: linkedFrom)
        }
        stamp += 1
    }

    /// Creates (or with `update`, updates) an object from a dictionary of property values, an
    /// array of values in declaration order, or another object; nested values create linked objects.
    @discardableResult
    public func create<T: Object>(_ type: T.Type, value: Any = [String: Any](), update: UpdatePolicy = .error) throws
        -> T
    {
        let t = try writer("create")
        let key = try createDynamic(try t.cls(ModelInfo.of(type).name), value, update, t)
        return accessor(type, key: key)
    }

    func createDynamic(_ c: ClassSchema, _ value: Any, _ update: UpdatePolicy, _ t: ObjectTables) throws -> Int64 {
        if let o = value as? Object, o._ref == nil || ModelInfo.of(Swift.type(of: o)).name == c.name {
            if o._ref == nil { return try addObject(o, update, t) }
        }
        var fields: [String: Any?] = [:]
        let settable = c.properties.filter(\.isStored)
        if let d = value as? [String: Any?] {
            fields = d
        } else if let d = value as? [String: Any] {
            for (k, v) in d { fields[k] = .some(DynamicValue.unwrap(v)) }
        } else if let a = value as? [Any] {
            guard a.count <= settable.count else {
                throw ObjectError.typeMismatch(
                    className: c.name, property: "(array)", expected: "at most \(settable.count) values",
                    found: "\(a.count)")
            }
            for (i, v) in a.enumerated() { fields[settable[i].name] = .some(DynamicValue.unwrap(v)) }
        } else if let o = value as? Object, let r = o._ref {
            let src = try r.ctx.tables()
            let sc = try src.cls(r.className)
            for p in sc.storedProperties { fields[p.name] = .some(r.ctx.dynamicGet(r, p.name)) }
        } else {
            throw ObjectError.typeMismatch(
                className: c.name, property: "(value)", expected: "a dictionary, an array or an object",
                found: "\(Swift.type(of: value))")
        }
        for k in fields.keys where c.property(k) == nil || c.property(k)?.isStored == false {
            throw ObjectError.unknownProperty(className: c.name, property: k)
        }
        let pkValue = try c.primaryKey.flatMap { p in
            try fields[p.name].map { try DynamicValue.toStored($0, p, className: c.name) }
        }
        let plan = t.plan(c)
        let (key, existing) = try keyFor(c, plan, pkValue, update, t)
        var values: PidMap<ObjectValue> = [:], lists: PidMap<[ObjectValue]> = [:]
        for p in settable {
            guard let entry = fields[p.name] else { continue }
            if p.list {
                let items = entry.map { DynamicValue.unwrap($0) } ?? nil
                let arr: [Any] = (items as? [Any]) ?? ((items as? ListBase)?.anyElements ?? [])
                lists[p.pid] = try arr.map { try dynamicElement($0, p, c, update, t) }
            } else if p.isLink {
                values[p.pid] = try entry.map { try dynamicElement($0, p, c, update, t) } ?? .null
            } else {
                values[p.pid] = try DynamicValue.toStored(entry, p, className: c.name)
            }
        }
        try store(c, plan, key, existing: existing, &values, lists, update, t)
        return key
    }

    private func dynamicElement(_ v: Any, _ p: Property, _ c: ClassSchema, _ update: UpdatePolicy, _ t: ObjectTables)
        throws -> ObjectValue
    {
        guard p.isLink else {
            return try DynamicValue.toStored(
                v, Property(name: p.name, kind: p.kind, optional: p.optional), className: c.name)
        }
        if DynamicValue.isNil(v) { return .null }
        let target = try t.cls(p.target ?? "")
        if let o = v as? Object {
            if let r = o._ref {
                guard r.ctx === self else { throw ObjectError.objectFromAnotherStore(className: r.className) }
                return .link(r.key)
            }
            return .link(try addObject(o, update, t))
        }
        if let m = v as? MigrationObject { return .link(m.key) }
        return .link(try createDynamic(target, v, update, t))
    }

    /// Deletes an object: links to it become nil, lists drop it, cascade targets go too.
    public func delete(_ obj: Object) throws {
        let t = try writer("delete")
        guard let r = obj._ref else { throw ObjectError.objectDeleted(className: "\(type(of: obj))") }
        guard r.ctx === self else { throw ObjectError.objectFromAnotherStore(className: r.className) }
        try t.delete(try t.plan(named: r.className), r.key)
        stamp += 1
    }

    public func delete<S: Sequence>(_ objs: S) throws where S.Element: Object {
        let all = Array(objs)
        for o in all where !o.isInvalidated { try delete(o) }
    }

    public func delete<T: Object>(_ results: Results<T>) throws {
        let t = try writer("delete")
        let c = try t.cls(results.className)
        for k in try results.keys() { try t.delete(c, k) }
        stamp += 1
    }

    /// Deletes every object of every class this context's store knows.
    public func deleteAll() throws {
        let t = try writer("deleteAll")
        for c in t.schema.classes.values { try t.deleteAll(c) }
        stamp += 1
    }

    /// Runs `body` on every object of `results` (as taken when the call starts), inside a write.
    public func update<T: Object>(_ results: Results<T>, _ body: (T) throws -> Void) throws {
        _ = try writer("update")
        for k in try results.keys() { try body(accessor(T.self, key: k)) }
    }

    // MARK: Reading

    /// Every object of a class, lazily.
    public func objects<T: Object>(_ type: T.Type) -> Results<T> {
        Results(ctx: self, className: modelName(type), source: .all)
    }

    /// Every object of a class known only by name (tools, other languages' files).
    public func dynamicObjects(_ className: String) throws -> Results<DynamicObject> {
        _ = try tables().cls(className)
        return Results(ctx: self, className: className, source: .all)
    }

    /// The classes stored in the version this context reads.
    public func storedClasses() throws -> [ClassSchema] {
        try tables().schema.classes.values.sorted { $0.cid < $1.cid }
    }

    /// The object count of a stored class.
    public func count(ofClass className: String) throws -> Int {
        let t = try tables()
        return try t.count(try t.cls(className))
    }

    /// The stored schema version.
    public var schemaVersion: UInt64 { (try? tables().schema.version) ?? 0 }

    /// The object with this primary key, or nil.
    public func object<T: Object>(ofType type: T.Type, forPrimaryKey key: Any) throws -> T? {
        let name = modelName(type)
        let hit = try withTables { t in
            try t.withPlan(named: name) { plan in
                guard let pk = plan.primaryKey else { throw ObjectError.missingPrimaryKey(className: plan.name) }
                return try lookUp(primaryKey: try DynamicValue.toStored(key, pk, className: plan.name), plan, t)
            }
        }
        return hit.map { accessor(type, key: $0.key, className: name, row: $0.row) }
    }

    /// As `object(ofType:forPrimaryKey:)` with a key of a static type: an integer, String or
    /// UUID key of the primary key's kind is looked up without going through `Any`.
    public func object<T: Object, K: _PersistableScalar>(ofType type: T.Type, forPrimaryKey key: K) throws -> T? {
        let name = modelName(type)
        switch try lookUp(primaryKey: key._stored, className: name) {
        case .found(let k, let row): return accessor(type, key: k, className: name, row: row)
        case .absent: return nil
        case .otherKind: return try object(ofType: type, forPrimaryKey: key as Any)
        }
    }

    private enum PrimaryKeyHit {
        case found(Int64, UnsafeRawBufferPointer?)
        case absent
        /// The key is not of the primary key's kind (it is converted through `Any`).
        case otherKind
    }

    /// The lookup, apart from the accessor: this part is not generic, so the tables and the
    /// plan are lent to it (no retain) and nothing looks up an `Optional<T>`'s metadata.
    private func lookUp(primaryKey stored: ObjectValue, className: String) throws -> PrimaryKeyHit {
        try withTables { t in
            try t.withPlan(named: className) { plan in
                guard let kind = plan.primaryKey?.kind else {
                    throw ObjectError.missingPrimaryKey(className: plan.name)
                }
                switch (kind, stored) {
                case (.int, .int), (.int64, .int), (.string, .string), (.uuid, .uuid):
                    return try lookUp(primaryKey: stored, plan, t).map { .found($0.key, $0.row) } ?? .absent
                default: return .otherKind
                }
            }
        }
    }

    /// The object whose primary key is `v` (already of the key's kind), and its row when it
    /// stays valid. An integer primary key is the object key: one descent finds the row too.
    private func lookUp(
        primaryKey v: ObjectValue, _ plan: ObjectTables.ClassPlan, _ t: ObjectTables
    ) throws -> (key: Int64, row: UnsafeRawBufferPointer?)? {
        guard plan.primaryKey?.kind.isInteger == true else {
            return try t.lookupPrimaryKey(try t.cls(plan.name), v).map { ($0, nil) }
        }
        guard case .int(let k) = v else { return nil }
        // Asked before the descent: the closure then captures no reference to retain.
        let lends = t.lendsRowUntilWrite(plan, k)
        return try t.withRow(plan, k) { row in row.map { (k, lends ? $0 : nil) } }
    }

    /// The object with this object key (see `Object.objectKey`), or nil.
    public func object<T: Object>(ofType type: T.Type, objectKey key: Int64) throws -> T? {
        let t = try tables()
        return try t.exists(try t.cls(modelName(type)), key) ? accessor(type, key: key) : nil
    }

    // MARK: Dynamic access

    func dynamicGet(_ r: ManagedRef, _ name: String) -> Any? {
        do {
            return try dynamicValue(r, name)
        } catch {
            return unreadable(nil, "reading \(r.className).\(name)", error)
        }
    }

    /// The value of property `name` as `obj[name]` gives it: a Swift value, nil, an array for a
    /// list, dynamic objects for links and linking objects.
    func dynamicValue(_ r: ManagedRef, _ name: String) throws -> Any? {
        let t = try tables()
        let c = try t.cls(r.className)
        guard let p = c.property(name) else { throw ObjectError.unknownProperty(className: c.name, property: name) }
        if p.kind == .linkingObjects {
            let oc = try t.cls(p.target ?? "")
            guard let op = oc.property(p.originProperty ?? "") else { return [Any]() }
            return try t.backlinks(to: c, r.key, from: oc, op).map {
                MigrationObject(ctx: self, className: oc.name, key: $0)
            }
        }
        guard try t.exists(c, r.key) else { throw ObjectError.objectDeleted(className: c.name) }
        if p.list {
            return try t.list(c, r.key, p).map { v -> Any? in
                if case .link(let k) = v { return MigrationObject(ctx: self, className: p.target ?? "", key: k) }
                return DynamicValue.toSwift(v, p)
            }
        }
        let v = try t.value(c, r.key, p)
        if case .link(let k) = v { return MigrationObject(ctx: self, className: p.target ?? "", key: k) }
        return DynamicValue.toSwift(v, p)
    }

    func dynamicSet(_ r: ManagedRef, _ name: String, _ value: Any?) {
        guardedWrite(r, name) {
            let t = try writer("setting \(r.className).\(name)")
            let c = try t.cls(r.className)
            guard let p = c.property(name), p.isStored else {
                throw ObjectError.unknownProperty(className: c.name, property: name)
            }
            if p.list {
                let arr = (value.flatMap { DynamicValue.unwrap($0) } as? [Any]) ?? []
                try t.setList(c, r.key, p, try arr.map { try dynamicElement($0, p, c, .error, t) })
            } else if p.isLink {
                try t.set(c, r.key, p, try value.map { try dynamicElement($0, p, c, .error, t) } ?? .null)
            } else {
                try t.set(c, r.key, p, try DynamicValue.toStored(value, p, className: c.name))
            }
        }
    }
}

/// A `@Persisted` property of a model class: the class that declares it and where its wrapper
/// sits in an instance. A getter folds both into constants; a key path to the wrapper, the
/// identity before, cost each read a `swift_getKeyPath` with an atomic retain and release, and
/// once formed it made every access to the wrapper a dynamic exclusivity check.
@usableFromInline
struct PropertyKey: Hashable {
    @usableFromInline let owner: Object.Type
    @usableFromInline let offset: Int

    @inlinable init(_ owner: Object.Type, offset: Int) {
        self.owner = owner
        self.offset = offset
    }

    @inlinable static func == (a: PropertyKey, b: PropertyKey) -> Bool { a.owner == b.owner && a.offset == b.offset }

    @usableFromInline func hash(into h: inout Hasher) {
        h.combine(ObjectIdentifier(owner))
        h.combine(offset)
    }
}

/// The property each `PropertyKey` names, for one version's tables. The one found last is
/// checked first: a loop reads one property of many objects, and comparing two words is
/// cheaper than hashing them.
@usableFromInline
struct PropertyCache {
    @usableFromInline var lastID: PropertyKey?
    private var last: PropertyAccess?
    /// The one found last, unretained: what `borrow` hands out while `last`, the recent list
    /// or `all` keeps it alive.
    @usableFromInline var lastUnretained: Unmanaged<PropertyAccess>?
    private var all: [PropertyKey: PropertyAccess] = [:]

    /// The property for `id` when it is the one found last (a run of reads of one property,
    /// as an iteration makes), unretained: valid until the cache changes.
    @inlinable
    func borrow(_ id: PropertyKey) -> Unmanaged<PropertyAccess>? { id == lastID ? lastUnretained : nil }

    /// The properties found last, searched before the table: a walk that reads a few
    /// properties in turn (a person's dogs, each dog's name and owners, each owner's name)
    /// missed `last` at most reads, and hashed the key path for each.
    private var recent: [(id: PropertyKey, access: PropertyAccess)] = []
    private var nextRecent = 0
    private static let recentCount = 8

    /// The property for `id` when it is among the few found last, made the one found last,
    /// unretained (they keep it): a walk that reads a few properties in turn (a person's dogs,
    /// each dog's name and owners) retained and released it at most reads.
    @usableFromInline
    mutating func promote(_ id: PropertyKey) -> Unmanaged<PropertyAccess>? {
        for i in recent.indices where recent[i].id == id {
            let p = Unmanaged.passUnretained(recent[i].access)
            lastID = id
            lastUnretained = p
            return p
        }
        return nil
    }

    mutating func find(_ id: PropertyKey) -> PropertyAccess? {
        // Not `last`: `promote` moves the one found last without it.
        if id == lastID, let p = lastUnretained { return p.takeUnretainedValue() }
        let p: PropertyAccess
        if let i = recent.firstIndex(where: { $0.id == id }) {
            p = recent[i].access
        } else {
            guard let found = all[id] else { return nil }
            p = found
            remember(id, p)
        }
        lastID = id
        last = p
        lastUnretained = Unmanaged.passUnretained(p)
        return p
    }

    /// Properties that could not be resolved, each read's stand-in (a property without a plan,
    /// whose reads report the failure).
    private var placeholders: [PropertyKey: PropertyAccess] = [:]

    mutating func placeholder(_ id: PropertyKey, _ name: String) -> PropertyAccess {
        if let p = placeholders[id] { return p }
        let p = PropertyAccess(Property(name: name, kind: .int), plan: nil)
        placeholders[id] = p
        return p
    }

    mutating func add(_ id: PropertyKey, _ p: PropertyAccess) {
        if all.count < 4096 { all[id] = p }
        remember(id, p)
        lastID = id
        last = p
        lastUnretained = Unmanaged.passUnretained(p)
    }

    private mutating func remember(_ id: PropertyKey, _ p: PropertyAccess) {
        if recent.count < PropertyCache.recentCount {
            recent.append((id, p))
        } else {
            recent[nextRecent] = (id, p)
            nextRecent = (nextRecent + 1) % PropertyCache.recentCount
        }
    }
}
