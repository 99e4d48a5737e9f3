/// The table records of one committed version, decoded once and shared by every read
/// transaction of that version on a handle. A version never changes, so an entry never goes
/// stale; a new version gets a new cache (with its validated top node, in `Database`). Saves
/// each read transaction a walk of the catalog tree per table it opens.
final class CatalogCache: @unchecked Sendable {
    private let lock = Lock()
    private var records: [String: TableRecord] = [:]
    /// Bounds the memory a handle spends on a catalog with very many tables.
    static let limit = 256

    func record(_ name: String) -> TableRecord? { lock.withLock { records[name] } }

    func store(_ name: String, _ r: TableRecord) {
        lock.withLock { if records.count < CatalogCache.limit { records[name] = r } }
    }
}
