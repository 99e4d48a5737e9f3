/// The one writer. Sees its own changes; commits when `Database.write`'s body returns.
public final class WriteTransaction: Transaction {
    let base: Snapshot
    @exclusivity(unchecked) var freeList: FreeList
    let writer: TreeWriter
    @exclusivity(unchecked) var tableCount: UInt64

    /// `pins`: the versions older than the base that live readers pin, ascending.
    init(db: Database, base: Snapshot, pins: [UInt64]) throws {
        self.base = base
        var list =
            try db.freeListCache.takeList(fileID: db.currentFileID, slot: base.slot)
            ?? FreeListStorage.decode(base.meta, pages: base.pages)
        list.commitStarted(after: base.version)
        list.dropEmptyChunks()
        list.release(upTo: pins.first ?? base.version, pins: pins)
        freeList = list
        writer = TreeWriter(pages: base.pages)
        writer.reuse = db.freeListCache.nodes(fileID: db.currentFileID, slot: base.slot)
        tableCount = base.meta.tableCount
        super.init(db: db, pages: base.pages, catalogRoot: base.meta.catalogRoot)
        // Room for the tables a write usually opens (an object write: rows, an index, the
        // object layer's meta): grown one by one, the dictionary was allocated and rehashed
        // three times in each small commit.
        tables = [String: TableState](minimumCapacity: 4)
        baseCatalog = base.catalog
    }

    public override var version: UInt64 { base.version + 1 }

    package override var versionSidecar: AnyObject? { base.catalog.attached }

    /// The sidecar of the version this transaction commits, as its writer leaves it: set
    /// before the commit, attached when it is published.
    package var committedSidecar: AnyObject?

    /// The version this transaction started from.
    public var baseVersion: UInt64 { base.version }

    func end() { isActive = false }

    static func validateName(_ name: String) throws {
        let n = name.utf8.count
        guard n >= 1, n <= 255 else { throw EngineError.invalidTableName(name) }
    }

