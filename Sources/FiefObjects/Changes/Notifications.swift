import Engine

/// What a `Results.observe` callback is told.
public enum ResultsChange<T: Object> {
    /// The results as of registration, run once before any update.
    case initial(Results<T>)
    /// The results after the context moved to a newer version, with Realm's indices: remove
    /// `deletions` (indices in the previous results), then insert `insertions` (indices in
    /// these); `modifications` are previous indices of objects that stayed in place and changed
    /// (an object that moved is a deletion plus an insertion).
    case update(Results<T>, deletions: [Int], insertions: [Int], modifications: [Int])
    /// Computing the change failed (a damaged file); no callback follows.
    case error(Error)
}

/// One changed property of an observed object. Values are as a dynamic read gives them (nil
/// for null; a link is the target's object key; a list is an array).
public struct PropertyChange: @unchecked Sendable {
    public let name: String
    public let oldValue: Any?
    public let newValue: Any?
}

/// What an `Object.observe` callback is told.
public enum ObjectChange<T: Object> {
    case change(T, [PropertyChange])
    /// The object was deleted; no callback follows.
    case deleted
    /// The object could not be observed (unmanaged or already deleted) or a change could not be
    /// computed; no callback follows.
    case error(Error)
}

/// Keeps a callback registered: it stops when `invalidate()` is called or the token is dropped.
public final class NotificationToken {
    private weak var ctx: ObjectContext?
    private let id: Int

    init(ctx: ObjectContext?, id: Int) {
        self.ctx = ctx
        self.id = id
    }

    deinit { invalidate() }

    public func invalidate() { ctx?.observations[id] = nil }
}

/// One registered callback of a context, with the version its last delivery described.
/// Deliveries tile the version line: each covers (base, next], then `next` is the base.
final class Observation {
    /// nil until the initial delivery (a registration inside a write waits for its commit).
    var base: PinnedVersion?
    /// Runs on the context's new version; false ends the observation.
    let initial: (ObjectContext) throws -> Bool
    /// Gets what changed and the version the previous delivery described (still pinned).
    let update: (ObjectContext, VersionDiff, PinnedVersion) throws -> Bool
    let fail: (Error) -> Void

    init(
        initial: @escaping (ObjectContext) throws -> Bool,
        update: @escaping (ObjectContext, VersionDiff, PinnedVersion) throws -> Bool, fail: @escaping (Error) -> Void
    ) {
        self.initial = initial
        self.update = update
        self.fail = fail
    }
}

extension ObjectContext {
    /// Registers `o`. Outside a write its initial delivery runs now, on the version this context
    /// reads; inside a write it runs once the write commits (the version it describes).
    func register(_ o: Observation) -> NotificationToken {
        nextObservation += 1
        let id = nextObservation
        observations[id] = o
        if !isInWriteTransaction {
            do {
                guard let tx = try readTransaction() else { return NotificationToken(ctx: self, id: id) }
                o.base = try tx.pinVersion()
                if try !o.initial(self) { observations[id] = nil }
            } catch {
                observations[id] = nil
                o.fail(error)
            }
        }
        return NotificationToken(ctx: self, id: id)
    }

    /// `refresh()` with observers: moves to the newest version, then hands each observer what
    /// changed since the version it last saw: one delivery however many commits came between
    /// (coalesced), none when nothing it sees changed. A `refresh()` or `write` a callback makes
    /// waits until this round of deliveries ends, then runs (so no observer is skipped).
    func refreshAndDeliver() throws {
        let next = try store.database.pin()
        try moveReadTransaction(to: next)
        delivering = true
        defer { delivering = false }
        var diffs: [UInt64: VersionDiff] = [:]
        for id in observations.keys.sorted() {
            guard let o = observations[id] else { continue }  // an earlier callback removed it
            do {
                let keep: Bool
                if let base = o.base {
                    guard let from = base.version, from != next.version else { continue }
                    let d = try diffs[from] ?? store.database.diff(from: base, to: next)
                    diffs[from] = d
                    o.base = next
                    keep = d.isEmpty ? true : try o.update(self, d, base)
                } else {
                    o.base = next
                    keep = try o.initial(self)
                }
                if !keep { observations[id] = nil }
            } catch {
                observations[id] = nil
                o.fail(error)
            }
        }
    }

    /// The objects of `className` deleted, inserted and changed in `d` (a change to the row,
    /// to a value kept out of the row, or to a list of the object), and whether anything of
    /// another class or the schema changed too.
    func changedObjects(_ className: String, _ d: VersionDiff, since base: PinnedVersion) throws -> ChangedObjects {
        let c = try tables().cls(className)
        return try changedObjects(c, d, since: base)
    }

