/// What a transaction knows of one table: its tree root and entry count as of this
/// transaction, and its key and value kinds.
@usableFromInline
final class TableState {
    // Read on every get: no dynamic exclusivity checks (a read transaction never changes
    // them; a write transaction is used by one thread).
    @exclusivity(unchecked) var root: Child?
    @exclusivity(unchecked) var count: UInt64
    let keyKind: KeyKind
    let valueKind: ValueKind
    @exclusivity(unchecked) var dirty = false

    init(root: Child?, count: UInt64, keyKind: KeyKind, valueKind: ValueKind) {
        self.root = root
        self.count = count
        self.keyKind = keyKind
        self.valueKind = valueKind
    }

    convenience init(_ r: TableRecord) {
        self.init(root: r.root == 0 ? nil : .page(r.root), count: r.count, keyKind: r.keyKind, valueKind: r.valueKind)
    }

    /// A write transaction's own copy of a version's (clean) table.
    convenience init(copying s: TableState) {
        self.init(root: s.root, count: s.count, keyKind: s.keyKind, valueKind: s.valueKind)
    }
}

public struct TableInfo: Sendable, Equatable, Encodable {
    public let name: String
    public let keyKind: KeyKind
    public let valueKind: ValueKind
    public let count: Int
}

/// What read and write transactions share: table lookup through the catalog, reads, scans.
public class Transaction {
    /// The handle. nil only while an ended read transaction waits in its handle's spare
    /// slot for the next `read` (`Database.recycle`): a strong reference there would be a
    /// cycle, and the handle would never be released.
    @exclusivity(unchecked) @usableFromInline final var owner: Database?
    public var db: Database { owner! }
    @exclusivity(unchecked) var pages: PageSource
    @exclusivity(unchecked) var catalogRoot: Child?
    @exclusivity(unchecked) var tables: [String: TableState] = [:] {
        didSet {
            lastState = nil
            lastStateRef = nil
            previousState = nil
        }
    }
    /// The table the last lookup found: most transactions use one table, many times, and a
    /// String comparison is cheaper than hashing the name. Cleared whenever `tables` changes.
    /// (Two fields, not an optional tuple: the check on every get copies neither.)
    @exclusivity(unchecked) private var lastName = ""
    @exclusivity(unchecked) private var lastState: TableState?
    /// `lastState`, unretained (it keeps it), for `root(of:)`.
    @exclusivity(unchecked) private var lastStateRef: Unmanaged<TableState>?
    /// The one found before it: a walk between two classes (a person's dogs, each dog's
    /// owners) alternates between their tables, and hashed both names on every read.
    @exclusivity(unchecked) private var previousName = ""
    @exclusivity(unchecked) private var previousState: TableState?
    /// Read transactions: the decoded catalog of their version, shared with the others.
    @exclusivity(unchecked) var catalogCache: CatalogCache?
    /// Write transactions: their base version's, whose tables they copy before changing
    /// them; nil once a table is dropped (the base would still name it).
    @exclusivity(unchecked) var baseCatalog: CatalogCache?
    /// Moves whenever the set of tables this transaction sees may have changed (a table
    /// created or dropped, another version read): a cache of tables found missing is good
    /// while it stands still.
    @exclusivity(unchecked) package internal(set) var catalogChanges = 0
    @exclusivity(unchecked) var isActive = true

    init(db: Database, pages: PageSource, catalogRoot: UInt64) {
        owner = db
        self.pages = pages
        self.catalogRoot = catalogRoot == 0 ? nil : .page(catalogRoot)
    }

    /// The version this transaction reads (for a write: the version it will commit).
    public var version: UInt64 { 0 }

    /// What a layer above keeps about the version this transaction reads (a write: its base),
    /// beside the version's decoded catalog on this handle: the object layer's table facts and
    /// schema. A version never changes, so neither does what is true of it; the object must
    /// not change once attached (every transaction on the version shares it).
    package var versionSidecar: AnyObject? { nil }

    func ensureActive() throws { guard isActive else { throw EngineError.transactionClosed } }