    /// Creates a table. Fails if one of that name exists.
    @discardableResult
    public func createTable<K: KeyCodable, V: ValueCodable>(
        _ name: String, key: K.Type = K.self, value: V.Type = V.self
    ) throws -> Table<K, V> {
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
            writes += 1
            tables[name] = s
            tableCount += 1
            catalogChanges += 1
        }
    }

    /// The table, created first when missing.
    public func openTable<K: KeyCodable, V: ValueCodable>(_ name: String, key: K.Type = K.self, value: V.Type = V.self)
        throws -> Table<K, V>
    {
        if try tableInfo(name) == nil { return try createTable(name, key: K.self, value: V.self) }
        return try table(name, key: K.self, value: V.self)
    }

    /// Removes a table and frees its pages.
    public func dropTable(_ name: String) throws {
        try guarded {
            let s = try state(name)
            try writer.freeAll(s.root)
            tables[name] = nil
            baseCatalog = nil
            _ = try writer.delete(&catalogRoot, key: Array(name.utf8))
            tableCount -= 1
            catalogChanges += 1
            writes += 1
        }
    }

    /// The limits `put` and `append` both hold a new entry to.
    @inline(__always) private static func checkSizes(key: UnsafeRawBufferPointer, value: [UInt8]) throws {
        guard key.count <= Layout.maxKeySize else {
            throw EngineError.keyTooLarge(size: key.count, max: Layout.maxKeySize)
        }
        guard value.count <= Layout.maxValueSize else {
            throw EngineError.valueTooLarge(size: value.count, max: Layout.maxValueSize)
        }
    }

    @usableFromInline
    package override func put(table: String, keyBytes key: UnsafeRawBufferPointer, value: [UInt8]) throws {
        try WriteTransaction.checkSizes(key: key, value: value)
        try guarded {
            let s = try state(table)
            descents &+= 1
            if try writer.put(&s.root, key: key, value: LeafValue.make(keyCount: key.count, value: value)) {
                s.count += 1
            }
            s.dirty = true
            writes += 1
        }
    }

    /// Adds `key` after every key the table holds (LMDB's `MDB_APPEND`): no search on the way
    /// down, and a full leaf splits at its end, so a load in key order leaves its leaves full.
    /// Throws `keyOutOfOrder` unless `key` is above the table's last key.
    package func append(table: String, keyBytes key: UnsafeRawBufferPointer, value: [UInt8]) throws {
        try WriteTransaction.checkSizes(key: key, value: value)
        try guarded {
            let s = try state(table)
            descents &+= 1
            let appended = try writer.append(
                &s.root, key: key, value: LeafValue.make(keyCount: key.count, value: value))
            // Refused or not, the descent may have copied the right edge out of its pages
            // (freeing them): the table's root must be written.
            s.dirty = true
            writes += 1
            guard appended else { throw EngineError.keyOutOfOrder(table: table) }
            s.count += 1
        }
    }

    public func append(table: String, key: [UInt8], value: [UInt8]) throws {
        try key.withUnsafeBytes { try append(table: table, keyBytes: $0, value: value) }
    }

    /// Changes the value under `key` in place, at its length: one descent, the leaf copied out
    /// of its page as a put copies it, and `body` handed that copy's bytes, never the mapped
    /// page that older versions (and their readers) may share. A value in an overflow extent
    /// is copied out, changed and put back. Returns false, changing nothing, when `key` is absent.
    /// Bytes lent by this write stay valid until it next writes: base pages are the mapping's,
    /// and a copied node changes only when it is written to. (Not so for an encrypted file,
    /// whose decrypted pages a cache may evict at any read.)
    package override var lendsBytesUntilWrite: Bool { pages.encrypted == nil }

    package override func mutateValue(
        table: String, keyBytes key: UnsafeRawBufferPointer, _ body: (UnsafeMutableRawBufferPointer) throws -> Void
    ) throws -> Bool {
        try guarded {
            let s = try state(table)
            descents &+= 1
            if BrokenVariant.on(.patchMappedPage), try patchMappedPage(s.root, key: key, body) { return true }
            guard let (node, i) = try writer.ownedLeafCell(&s.root, key: key) else { return false }
            s.dirty = true
            writes += 1
            if let bytes = node.mutableValue(i) {
                try body(bytes)
                return true
            }
            var copy = try Tree.lend(node.value(i), pages: pages) { Array($0!) }
            try copy.withUnsafeMutableBytes { try body($0) }
            _ = try writer.put(&s.root, key: key, value: LeafValue.make(keyCount: key.count, value: copy))
            return true
        }
    }

    /// Whether the caller may now change in place bytes `withValue(table:keyBytes:owned:)`
    /// handed out as owned: only while no change came since (`writes` is still `at`). True
    /// counts the change (bytes lent before it may be gone after it); the node holding the
    /// bytes is already part of this write's tree, so nothing else is copied.
    package override func claimOwned(at: Int) -> Bool {
        guard isActive, writes == at else { return false }
        writes += 1
        return true
    }

    /// `patch-mapped-page`: the bytes of a value still on a mapped page are changed in the
    /// file itself, under every version that shares the page, and outside any commit.
    private func patchMappedPage(
        _ root: Child?, key: UnsafeRawBufferPointer, _ body: (UnsafeMutableRawBufferPointer) throws -> Void
    ) throws -> Bool {
        guard pages.encrypted == nil, case .inline(let v)? = try Tree.find(root, key: key, pages: pages) else {
            return false
        }
        let base = UnsafeRawPointer(pages.mapping.base)
        guard let at = v.baseAddress, at >= base, at < base + pages.mapping.length else { return false }
        var copy = Array(v)
        try copy.withUnsafeMutableBytes { try body($0) }
        try db.file.write(copy, at: UInt64(at - base))
        return true
    }

    @discardableResult
    public override func delete(table: String, key: [UInt8]) throws -> Bool {
        try guarded {
            let s = try state(table)
            descents &+= 1
            guard try writer.delete(&s.root, key: key) else { return false }
            s.count -= 1
            s.dirty = true
            writes += 1
            return true
        }
    }
}
