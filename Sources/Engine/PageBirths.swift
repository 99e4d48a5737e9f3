/// Which pages the last commits allocated (`maxGenerations`), so a page one of them wrote and a
/// later commit frees can be reused before older pinned versions go (realm-core's free-space versioning does
/// the same; LMDB holds every page freed after its oldest reader).
///
/// A page allocated by commit `a` was free in every live version before `a`, so once freed by
/// commit `f` it is reachable only from versions `a..<f`. No pin in that range, and it may be
/// reused, even with an older reader pinned. Without this, a reader left at an old version
/// makes every commit after it grow the file, and each growth makes `fdatasync` write the
/// inode and the new blocks' metadata as well as the data.
///
/// Kept in memory only, with the writer's cached free list, for the commits that list made
/// one after another: a list decoded from the file knows no births (`born` 0: reused only once
/// every older pin is gone, as before). A birth found is never later than the page's real
/// one (the newest commit that allocated the whole extent; a newer one that allocated part of
/// it only makes that part younger than said), and an earlier birth only holds a page longer:
/// a page not found, or past the ranges kept, is taken as born unknown, which is always safe.
struct PageBirths {
    /// The allocations of the commits before this one, oldest first, each with the version
    /// it made.
    private var generations: [(version: UInt64, ranges: [Range<UInt64>])] = []
    /// This transaction's allocations.
    private var now: [Range<UInt64>] = []

    /// A commit of many scattered allocations is not worth tracking page by page.
    static let maxRanges = 64
    /// How many commits back a page's birth is known. One covers a stream of small commits (each
    /// rewrites the path the one before it wrote). Sixteen also reused a leaf rewritten within
    /// sixteen commits (400 commits on four leaves under an old pin grew the file by 6 pages, not
    /// 300), but then a pin that is never released holds almost nothing, and the checks that
    /// catch such a pin (`no-reclaim` in `readers`, `inline-list-leak` through `check()`) by the
    /// pages it holds no longer see it: those checks must look at the reader table first.
    static let maxGenerations = 1

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
        generations.append((base, now))
        if generations.count > PageBirths.maxGenerations { generations.removeFirst() }
        now = []
    }

    /// The version that wrote pages `start..<start+count`, when one of the commits kept did;
    /// else 0.
    func born(_ start: UInt64, _ count: UInt64) -> UInt64 {
        for g in generations.reversed() {
            for r in g.ranges where r.lowerBound <= start && start + count <= r.upperBound { return g.version }
        }
        return 0
    }
}

extension PageBirths: Equatable {
    /// Two lists with the same extents are the same list: births are a hint about them.
    static func == (_: PageBirths, _: PageBirths) -> Bool { true }
}
