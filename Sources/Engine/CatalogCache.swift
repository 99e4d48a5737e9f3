/// The tables of one committed version, decoded once and shared by every read transaction
/// of that version on a handle. A version never changes, so an entry never goes stale, and
/// read transactions never change a `TableState` (only a write transaction does, and it
/// has no cache), so one object serves them all; a new version gets a new cache (with its
/// validated top node, in `Database`). Saves each read transaction a walk of the catalog
/// tree and an allocation per table it opens.
final class CatalogCache: @unchecked Sendable {
    private let lock = Lock()
    private var tables: [String: TableState] = [:]
    /// Bounds the memory a handle spends on a catalog with very many tables.
    static let limit = 256

    func table(_ name: String) -> TableState? { lock.withLock { tables[name] } }

    func store(_ name: String, _ s: TableState) {
        lock.withLock { if tables.count < CatalogCache.limit { tables[name] = s } }
    }
}
