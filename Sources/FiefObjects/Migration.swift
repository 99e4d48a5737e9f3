import Engine
import Foundation

/// Opens a store's schema: writes it on a new file, checks it on an unchanged one, and moves
/// an older one to the code's schema in ONE write transaction (a crash or a throw anywhere
/// leaves the file as it was: the switch-bit commit covers the whole migration).
struct SchemaMigrator {
    let db: Database
    let configuration: Configuration
    let models: [String: ModelInfo]
    var path: String { configuration.path }

    func openOrMigrate() throws {
        var stored = try db.read { try SchemaStore.load($0, path: path) }
        if stored.format < SchemaStore.format && !configuration.readOnly {
            try db.write { try FormatConversion.convert($0, path: path) }
            if BrokenObjectLayer.on(.conversionSplit) {
                try db.write { tx in
                    var s = try SchemaStore.load(tx, path: path)
                    s.format = SchemaStore.format
                    try SchemaStore.save(s, tx)
                }
            }
            stored = try db.read { try SchemaStore.load($0, path: path) }
        }
        let code = configuration.schemaVersion
        var changes: [String] = []
        var added: [String] = []
        for name in models.keys.sorted() {
            if let sc = stored.classes[name] {
                changes += SchemaValidation.changes(stored: sc, code: models[name]!)
            } else {
                added.append(name)
            }
        }
        let hasData = !stored.classes.isEmpty
        if hasData && stored.version > code {
            throw SchemaError.schemaVersionDowngrade(path: path, stored: stored.version, code: code)
        }
        let migrate = hasData && stored.version < code
        if changes.isEmpty && added.isEmpty && !migrate && (hasData || models.isEmpty) { return }
        if configuration.readOnly { throw SchemaError.readOnlyNeedsMigration(path: path) }
        if !changes.isEmpty && !migrate {
            throw SchemaError.migrationRequired(path: path, changes: changes)
        }
        if configuration.deleteIfMigrationNeeded && migrate {
            throw SchemaError.migrationRequired(
                path: path, changes: changes.isEmpty ? ["schema version \(stored.version) -> \(code)"] : changes)
        }
        do {
            if BrokenObjectLayer.on(.migrationSplit) && migrate {
                // Broken on purpose: the new schema is committed before the data is migrated.
                try db.write { tx in try self.apply(stored, tx, migrate: false) }
                let mid = try db.read { try SchemaStore.load($0, path: path) }
                try db.write { tx in try self.apply(mid, tx, migrate: true, oldSchema: stored) }
                return
            }
            try db.write { tx in try self.apply(stored, tx, migrate: migrate) }
        } catch let e as SchemaError {
            throw e
        } catch let e as EngineError {
            throw e
        } catch let e as ObjectError {
            throw e
        } catch {
            throw SchemaError.migrationFailed(path: path, detail: "\(error)")
        }
    }

    private func apply(_ stored: StoredSchema, _ tx: WriteTransaction, migrate: Bool, oldSchema: StoredSchema? = nil)
        throws
    {
        // Read again inside the writer lock: another process may have done this meanwhile.
        let current = try SchemaStore.load(tx, path: path)
        guard current == stored else {
            throw SchemaError.migrationFailed(
                path: path, detail: "another process changed the schema while this one opened; open again")
        }
        var s = stored
        var layoutsBefore: [String: Int] = [:]
        for name in models.keys.sorted() {
            let m = models[name]!
            if let sc = s.classes[name] {
                layoutsBefore[name] = sc.layouts.count
                s.classes[name] = SchemaValidation.merge(stored: sc, code: m)
            } else {
                s.classes[name] = SchemaValidation.fresh(m, cid: s.nextCid)
                s.nextCid += 1
            }
        }
        s.version = configuration.schemaVersion
        let stored = oldSchema ?? stored
        let tables = ObjectTables(tx: tx, schema: s, path: path)
        tables.migrating = true
        if migrate {
            for (name, sc) in stored.classes where models[name] != nil {
                try checkIntegerPrimaryKey(old: sc, new: s.classes[name]!, tables)
            }
            if let block = configuration.migrationBlock {
                let old = try db.beginRead()
                defer { old.end() }
                let store = try ObjectStore.migrationStore(configuration, db)
                let m = Migration(
                    old: ObjectContext(store: store, tables: ObjectTables(tx: old, schema: stored, path: path)),
                    new: ObjectContext(store: store, tables: tables), layoutsBefore: layoutsBefore)
                try block(m, stored.version)
                if let e = m.new.takePendingError() { throw e }
            }
            for c in tables.schema.classes.values where models[c.name] != nil {
                try rebuildIndexes(stored.classes[c.name], c, tables)
            }
        }
        try tables.flush()
        let gone = stored.classes.values.filter { old in !tables.schema.classes.values.contains { $0.cid == old.cid } }
        try SchemaStore.save(tables.schema, tx, removed: gone)
    }