    /// `Database.guarded`, touching the handle only when there is an error to name it in:
    /// every get runs through here.
    @usableFromInline
    final func guarded<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw Database.naming(error, path: owner?.path ?? "")
        }
    }

    @usableFromInline
    func state(_ name: String) throws -> TableState {
        try ensureActive()
        if let last = lastState, lastName == name { return last }
        if let previous = previousState, previousName == name {
            remember(name, previous)
            return previous
        }
        // A read transaction's tables are its version's, shared through the cache.
        if let cache = catalogCache {
            let s =
                try cache.table(name)
                ?? {
                    let s = TableState(try record(name))
                    cache.store(name, s)
                    return s
                }()
            remember(name, s)
            return s
        }
        if let s = tables[name] {
            remember(name, s)
            return s
        }
        let s = try baseCatalog?.table(name).map(TableState.init(copying:)) ?? TableState(try record(name))
        tables[name] = s
        remember(name, s)
        return s
    }

    private func remember(_ name: String, _ s: TableState) {
        if lastState != nil {
            previousName = lastName
            previousState = lastState
        }
        lastName = name
        lastState = s
        lastStateRef = Unmanaged.passUnretained(s)
    }

    private func record(_ name: String) throws -> TableRecord {
        guard let raw = try Tree.get(catalogRoot, key: Array(name.utf8), pages: pages) else {
            throw EngineError.tableNotFound(name)
        }
        return try TableRecord.decode(raw, table: name)
    }

    /// Names of all tables, in byte order.
    public func tableNames() throws -> [String] {
        try guarded {
            try ensureActive()
            var names: [String] = []
            try Tree.scan(catalogRoot, from: nil, to: nil, reverse: false, pages: pages) { k, _ in
                names.append(String(decoding: k, as: UTF8.self))
                return true
            }
            return names
        }
    }

    public func tableInfo(_ name: String) throws -> TableInfo? {
        try guarded {
            do {
                let s = try state(name)
                return TableInfo(name: name, keyKind: s.keyKind, valueKind: s.valueKind, count: Int(s.count))
            } catch EngineError.tableNotFound {
                return nil
            }
        }
    }

    /// A typed handle on an existing table; its kinds must match `K` and `V`.
    @inlinable
    public func table<K: KeyCodable, V: ValueCodable>(_ name: String, key: K.Type = K.self, value: V.Type = V.self)
        throws -> Table<K, V>
    {
        try guarded {
            let s = try state(name)
            try Transaction.checkKinds(name, s, K.self, V.self)
            return Table(tx: self, name: name)
        }
    }

    @usableFromInline
    static func checkKinds<K: KeyCodable, V: ValueCodable>(_ name: String, _ s: TableState, _: K.Type, _: V.Type) throws
    {
        guard s.keyKind == K.keyKind, s.valueKind == V.valueKind else {
            throw EngineError.tableTypeMismatch(
                table: name, expected: "\(K.keyKind) keys and \(V.valueKind) values",
                found: "\(s.keyKind) keys and \(s.valueKind) values")
        }
    }

    // MARK: Untyped access, for tools that learn a table's kinds at run time.

    public func get(table: String, key: [UInt8]) throws -> [UInt8]? {
        descents &+= 1
        return try guarded { try Tree.get(try state(table).root, key: key, pages: pages) }
    }

    /// Lends the value of `key` (nil when absent) to `body` without a copy; the bytes are
    /// valid only during the call. For the object layer, which decodes rows in place.
    package func withValue<T>(table: String, key: [UInt8], _ body: (UnsafeRawBufferPointer?) throws -> T) throws -> T {
        descents &+= 1
        return try guarded { try Tree.withValue(try state(table).root, key: key, pages: pages, body) }
    }

    /// As `withValue(table:key:)`, with the key lent (an object key from the stack).
    /// (Its own descent, not the owned one's with the bytes dropped: through that, every read
    /// of a row paid for a closure and a mutable pointer it never uses.)
    package func withValue<T>(
        table: String, keyBytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) throws -> T
    ) throws -> T {
        descents &+= 1
        return try guarded {
            let root = try root(of: table)
            // The pages lent, not retained: a lookup of an object's row took an atomic retain
            // and release of them for the descent and again for the value.
            return try Unmanaged.passUnretained(pages)._withUnsafeGuaranteedRef { pages in
                guard let v = try Tree.find(root, key: keyBytes, pages: pages) else { return try body(nil) }
                return try Tree.lend(v, pages: pages, body)
            }
        }
    }

    /// As above; in a write, `body` is also handed the value's bytes to change in place when
    /// they lie in a node the write already copied (never a mapped page), for a change made
    /// after `claimOwned` while `writes` stays what it is now: a lookup and then a change of
    /// the same value (an object found, then one of its properties set) descend once.
    @inline(__always)
    package func withValue<T>(
        table: String, keyBytes: UnsafeRawBufferPointer,
        owned body: (UnsafeRawBufferPointer?, UnsafeMutableRawBufferPointer?) throws -> T
    ) throws -> T {
        descents &+= 1
        return try guarded {
            let root = try root(of: table)
            return try Unmanaged.passUnretained(pages)._withUnsafeGuaranteedRef { pages in
                var owned: UnsafeMutableRawBufferPointer?
                guard let v = try Tree.find(root, key: keyBytes, pages: pages, owned: &owned) else {
                    return try body(nil, nil)
                }
                // A constant for the closure: a captured variable was checked for exclusive
                // access at run time on every lookup.
                let ownedBytes = owned
                return try Tree.lend(v, pages: pages) { try body($0, ownedBytes) }
            }
        }
    }

    /// Whether the caller may now change in place bytes `withValue(table:keyBytes:owned:)`
    /// handed out as owned (see `WriteTransaction`): never in a read.
    package func claimOwned(at: Int) -> Bool { false }

    /// The root of table `name`. The table found last is read in place, unretained (every
    /// lookup after the first; through `state` it was an atomic retain and release per get).
    @inline(__always)
    final func root(of name: String) throws -> Child? {
        if isActive, lastName == name, let s = lastStateRef { return s._withUnsafeGuaranteedRef { $0.root } }
        return try state(name).root
    }

    /// Whether the bytes this transaction lends stay valid, unchanged, until it ends or moves
    /// to another version (not only during the call that lends them): true for a read, whose
    /// pages are the mapping its snapshot keeps alive (or, encrypted, the decrypted extents
    /// its `EncryptedPages` holds until the snapshot goes); false in a write, whose nodes change.
    package var lendsStableBytes: Bool { false }

    /// Whether the bytes this transaction lends stay valid until it next writes (`writes`
    /// moves) or ends: always for a read, whose bytes are stable.
    package var lendsBytesUntilWrite: Bool { lendsStableBytes }

    /// Changes this transaction made (puts, deletes, in-place changes, tables created or
    /// dropped): 0 for a read. Bytes lent before a change may be gone after it.
    @exclusivity(unchecked) package internal(set) var writes = 0

    /// Walks toward a table's leaves this transaction made (lookups, scans, cursor lookups
    /// that left their leaf, and a write's puts and deletes): the benchmarks'
    /// "tree descents per query". Not atomic: a count for measuring, not for deciding.
    @exclusivity(unchecked) package internal(set) var descents = 0

    /// The typed tables' read: the value decoded straight from the snapshot's bytes, one copy
    /// instead of a copy out of the tree and another into the value. Inlined into the typed
    /// get, so it runs specialized for `V`; the lookup itself (`lendValue`) is not generic.
    @inlinable
    final func decodeValue<V>(
        table: String, key: UnsafeRawBufferPointer, _ decode: (UnsafeRawBufferPointer) throws -> V
    ) throws -> V? {
        var out: V?
        try lendValue(table: table, key: key) { out = try decode($0) }
        return out
    }

    /// Calls `body` with the value of `key` when there is one (not at all otherwise); the
    /// bytes are valid only during the call.
    @usableFromInline
    final func lendValue(table: String, key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> Void)
        throws
    {
        descents &+= 1
        try guarded {
            // The table found last, checked here rather than through `state` (the common
            // case of every get after the first).
            guard let v = try Tree.find(try root(of: table), key: key, pages: pages) else { return }
            switch v {
            case .inline(let b): try body(b)
            case .overflow(let r, let len): try body(try pages.overflowValue(ref: r, length: len))
            }
        }
    }

    public func count(table: String) throws -> Int {
        try guarded { Int(try state(table).count) }
    }

    /// Visits keys in [from, to) in order (or reverse order); `body` returns false to stop.
    /// The bytes are borrowed from the snapshot and valid only during the call.
    public func scan(
        table: String, from: [UInt8]? = nil, to: [UInt8]? = nil, reverse: Bool = false,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        descents &+= 1
        try guarded {
            try Tree.scan(try state(table).root, from: from, to: to, reverse: reverse, pages: pages, body)
        }
    }

    public func put(table: String, key: [UInt8], value: [UInt8]) throws {
        try key.withUnsafeBytes { try put(table: table, keyBytes: $0, value: value) }
    }

    /// As `put`, with the key lent rather than in an array of its own.
    @usableFromInline
    package func put(table: String, keyBytes: UnsafeRawBufferPointer, value: [UInt8]) throws {
        throw EngineError.invalidArgument("cannot write to table '\(table)' in a read transaction")
    }

    @discardableResult
    public func delete(table: String, key: [UInt8]) throws -> Bool {
        throw EngineError.invalidArgument("cannot delete from table '\(table)' in a read transaction")
    }

    /// The table's largest key, or nil when it is empty.
    public func lastKey(table: String) throws -> [UInt8]? {
        descents &+= 1
        return try guarded { try Tree.lastKey(try state(table).root, pages: pages) }
    }

    /// See `WriteTransaction.mutateValue(table:keyBytes:_:)`.
    @discardableResult
    public func mutateValue(table: String, key: [UInt8], _ body: (UnsafeMutableRawBufferPointer) throws -> Void) throws
        -> Bool
    {
        try key.withUnsafeBytes { try mutateValue(table: table, keyBytes: $0, body) }
    }

    package func mutateValue(
        table: String, keyBytes: UnsafeRawBufferPointer, _ body: (UnsafeMutableRawBufferPointer) throws -> Void
    ) throws -> Bool {
        throw EngineError.invalidArgument("cannot write to table '\(table)' in a read transaction")
    }
}