    /// The objects among `keys` whose value of one of the properties `names` differs between
    /// the version `base` holds and the one this context reads.
    func objectsWithChangedProperties(
        _ className: String, _ keys: Set<Int64>, _ names: Set<String>, since base: PinnedVersion
    ) throws -> Set<Int64> {
        guard !keys.isEmpty else { return [] }
        let now = try tables()
        let c = try now.cls(className)
        return try store.database.read(base) { tx in
            let then = ObjectTables(tx: tx, schema: try store.schema(tx), path: path)
            let oc = try then.cls(className)
            func read(_ t: ObjectTables, _ c: ClassSchema, _ k: Int64, _ p: Property) throws -> [ObjectValue] {
                p.list ? try t.list(c, k, p) : [try t.value(c, k, p)]
            }
            var out = Set<Int64>()
            for k in keys {
                for name in names {
                    guard let p = c.property(name), p.isStored else { continue }
                    guard let op = oc.property(name), op.isStored, try read(then, oc, k, op) == read(now, c, k, p)
                    else {
                        out.insert(k)
                        break
                    }
                }
            }
            return out
        }
    }

    /// The modified objects of every class, by class name (for `LinkedChanges`).
    func modifiedObjectsByClass(_ d: VersionDiff, since base: PinnedVersion) throws -> [String: Set<Int64>] {
        var out: [String: Set<Int64>] = [:]
        for c in try tables().schema.classes.values {
            let m = try changedObjects(c, d, since: base).modified
            if !m.isEmpty { out[c.name] = m }
        }
        return out
    }

    private func changedObjects(_ c: ClassSchema, _ d: VersionDiff, since base: PinnedVersion) throws -> ChangedObjects
    {
        func objects(_ keys: [[UInt8]]) -> Set<Int64> {
            Set(keys.filter { $0.count >= 8 }.map { k in k.withUnsafeBytes { KeyBytes.readObj($0, at: 0) } })
        }
        var out = ChangedObjects()
        var modified = Set<Int64>()
        if let clusters = d.tables[Tables.clusters(c.cid)] {
            // The engine names the clusters that changed; their rows, old and new, name the objects.
            let numbers = objects(clusters.deleted + clusters.inserted + clusters.modified)
            let now = try tables()
            let before = try store.database.read(base) { tx in
                try ObjectTables(tx: tx, schema: try store.schema(tx), path: path).clusterRows(c.cid, numbers)
            }
            let after = try now.clusterRows(c.cid, numbers)
            for (k, row) in before {
                if let new = after[k] { if new != row { modified.insert(k) } } else { out.deleted.insert(k) }
            }
            for k in after.keys where before[k] == nil { out.inserted.insert(k) }
        }
        for t in [Tables.outOfRow(c.cid), Tables.lists(c.cid)] {
            guard let k = d.tables[t] else { continue }
            modified.formUnion(objects(k.deleted + k.inserted + k.modified))
        }
        out.modified = modified.subtracting(out.deleted).subtracting(out.inserted)
        // Tables are fief/<kind>/<cid>[/<pid>]; fief/meta holds only counters and stamps.
        for name in Set(d.tables.keys).union(d.created).union(d.dropped)
        where name.hasPrefix("fief/") && name != Tables.meta {
            let parts = name.split(separator: "/")
            if parts.count < 3 || parts[2] != Substring("\(c.cid)") { out.otherClassesChanged = true }
        }
        return out
    }
}

