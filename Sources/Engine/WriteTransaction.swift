/// The one writer. Sees its own changes; commits when `Database.write`'s body returns.
public final class WriteTransaction: Transaction {
    let base: Snapshot
    @exclusivity(unchecked) var freeList: FreeList
    let writer: TreeWriter
    @exclusivity(unchecked) var tableCount: UInt64

    init(db: Database, base: Snapshot, minLive: UInt64) throws {
        self.base = base
        var list = try db.freeListCache.takeList(fileID: db.currentFileID, slot: base.slot)
            ?? FreeListStorage.decode(base.meta, pages: base.pages)
        list.dropEmptyChunks()
        list.release(upTo: minLive)
        freeList = list
        writer = TreeWriter(pages: base.pages)
        writer.reuse = db.freeListCache.nodes(fileID: db.currentFileID, slot: base.slot)
        tableCount = base.meta.tableCount
        super.init(db: db, pages: base.pages, catalogRoot: base.meta.catalogRoot)
    }

    public override var version: UInt64 { base.version + 1 }

    /// The version this transaction started from.
    public var baseVersion: UInt64 { base.version }

    func end() { isActive = false }

    static func validateName(_ name: String) throws {
        let n = name.utf8.count
        guard n >= 1, n <= 255 else { throw EngineError.invalidTableName(name) }
    }

    /// Creates a table. Fails if one of that name exists.
    @discardableResult
    public func createTable<K: KeyCodable, V: ValueCodable>(_ name: String, key: K.Type = K.self, value: V.Type = V.self) throws -> Table<K, V> {
        try createTable(name, keyKind: K.keyKind, valueKind: V.valueKind)
        return Table(tx: self, name: name)
    }

    public func createTable(_ name: String, keyKind: KeyKind, valueKind: ValueKind) throws {
        try guarded {
            try ensureActive()
            try WriteTransaction.validateName(name)
            if (try? state(name)) != nil { throw EngineError.tableExists(name) }
            let s = TableState(root: nil, count: 0, keyKind: keyKind, valueKind: valueKind)
            s.dirty = true
            tables[name] = s
            tableCount += 1
        }
    }

    /// The table, created first when missing.
    public func openTable<K: KeyCodable, V: ValueCodable>(_ name: String, key: K.Type = K.self, value: V.Type = V.self) throws -> Table<K, V> {
        if try tableInfo(name) == nil { return try createTable(name, key: K.self, value: V.self) }
        return try table(name, key: K.self, value: V.self)
    }

    /// Removes a table and frees its pages.
    public func dropTable(_ name: String) throws {
        try guarded {
            let s = try state(name)
            try writer.freeAll(s.root)
            tables[name] = nil
            _ = try writer.delete(&catalogRoot, key: Array(name.utf8))
            tableCount -= 1
        }
    }

    override func put(table: String, keyBytes key: UnsafeRawBufferPointer, value: [UInt8]) throws {
        guard key.count <= Layout.maxKeySize else { throw EngineError.keyTooLarge(size: key.count, max: Layout.maxKeySize) }
        guard value.count <= Layout.maxValueSize else { throw EngineError.valueTooLarge(size: value.count, max: Layout.maxValueSize) }
        try guarded {
            let s = try state(table)
            if try writer.put(&s.root, key: key, value: LeafValue.make(keyCount: key.count, value: value)) { s.count += 1 }
            s.dirty = true
        }
    }

    @discardableResult
    public override func delete(table: String, key: [UInt8]) throws -> Bool {
        try guarded {
            let s = try state(table)
            guard try writer.delete(&s.root, key: key) else { return false }
            s.count -= 1
            s.dirty = true
            return true
        }
    }
}
