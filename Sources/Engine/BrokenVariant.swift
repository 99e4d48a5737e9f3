#if canImport(Glibc)
    import Glibc
#endif

/// Deliberately broken engines, which exist only to prove that the crash, power-cut and
/// isolation checkers catch real bugs. Selected with `FIEF_BROKEN=<name>`, and only in
/// builds compiled with `-D FIEF_BROKEN_VARIANTS` (debug builds of this package); release
/// builds never read the variable.
package enum BrokenVariant: String, CaseIterable, Sendable {
    /// No sync between writing the new nodes and slot and flipping the select bit.
    case noDataSync = "no-data-sync"
    /// The select bit is flipped before the new top ref is written (and made durable).
    case flipBeforeTop = "flip-before-top"
    /// The new top ref goes into the active slot; the select bit never moves.
    case topInActiveSlot = "top-in-active-slot"
    /// A changed node is written back over its own page instead of a free one.
    case overwriteInPlace = "overwrite-in-place"
    /// Freed pages are reused even while a pinned reader can still see them.
    case reusePinned = "reuse-pinned"
    /// Pages written after the oldest pin are reused once freed, even while a newer pin (a
    /// reader between their birth and their free) still sees them.
    case reuseBetweenPins = "reuse-between-pins"
    /// A commit on a base whose select-bit flip may not be durable (its writer died between
    /// the flip and the sync) does not sync first: it overwrites the slot and pages of the
    /// version a power cut may still select.
    case noBaseSync = "no-base-sync"
    /// Readers take the slot holding the highest version, flipped or not.
    case readUncommitted = "read-uncommitted"
    /// compact renames its copy over the file but never syncs the directory: a power cut can
    /// bring the old file back, without the commits made after compact returned.
    case compactNoDirSync = "compact-no-dir-sync"
    /// compact and writeCopy never sync the copy before putting it in place.
    case copyNoSync = "copy-no-sync"
    /// A write that returns fewer bytes than asked is taken as complete.
    case ignoreShortWrite = "ignore-short-write"
    /// `DatabaseOptions.verifyChecksums` is ignored: pages are used as read.
    case noChecksumVerify = "no-checksum-verify"
    /// Pins of dead reader processes are never reclaimed.
    case noReclaim = "no-reclaim"
    /// Claiming a reader slot leaves the table's high-water mark where it was, so the
    /// writer's scan stops short of slots pinned by readers that came later.
    case noHighWater = "no-high-water"
    /// Commits never ring the doorbell: watchers in other processes learn of them only by
    /// polling (as from an engine older than the doorbell).
    case noDoorbell = "no-doorbell"
    /// The commit watcher drops every third delivery (its versions are never reported).
    case notifySkip = "notify-skip"
    /// The commit watcher delivers every third range twice.
    case notifyDup = "notify-dup"
    /// The commit watcher starts each range one version late.
    case notifyOffByOne = "notify-off-by-one"
    /// `batch` tells its callers their calls committed as soon as the bodies ran, before the
    /// combined transaction is written, let alone synced.
    case batchEarlyAck = "batch-early-ack"
    /// Every commit of an encrypted file also re-encrypts the base version's top node in its
    /// own page, with a new salt (a naive "fresh keystream on every write"): a torn write
    /// leaves the version a power cut falls back to unauthenticable.
    case encryptInPlace = "encrypt-in-place"
    /// Every encrypted page is sealed with salt 0: two writes of one page share a keystream.
    case fixedSalt = "fixed-salt"
    /// Encrypted pages are decrypted without checking their tag: damage reads as data.
    case skipMAC = "skip-mac"
    /// When the free list moves into the top node, the chunk pages it leaves are never freed.
    case inlineListLeak = "inline-list-leak"
    /// The top node names the catalog leaf embedded in the base's top node (freed by this
    /// commit) instead of the copy embedded in its own.
    case catalogInOldTop = "catalog-in-old-top"
    /// A node's checksum leaves out its cells along with its free gap (format 6): damage to
    /// keys and values passes a verified read.
    case gapOverCells = "gap-over-cells"

    /// `mutateValue` changes a value still on a mapped page in the file itself, under every
    /// version sharing the page and outside any commit, instead of in a copy of its leaf.
    case patchMappedPage = "patch-mapped-page"

    package static let environmentVariable = "FIEF_BROKEN"

    #if FIEF_BROKEN_VARIANTS
        static let active: BrokenVariant? = getenv(environmentVariable).flatMap {
            BrokenVariant(rawValue: String(cString: $0))
        }
        package static let available = true
    #else
        static let active: BrokenVariant? = nil
        package static let available = false
    #endif

    @inline(__always) static func on(_ v: BrokenVariant) -> Bool {
        #if FIEF_BROKEN_VARIANTS
            return active == v
        #else
            return false
        #endif
    }
}
