#if canImport(Glibc)
    import Glibc
#endif
import Engine

/// Deliberately broken object layers, which exist only to prove that the torture suite's
/// object checks catch real bugs. Selected with `FIEF_BROKEN=<name>` (the engine's variable),
/// and only in builds compiled with `-D FIEF_BROKEN_VARIANTS` (debug builds); release builds
/// never read the variable.
package enum BrokenObjectLayer: String, CaseIterable, Sendable {
    /// Links added to a list get no backlink entry.
    case skipBacklink = "skip-backlink"
    /// Changing an indexed property leaves its old index entry behind.
    case staleIndex = "stale-index"
    /// Deleting an object never deletes its `.cascade` targets.
    case noCascade = "no-cascade"
    /// A migration commits the new schema and the migrated data in two transactions.
    case migrationSplit = "migration-split"
    /// Converting a format-1 file commits the clusters and the new format in two writes.
    case conversionSplit = "conversion-split"
    /// Results change sets leave out their first insertion.
    case changeSetDropsInsertion = "change-set-drops-insertion"
    /// Results change sets leave out their modifications.
    case changeSetDropsModifications = "change-set-drops-modifications"
    /// The rows of one object in four are stored 8 bytes short of their layout: damage that
    /// made the verifier's getters trap and took the whole torture run down with them.
    case shortRow = "short-row"
    /// Key counters are stored one behind: the last key given out is given again.
    case keyCounterBehind = "key-counter-behind"
    /// A list's chunks are numbered from 1 (reads, which scan the object's chunks, never notice).
    case listChunkFromOne = "list-chunk-from-one"
    /// A range answered from an index (`<`, `>=`, BETWEEN, BEGINSWITH) loses its last object.
    case indexRangeDropsLast = "index-range-drops-last"
    /// A row written again (a longer string, a null) loses the backlinks it kept.
    case rewriteDropsBacklinks = "rewrite-drops-backlinks"
    /// A value patched in place outside its cluster's integer bounds leaves the bounds as they
    /// were, so a top-k scan passes over the cluster that now holds the best row.
    case staleClusterSummary = "stale-cluster-summary"

    #if FIEF_BROKEN_VARIANTS
        static let active: BrokenObjectLayer? = getenv(BrokenVariant.environmentVariable).flatMap {
            BrokenObjectLayer(rawValue: String(cString: $0))
        }
        package static let available = true
    #else
        static let active: BrokenObjectLayer? = nil
        package static let available = false
    #endif

    @inline(__always) static func on(_ v: BrokenObjectLayer) -> Bool {
        #if FIEF_BROKEN_VARIANTS
            return active == v
        #else
            return false
        #endif
    }
}
