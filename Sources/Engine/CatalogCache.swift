/// The tables of one committed version, decoded once and shared by every read transaction
/// of that version on a handle. A version never changes, so an entry never goes stale, and
/// read transactions never change a `TableState` (only a write transaction does, and it
/// has no cache), so one object serves them all; a new version gets a new cache (with its
/// validated top node, in `Database`). Saves each read transaction a walk of the catalog
/// tree and an allocation per table it opens. A version this handle committed starts with
/// the tables its writer opened, and a write transaction copies its base version's entries
/// (`Transaction.state`): the next write of a small-transaction workload opens its tables
/// without a catalog walk or a record decode each.
final class CatalogCache: @unchecked Sendable {
    private let lock = Lock()
    @exclusivity(unchecked) private var tables: [String: TableState] = [:]
    /// The entry found last: read transactions mostly open the same table, and comparing
    /// its name is cheaper than hashing it. (Under `lock`, as `tables`.)
    @exclusivity(unchecked) private var last: (name: String, state: TableState)?
    /// Bounds the memory a handle spends on a catalog with very many tables.
    static let limit = 256
    /// What a layer above learned about this version (`Transaction.versionSidecar`), left by
    /// the writer that committed it.
    let attached: AnyObject?

    init() { attached = nil }

    /// A committed version's cache, holding `tables` (none of which anyone changes again).
    init(seeded tables: [String: TableState], sidecar: AnyObject?) {
        if tables.count <= CatalogCache.limit { self.tables = tables }
        attached = sidecar
    }

    func table(_ name: String) -> TableState? {
        lock.withLock {
            if let last, last.name == name { return last.state }
            guard let s = tables[name] else { return nil }
            last = (name, s)
            return s
        }
    }

    func store(_ name: String, _ s: TableState) {
        lock.withLock { if tables.count < CatalogCache.limit { tables[name] = s } }
    }
}