/// A snapshot of one committed version. It never changes, whatever writers commit, until
/// `refresh()` moves it to the newest version. End it (or drop it) to release its pin.
public final class ReadTransaction: Transaction {
    var snapshot: Snapshot

    init(db: Database, snapshot: Snapshot) {
        self.snapshot = snapshot
        super.init(db: db, pages: snapshot.pages, catalogRoot: snapshot.meta.catalogRoot)
        catalogCache = snapshot.catalog
    }

    deinit { end() }

    public override var version: UInt64 { snapshot.version }

    package override var versionSidecar: AnyObject? { catalogCache?.attached }

    package override var lendsStableBytes: Bool { isActive }

    /// Moves to the newest committed version.
    public func refresh() throws {
        try ensureActive()
        adopt(try db.currentSnapshot(pin: true))
    }

    /// Reads `next` from now on; the caller has pinned it for this transaction. The old
    /// version's pin goes after the new one is taken, so the pages never go unprotected.
    func adopt(_ next: Snapshot) {
        db.readers.unpin(snapshot.version)
        point(at: next)
    }

    /// An ended transaction from the handle's spare slot, begun again on `next` (pinned by
    /// the caller). On the version it read last, everything it looked up still holds: a
    /// version never changes.
    func restart(on db: Database, _ next: Snapshot) {
        owner = db
        isActive = true
        if next !== snapshot { point(at: next) }
    }