extension Results {
    /// Calls `block` with `.initial` now (or, inside a write, when it commits), then with
    /// `.update` each time this context's `refresh()` (or one of its writes) moves it to a
    /// version where these results changed. Never called inside `write {}`. Keep the token.
    ///
    /// `keyPaths` narrows what counts as a modification: a change of one of these properties
    /// of the object (`"name"`, `"dogs"`), or of an object reached along a dotted path
    /// (`"owner.name"`: any change of the owner). Insertions and deletions always count.
    public func observe(keyPaths: [String]? = nil, _ block: @escaping (ResultsChange<T>) -> Void) -> NotificationToken {
        var last: [Int64] = []
        let o = Observation(
            initial: { _ in
                last = try self.keys()
                block(.initial(self))
                return true
            },
            update: { ctx, d, base in
                let changed = try ctx.changedObjects(self.className, d, since: base)
                let now = try self.keys(updating: last, changed)
                // Hashing every key of a large result costs more than the rest of an update:
                // only the key-path rules below need the old keys as a set.
                var beforeSet: Set<Int64>?
                func before() -> Set<Int64> {
                    if let s = beforeSet { return s }; let s = Set(last); beforeSet = s; return s
                }
                var modified = changed.modified
                var paths = LinkedChanges.paths(self.predicate, self.sorts)
                if let keyPaths {
                    let split = keyPaths.map { $0.split(separator: ".").map(String.init) }
                    let own = Set(split.compactMap(\.first))
                    modified = try ctx.objectsWithChangedProperties(
                        self.className, modified.filter { before().contains($0) }, own, since: base)
                    paths = split.filter { $0.count > 1 }
                }
                // Links may lead to this same class: a changed object there is not another class.
                if !paths.isEmpty {
                    // Realm's rule: a change reached through the query's links modifies too.
                    let old = before()
                    let kept = now.filter { old.contains($0) && !modified.contains($0) }
                    let t = try ctx.tables()
                    modified.formUnion(
                        try QueryEvaluator(t: t).reachingChanged(
                            kept, try t.cls(self.className), paths: paths,
                            changed: try ctx.modifiedObjectsByClass(d, since: base)))
                }
                var change = CollectionChange(
                    old: last, new: now, modified: modified,
                    touched: changed.otherClassesChanged || !paths.isEmpty
                        ? nil : changed.deleted.union(changed.inserted).union(modified))
                if BrokenObjectLayer.on(.changeSetDropsInsertion), !change.insertions.isEmpty {
                    change.insertions.removeFirst()
                }
                if BrokenObjectLayer.on(.changeSetDropsModifications) {
                    change.modifications = []; change.modificationsNew = []
                }
                last = now
                change.deliver { block(.update(self, deletions: $0, insertions: $1, modifications: $2)) }
                return true
            },
            fail: { block(.error($0)) })
        return ctx.register(o)
    }
}

/// Lets `observe` name the object's own class in its callback.
public protocol _ObservableObject: AnyObject {}
extension Object: _ObservableObject {}

extension _ObservableObject where Self: Object {
    /// Calls `block` with `.change` each time this context's `refresh()` (or one of its writes)
    /// moves it to a version where the object's stored properties changed, and `.deleted`
    /// once when it is gone. An unmanaged or deleted object gets `.error` at once, then silence.
    /// `keyPaths` limits it to those properties (by the first name of each path: `"dogs.name"`
    /// reports changes of the `dogs` list itself).
    public func observe(keyPaths: [String]? = nil, _ block: @escaping (ObjectChange<Self>) -> Void) -> NotificationToken
    {
        let watched = keyPaths.map { Set($0.compactMap { $0.split(separator: ".").first.map(String.init) }) }
        guard let r = _ref else {
            block(.error(ObjectError.unmanagedObject(className: "\(type(of: self))")))
            return NotificationToken(ctx: nil, id: 0)
        }
        guard r.ctx.exists(r) else {
            block(.error(ObjectError.objectDeleted(className: r.className)))
            return NotificationToken(ctx: nil, id: 0)
        }
        var last: [String: ObjectValue] = [:]
        var lastLists: [String: [ObjectValue]] = [:]
        func snapshot(_ ctx: ObjectContext) throws -> ([String: ObjectValue], [String: [ObjectValue]]) {
            let t = try ctx.tables()
            let c = try t.cls(r.className)
            let values = try t.values(c, r.key)
            var scalars: [String: ObjectValue] = [:], lists: [String: [ObjectValue]] = [:]
            for p in c.storedProperties {
                if p.list { lists[p.name] = try t.list(c, r.key, p) } else { scalars[p.name] = values[p.pid] ?? .null }
            }
            return (scalars, lists)
        }
        let o = Observation(
            initial: { ctx in
                (last, lastLists) = try snapshot(ctx)
                return true
            },
            update: { ctx, d, base in
                let changed = try ctx.changedObjects(r.className, d, since: base)
                if changed.deleted.contains(r.key) || !ctx.exists(r) {
                    block(.deleted)
                    return false
                }
                guard changed.modified.contains(r.key) else { return true }
                let (now, nowLists) = try snapshot(ctx)
                let c = try ctx.tables().cls(r.className)
                var changes: [PropertyChange] = []
                for p in c.storedProperties where watched?.contains(p.name) ?? true {
                    if p.list {
                        let a = lastLists[p.name] ?? [], b = nowLists[p.name] ?? []
                        if a != b {
                            changes.append(
                                PropertyChange(
                                    name: p.name, oldValue: a.map { DynamicValue.toSwift($0, p) },
                                    newValue: b.map { DynamicValue.toSwift($0, p) }))
                        }
                    } else {
                        let a = last[p.name] ?? .null, b = now[p.name] ?? .null
                        if a != b {
                            changes.append(
                                PropertyChange(
                                    name: p.name, oldValue: DynamicValue.toSwift(a, p),
                                    newValue: DynamicValue.toSwift(b, p)))
                        }
                    }
                }
                (last, lastLists) = (now, nowLists)
                if !changes.isEmpty { block(.change(self, changes)) }
                return true
            },
            fail: { block(.error($0)) })
        return r.ctx.register(o)
    }
}
