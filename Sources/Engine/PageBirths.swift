/// Which pages the last commit allocated, so a page it wrote and the next commit frees can be
/// reused before older pinned versions go (realm-core's free-space versioning does the same;
/// LMDB holds every page freed after its oldest reader).
///
/// A page allocated by commit `a` was free in every live version before `a`, so once freed by
/// commit `f` it is reachable only from versions `a..<f`. No pin in that range, and it may be
/// reused, even with an older reader pinned. Without this, a reader left at an old version
/// makes every commit after it grow the file, and each growth makes `fdatasync` write the
/// inode and the new blocks' metadata as well as the data.
///
/// Kept in memory only, with the writer's cached free list: a list decoded from the file
/// knows no births (`born` 0: reused only once every older pin is gone, as before). Ranges
/// are capped; a page not found is taken as born unknown, which is always safe.
struct PageBirths {
    /// The commit the ranges in `last` come from.
    private(set) var lastVersion: UInt64 = 0
    private var last: [Range<UInt64>] = []
    private var now: [Range<UInt64>] = []

    /// A commit of many scattered allocations is not worth tracking page by page.
    static let maxRanges = 64

    /// This transaction allocated `start..<start+count`.
    mutating func allocated(_ start: UInt64, _ count: UInt64) {
        if let l = now.last, l.upperBound == start {
            now[now.count - 1] = l.lowerBound..<(start + count)
        } else if now.count < PageBirths.maxRanges {
            now.append(start..<(start + count))
        }
    }

    /// A new transaction starts from the version whose commit recorded `now`.
    mutating func commitStarted(after base: UInt64) {
        last = now
        lastVersion = base
        now = []
    }

    /// The version that wrote pages `start..<start+count`, when the last commit did; else 0.
    func born(_ start: UInt64, _ count: UInt64) -> UInt64 {
        for r in last where r.lowerBound <= start && start + count <= r.upperBound { return lastVersion }
        return 0
    }
}

extension PageBirths: Equatable {
    /// Two lists with the same extents are the same list: births are a hint about them.
    static func == (_: PageBirths, _: PageBirths) -> Bool { true }
}