    /// An integer primary key is the object key, so adding one to stored objects would re-key them.
    private func checkIntegerPrimaryKey(old: ClassSchema, new: ClassSchema, _ t: ObjectTables) throws {
        guard let pk = new.primaryKey, pk.kind.isInteger else { return }
        if let o = old.primaryKey, o.pid == pk.pid { return }
        if try t.count(new) > 0 {
            throw SchemaError.migrationFailed(
                path: path,
                detail:
                    "\(new.name).\(pk.name): making an integer property the primary key "
                    + "of stored objects is not supported (it would change their keys); "
                    + "use a String or UUID key, or deleteData(forType:) first"
            )
        }
    }

    /// Indexes whose property is new, reshaped, newly indexed or renamed are built from the
    /// rows; indexes of properties that are gone are dropped. Unique keys are verified.
    private func rebuildIndexes(_ old: ClassSchema?, _ c: ClassSchema, _ t: ObjectTables) throws {
        let w = t.writer!
        let oldIndexed = Set(old?.properties.filter(\.hasIndex).map(\.pid) ?? [])
        let newIndexed = Set(c.properties.filter(\.hasIndex).map(\.pid))
        for pid in oldIndexed.union(newIndexed) {
            let name = Tables.index(c.cid, pid)
            if try w.tableInfo(name) != nil {
                try w.dropTable(name)
                t.forgetTable(name)
            }
        }
        let props = c.properties.filter(\.hasIndex)
        guard !props.isEmpty else { return }
        for p in props { try w.createTable(Tables.index(c.cid, p.pid), keyKind: .bytes, valueKind: .bytes) }
        var keys: [Int64] = []
        try t.keys(c) { k, _ in
            keys.append(k); return true
        }
        for k in keys {
            for p in props {
                let v = try t.value(c, k, p)
                if p.primaryKey, try !t.indexLookup(c, p, v).isEmpty {
                    throw SchemaError.migrationFailed(
                        path: path, detail: "\(c.name).\(p.name): primary key value \(v) appears more than once")
                }
                try w.put(table: Tables.index(c.cid, p.pid), key: t.indexEntry(t.plan(c), v, k), value: [])
            }
        }
    }
}

extension ObjectStore {
    /// A store value for the contexts a migration hands out (same file and handle).
    static func migrationStore(_ configuration: Configuration, _ db: Database) throws -> ObjectStore {
        ObjectStore(
            configuration: configuration, database: db, models: try SchemaValidation.models(configuration.types))
    }
}

/// What a migration block gets: the file's objects as they were (`old`) and as they become (`new`).
public final class Migration {
    let old: ObjectContext
    let new: ObjectContext
    private let layoutsBefore: [String: Int]
    private var written = Set<String>()
    /// Classes renamed by `renameClass`: new name -> old name, so the old objects are
    /// enumerated under the new name.
    private var renamedFrom: [String: String] = [:]

    init(old: ObjectContext, new: ObjectContext, layoutsBefore: [String: Int]) {
        self.old = old
        self.new = new
        self.layoutsBefore = layoutsBefore
    }