    /// Parks an ended transaction in its handle's spare slot (see `owner`).
    func park() { owner = nil }

    private func point(at next: Snapshot) {
        snapshot = next
        pages = next.pages
        catalogRoot = next.meta.catalogRoot == 0 ? nil : .page(next.meta.catalogRoot)
        catalogCache = next.catalog
        tables = [:]
        catalogChanges += 1
    }

    public func end() {
        guard isActive else { return }
        isActive = false
        db.readers.unpin(snapshot.version)
    }
}

/// Keeps one version readable (its pages are not reused) until released or dropped. Pass it
/// to other threads and read it there with `Database.read(_:_:)`, as with Realm's
/// ThreadSafeReference.
public final class PinnedVersion: @unchecked Sendable {
    let db: Database
    private let lock = Lock()
    private var held: Snapshot?

    init(db: Database, snapshot: Snapshot) {
        self.db = db
        held = snapshot
    }

    deinit { release() }

    var snapshot: Snapshot? { lock.withLock { held } }

    public var version: UInt64? { snapshot?.version }

    public func release() {
        let s: Snapshot? = lock.withLock {
            let s = held; held = nil; return s
        }
        if let s { db.readers.unpin(s.version) }
    }
}

/// A typed view of one table inside a transaction.
public struct Table<K: KeyCodable, V: ValueCodable> {
    @usableFromInline let tx: Transaction
    public let name: String

