/// The tables of one committed version, decoded once and shared by every read transaction
/// of that version on a handle. A version never changes, so an entry never goes stale, and
/// read transactions never change a `TableState` (only a write transaction does, and it
/// has no cache), so one object serves them all; a new version gets a new cache (with its
/// validated top node, in `Database`). Saves each read transaction a walk of the catalog
/// tree and an allocation per table it opens.
final class CatalogCache: @unchecked Sendable {
    private let lock = Lock()
    @exclusivity(unchecked) private var tables: [String: TableState] = [:]
    /// The entry found last: read transactions mostly open the same table, and comparing
    /// its name is cheaper than hashing it. (Under `lock`, as `tables`.)
    @exclusivity(unchecked) private var last: (name: String, state: TableState)?
    /// Bounds the memory a handle spends on a catalog with very many tables.
    static let limit = 256

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