    /// Visits every object the file had of a class: `old` with the old schema, `new` with the
    /// new one (nil if the class is gone or the object was deleted in this migration).
    public func enumerateObjects(ofType className: String, _ body: (MigrationObject?, MigrationObject?) throws -> Void)
        throws
    {
        written.insert(className)
        let ot = try old.tables()
        let oldName = renamedFrom[className] ?? className
        guard let oc = ot.schema.classes[oldName] else { return }
        var keys: [Int64] = []
        try ot.keys(oc) { k, _ in
            keys.append(k); return true
        }
        let nt = try new.tables()
        let nc = nt.schema.classes[className]
        for k in keys {
            let o = MigrationObject(ctx: old, className: oldName, key: k)
            let n: MigrationObject? = try nc.flatMap {
                try nt.exists($0, k) ? MigrationObject(ctx: new, className: className, key: k) : nil
            }
            try body(o, n)
        }
        if let e = new.takePendingError() { throw e }
    }

    /// Creates an object in the new schema from a dictionary or an array of values.
    @discardableResult
    public func create(_ className: String, value: Any = [String: Any]()) throws -> MigrationObject {
        written.insert(className)
        let t = try new.tables()
        let k = try new.createDynamic(try t.cls(className), value, .error, t)
        return MigrationObject(ctx: new, className: className, key: k)
    }

    public func delete(_ object: MigrationObject) throws {
        let t = try new.tables()
        try t.delete(try t.cls(object.className), object.key)
    }

    /// Removes every object of a class and the class itself from the file.
    @discardableResult
    public func deleteData(forType className: String) throws -> Bool {
        let t = try new.tables()
        guard let c = t.schema.classes[className] else { return false }
        try t.deleteAll(c)
        for name in Tables.all(c) where try t.hasTable(name) {
            try t.writer!.dropTable(name)
            t.forgetTable(name)
        }
        var s = t.schema
        if new.store.models[className] != nil {
            // The code still has the class: keep it, empty.
            s.classes[className] = c
        } else {
            s.classes[className] = nil
        }
        t.updateSchema(s)
        return true
    }

    /// Gives the code's property `to` the stored values of the old property `from`, in O(1):
    /// the new name takes the old property id. Call it before writing objects of the class.
    public func renameProperty(onType className: String, from: String, to: String) throws {
        let t = try new.tables()
        guard var c = t.schema.classes[className] else { throw ObjectError.unknownClass(className) }
        guard !written.contains(className) else {
            throw SchemaError.migrationFailed(
                path: new.path,
                detail:
                    "renameProperty(\(className).\(from) -> \(to)) "
                    + "must come before enumerateObjects or create on \(className)"
            )
        }
        let oldSchema = try old.tables().schema.classes[className]
        guard let src = oldSchema?.property(from) else {
            throw ObjectError.unknownProperty(className: className, property: from)
        }
        guard let di = c.properties.firstIndex(where: { $0.name == to }) else {
            throw ObjectError.unknownProperty(className: className, property: to)
        }
        guard c.properties[di].sameShape(src) else {
            throw SchemaError.migrationFailed(
                path: new.path,
                detail: "\(className): cannot rename \(from) (\(src.typeName)) to \(to) (\(c.properties[di].typeName))")
        }
        c.properties[di].pid = src.pid
        c.retired.removeAll { $0.pid == src.pid }
        c.layouts = Array(c.layouts.prefix(layoutsBefore[className] ?? c.layouts.count))
        if c.layouts.isEmpty { c.layouts = [] }
        let pids = c.storedProperties.map(\.pid)
        if c.layouts.last != pids { c.layouts.append(pids) }
        var s = t.schema
        s.classes[className] = c
        t.updateSchema(s)
    }

    /// Gives the code's class `to` the stored objects of the class `from` (which the code no
    /// longer has). Call it before writing objects of either class.
    public func renameClass(from: String, to: String) throws {
        let t = try new.tables()
        guard let src = t.schema.classes[from], let dst = t.schema.classes[to], let m = new.store.models[to] else {
            throw ObjectError.unknownClass(t.schema.classes[from] == nil ? from : to)
        }
        guard try t.count(dst) == 0 else {
            throw SchemaError.migrationFailed(
                path: new.path, detail: "renameClass(\(from) -> \(to)): \(to) already has objects")
        }
        var renamed = src
        renamed.name = to
        var merged = SchemaValidation.merge(stored: renamed, code: m)
        merged.name = to
        var s = t.schema
        s.classes[from] = nil
        s.classes[to] = merged
        t.updateSchema(s)
        renamedFrom[to] = from
    }
}