    @usableFromInline
    init(tx: Transaction, name: String) {
        self.tx = tx
        self.name = name
    }

    @inlinable
    public func get(_ key: K) throws -> V? {
        try key.withKeyBytes { k in try tx.decodeValue(table: name, key: k) { try V(valueBytes: $0) } }
    }

    /// Lends the stored bytes of `key`'s value (nil when absent) to `body` without copying
    /// or decoding them, as LMDB's `mdb_get` does: the bytes belong to the snapshot and are
    /// valid only during the call.
    @inlinable
    public func withValueBytes<R>(_ key: K, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        try key.withKeyBytes { k in
            var result: R?
            try tx.lendValue(table: name, key: k) { result = try body($0) }
            if let result { return result }
            return try body(nil)
        }
    }

    @inlinable
    public func put(_ key: K, _ value: V) throws {
        let v = value.valueBytes
        try key.withKeyBytes { try tx.put(table: name, keyBytes: $0, value: v) }
    }

    @discardableResult
    public func delete(_ key: K) throws -> Bool {
        try tx.delete(table: name, key: key.keyBytes)
    }

    /// Adds `key` after every key of the table, with no search (`MDB_APPEND`); throws
    /// `EngineError.keyOutOfOrder` unless it is above them all.
    public func append(_ key: K, _ value: V) throws {
        guard let w = tx as? WriteTransaction else { return try put(key, value) }
        let v = value.valueBytes
        try key.withKeyBytes { try w.append(table: name, keyBytes: $0, value: v) }
    }

    /// Changes `key`'s value with `body`; returns false, calling nothing, when it is absent.
    /// A new value of the old one's length is written in place, in the leaf this write copied
    /// (`mutateValue`): one descent instead of a get and a put.
    @discardableResult
    public func update(_ key: K, _ body: (inout V) throws -> Void) throws -> Bool {
        try key.withKeyBytes { k in
            var resized: [UInt8]?
            let found = try tx.mutateValue(table: name, keyBytes: k) { bytes in
                var v = try V(valueBytes: UnsafeRawBufferPointer(bytes))
                try body(&v)
                let new = v.valueBytes
                if new.count == bytes.count {
                    new.withUnsafeBytes { bytes.copyMemory(from: $0) }
                } else {
                    resized = new
                }
            }
            if let resized { try tx.put(table: name, keyBytes: k, value: resized) }
            return found
        }
    }

    public func count() throws -> Int { try tx.count(table: name) }

    /// Visits entries with keys in [from, to); `body` returns false to stop.
    public func scan(from: K? = nil, to: K? = nil, reverse: Bool = false, _ body: (K, V) throws -> Bool) throws {
        try tx.scan(table: name, from: from?.keyBytes, to: to?.keyBytes, reverse: reverse) { k, v in
            try body(try K(keyBytes: k), try V(valueBytes: v))
        }
    }

    /// Entries with keys in [from, to), at most `limit` of them.
    public func entries(from: K? = nil, to: K? = nil, reverse: Bool = false, limit: Int = .max) throws -> [(
        key: K, value: V
    )] {
        var out: [(key: K, value: V)] = []
        guard limit > 0 else { return out }
        try scan(from: from, to: to, reverse: reverse) { k, v in
            out.append((k, v))
            return out.count < limit
        }
        return out
    }
}
