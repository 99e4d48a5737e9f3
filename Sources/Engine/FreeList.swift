/// A run of free pages, tagged with the version whose commit freed it. Pages freed by
/// version v were reachable in v-1 and earlier, so they may be reused only once no live
/// version is older than v. Tag 0 means reusable by anyone.
struct FreeExtent: Equatable {
    var start: UInt64  // page number
    var count: UInt64
    var freedAt: UInt64
    /// In memory only, on a pending extent: the version that wrote its pages, when the writer
    /// knows it (`PageBirths`); 0 when not.
    var born: UInt64 = 0

    static func == (a: FreeExtent, b: FreeExtent) -> Bool {
        a.start == b.start && a.count == b.count && a.freedAt == b.freedAt
    }

    static let size = 24
    var end: UInt64 { start + count }

    /// start u64 | count u64 | freedAt u64, in a chunk page or the top node.
    static func decode(_ p: UnsafeRawBufferPointer, at o: Int) -> FreeExtent {
        FreeExtent(start: p.u64(o), count: p.u64(o + 8), freedAt: p.u64(o + 16))
    }

    func encode(into p: UnsafeMutableRawBufferPointer, at o: Int) {
        p.setU64(start, at: o); p.setU64(count, at: o + 8); p.setU64(freedAt, at: o + 16)
    }
}

/// Up to `capacity` free extents, stored in one page of their own or, with the whole list
/// while it is small, in the top node. `page` is the page where the base version holds this
/// chunk, `inTopNode`, or 0 once this transaction changed it: a commit rewrites only the
/// chunks it changed, so its cost follows what changed, not how much is free.
struct FreeChunk: Equatable {
    var entries: [FreeExtent]
    var page: UInt64 = 0

    /// Not a page: the chunk's extents are in the base version's top node.
    static let inTopNode = UInt64.max

    static func capacity(_ g: PageGeometry) -> Int { FreeListPages.extentsPerChunk(g) }
    /// In a plain file.
    static let capacity = capacity(.plain)

    /// Needs a page of its own if the list is stored in pages at commit.
    var isDirty: Bool { page == 0 || page == FreeChunk.inTopNode }
    /// The page the base version stores it in, freed when the chunk changes or moves.
    var ownPage: UInt64? { isDirty ? nil : page }
}

/// The free space of one version, and the allocator a write transaction draws pages from.
///
/// Two runs of chunks: `reusable` (tag 0, ordered by start across chunks, adjacent extents
/// merged) and `pending` (still visible to some live version, ordered by tag: each commit
/// appends its frees at the end, releases take from the front); and `recent`, the reusable
/// extents released since they last spilled into `reusable`. `FreeListStorage` writes the
/// changed chunks at commit, and `recent` in the top node; the writer keeps the list in
/// memory from one commit to the next.
struct FreeList: Equatable {
    private(set) var reusable: [FreeChunk] = []
    private(set) var pending: [FreeChunk] = []
    /// Reusable extents by start, adjacent ones merged (not with `reusable`'s). Allocation
    /// takes from here first and releases put extents here, so a stream of small commits
    /// reuses the pages it released without touching the chunk pages of a large reusable run.
    var recent: [FreeExtent] { recentSpent == 0 ? recentExtents : Array(recentExtents[recentSpent...]) }
    /// `recent`, after the extents allocations used up.
    private var recentExtents: [FreeExtent] = []
    /// How many of the first `recentExtents` allocations used up (each now empty), left in place
    /// until `recent` changes otherwise (`settleRecent`). Removed one at a time from the front,
    /// each moved every extent after it: a commit after a large scattered free takes thousands
    /// of single pages from here, and the moves grew with the square of them (a million-record
    /// load in random order, batches of 10,000, ran about 12 % faster without).
    private var recentSpent = 0
    /// High-water mark of the file, in pages (header page included).
    private(set) var pageCount: UInt64
    /// Pages of chunks this transaction changed or dropped: freed at commit, as the base
    /// version still reads them.
    var retired: [UInt64] = []
    /// The base version's root pages (the chain listing the chunks), rewritten every commit.
    var rootPages: [UInt64] = []
    /// While a commit sizes the list's own storage, a chunk emptied by an allocation stays (and
    /// is stored empty), so the number of pages to write never shrinks below what was taken.
    var keepEmptyChunks = false

    /// A run of neighbouring pages taken for one commit's nodes (`reserveRun`): single pages
    /// come from it first, so the commit's pages go out in one write call (one FUSE request
    /// on a FaultFS mount) instead of one per page. Empty (equal) outside a commit.
    private var runNext: UInt64 = 0
    private var runEnd: UInt64 = 0
    /// The pages the last commit and this one allocated.
    private(set) var births = PageBirths()

    /// Entries per chunk page in this file (fewer when encrypted: the page is shorter).
    let chunkCapacity: Int
    /// Two neighbours, one of them changed, are merged when they fit in this many entries, so
    /// chunks that allocations emptied do not pile up.
    var mergeBelow: Int { chunkCapacity * 3 / 4 }

    /// Equal when they list the same extents, whatever allocations left to settle. Compares
    /// every stored property (`recent` in place of the two it is made of): a new one goes here.
    static func == (a: FreeList, b: FreeList) -> Bool {
        a.reusable == b.reusable && a.pending == b.pending && a.recent == b.recent && a.pageCount == b.pageCount
            && a.retired == b.retired && a.rootPages == b.rootPages && a.keepEmptyChunks == b.keepEmptyChunks
            && a.runNext == b.runNext && a.runEnd == b.runEnd && a.births == b.births
            && a.chunkCapacity == b.chunkCapacity
    }

    init(pageCount: UInt64, geometry: PageGeometry = .plain) {
        self.pageCount = pageCount
        chunkCapacity = FreeChunk.capacity(geometry)
    }

    init(
        reusable: [FreeChunk], recent: [FreeExtent] = [], pending: [FreeChunk], pageCount: UInt64, rootPages: [UInt64],
        geometry: PageGeometry
    ) {
        chunkCapacity = FreeChunk.capacity(geometry)
        self.reusable = reusable
        recentExtents = recent
        self.pending = pending
        self.pageCount = pageCount
        self.rootPages = rootPages
    }

    // MARK: Allocating

    /// `n` contiguous pages: first fit among recent extents, then among the other reusable
    /// ones, lowest first; else the end of file.
    mutating func allocate(_ n: Int) -> UInt64 {
        if n == 1 && runNext < runEnd {
            runNext += 1
            return runNext - 1
        }
        let want = UInt64(n)
        if let i = recentExtents[recentSpent...].firstIndex(where: { $0.count >= want }) {
            let start = recentExtents[i].start
            recentExtents[i].start += want
            recentExtents[i].count -= want
            if recentExtents[i].count == 0 {
                if i == recentSpent { recentSpent += 1 } else { recentExtents.remove(at: i) }
            }
            births.allocated(start, want)
            return start
        }
        for c in reusable.indices {
            guard let i = reusable[c].entries.firstIndex(where: { $0.count >= want }) else { continue }
            touchReusable(c)
            let start = reusable[c].entries[i].start
            reusable[c].entries[i].start += want
            reusable[c].entries[i].count -= want
            if reusable[c].entries[i].count == 0 {
                reusable[c].entries.remove(at: i)
                if reusable[c].entries.isEmpty && !keepEmptyChunks { reusable.remove(at: c) }
            }
            births.allocated(start, want)
            return start
        }
        let start = pageCount
        pageCount += want
        births.allocated(start, want)
        return start
    }

    /// Takes `n` neighbouring pages for the single-page allocations that follow, from a recent
    /// extent that holds that many. From the chunked run only for a commit of at least
    /// `runsFromChunksFrom` pages: its chunk page is rewritten, one page more in the commit, which
    /// saves a smaller commit too little (a random leaf's commit of four pages would write one
    /// every few commits); a larger one saves most of its write calls, and the separate writes
    /// its data sync waits on (scattered, they made an object store's small commits a third
    /// slower after a large delete), and its run comes back as one recent extent when a later
    /// commit rewrites it, so the chunk is touched once, not every commit. From the file's end only
    /// while the list holds fewer than `4 * n` free pages: a stream of small commits that began
    /// on scattered pages (each commit reuses the pages of the one two before it) otherwise
    /// keeps them scattered forever, one write call per page; two runs at the end break that
    /// cycle, after which each commit finds the run of the commit two before it free again.
    /// The bounds keep the file from growing for runs while it has room (each run it grows
    /// joins the free pages once rewritten, so growth for runs stops after a few) and for a
    /// large commit, whose pages are many calls' worth of data anyway (a churn of large
    /// commits would otherwise grow the file by a run each time).
    mutating func reserveRun(_ n: Int) {
        let want = UInt64(n)
        guard n > 1, runNext == runEnd else { return }
        if recentExtents.contains(where: { $0.count >= want })
            || (n >= FreeList.runsFromChunksFrom && reusable.contains { $0.entries.contains { $0.count >= want } })
        {
            runNext = allocate(n)
        } else if n <= FreeList.growsForRunsUpTo && !hasFreePages(atLeast: 4 * want) {
            runNext = pageCount
            pageCount += want
            births.allocated(runNext, want)
        } else {
            return
        }
        runEnd = runNext + want
    }

    /// Whether `recent` and `reusable` hold at least `n` pages (stops counting there).
    private func hasFreePages(atLeast n: UInt64) -> Bool {
        var sum: UInt64 = 0
        for e in recentExtents {
            sum += e.count
            if sum >= n { return true }
        }
        for c in reusable {
            for e in c.entries {
                sum += e.count
                if sum >= n { return true }
            }
        }
        return false
    }

    /// The largest run the file grows for (`reserveRun`): a small commit's pages.
    static let growsForRunsUpTo = 16
    /// The smallest run taken from the chunked run (`reserveRun`).
    static let runsFromChunksFrom = 6

    /// Gives back what the commit did not take of its run (still free: nothing was written
    /// there), before the list is stored.
    mutating func returnUnusedRun() {
        // The list is stored next and kept for the next commit: settled, `recent` is no copy.
        settleRecent()
        if runNext < runEnd { insertRecent(FreeExtent(start: runNext, count: runEnd - runNext, freedAt: 0)) }
        runNext = 0
        runEnd = 0
    }

    /// Records pages this version no longer reaches; they join `pending`, tagged `version`.
    mutating func free(start: UInt64, count: UInt64, at version: UInt64) {
        if pending.isEmpty || pending[pending.count - 1].entries.count >= chunkCapacity {
            pending.append(FreeChunk(entries: []))
        }
        let c = pending.count - 1
        touchPending(c)
        let born = births.born(start, count)
        if let last = pending[c].entries.last, last.freedAt == version, last.end == start {
            let k = pending[c].entries.count - 1
            pending[c].entries[k].count += count
            pending[c].entries[k].born = min(last.born, born)
        } else {
            pending[c].entries.append(FreeExtent(start: start, count: count, freedAt: version, born: born))
        }
    }

    /// A write transaction starts from the version this list's last commit made (`base`).
    mutating func commitStarted(after base: UInt64) { births.commitStarted(after: base) }

    /// Everything freed at or before `minLive` (the oldest version any reader or the latest
    /// commit still needs) becomes reusable. `minLive` never decreases: readers only pin the
    /// newest version. So does a later extent whose birth is known and whose versions
    /// (`born..<freedAt`) hold none of `pins` (the live pins older than the base, ascending).
    mutating func release(upTo minLive: UInt64, pins: [UInt64] = []) {
        var released: [FreeExtent] = []
        if !pins.isEmpty { releaseBetweenPins(pins, minLive: minLive, into: &released) }
        while let first = pending.first {
            let k = first.entries.prefix(while: { $0.freedAt <= minLive }).count
            if k == 0 && !first.entries.isEmpty { break }
            released += first.entries[0..<k]
            if k == first.entries.count {
                retire(first)
                pending.removeFirst()
            } else {
                touchPending(0)
                pending[0].entries.removeFirst(k)
                break
            }
        }
        for i in released.indices { released[i].freedAt = 0 }
        if released.count <= 8 {
            for e in released { insertRecent(e) }
        } else {
            released.sort { $0.start < $1.start }
            settleRecent()
            recentExtents = FreeList.merged(recentExtents, released)
        }
    }

    /// The pending extents past `minLive` that no pin can reach: those a commit wrote and a
    /// later one freed while no reader started in between. Only the last chunks are looked at:
    /// frees are appended, so extents with a known birth sit there, and a commit under an old
    /// pin then costs a few hundred comparisons, not a walk of everything that pin holds.
    private mutating func releaseBetweenPins(_ pins: [UInt64], minLive: UInt64, into released: inout [FreeExtent]) {
        func unreachable(_ e: FreeExtent) -> Bool {
            guard e.born != 0, e.freedAt > minLive else { return false }
            if BrokenVariant.on(.reuseBetweenPins) { return e.born > pins[0] }
            // The first pin at or after the birth must come at or after the free.
            let i = pins.partitionIndex { $0 >= e.born }
            return i == pins.count || pins[i] >= e.freedAt
        }
        let lowest = max(0, pending.count - FreeList.chunksSearchedForBirths)
        var c = pending.count - 1
        while c >= lowest {
            if pending[c].entries.contains(where: unreachable) {
                released += pending[c].entries.filter(unreachable)
                touchPending(c)
                pending[c].entries.removeAll(where: unreachable)
                if pending[c].entries.isEmpty { pending.remove(at: c) }
            }
            c -= 1
        }
    }

    /// How many of the last pending chunks `releaseBetweenPins` looks at.
    static let chunksSearchedForBirths = 4

    /// Moves `recent` into the chunked run (whose chunks it changes).
    mutating func spillRecent() {
        let r = recent
        recentExtents = []
        recentSpent = 0
        for e in r { insertReusable(e) }
    }

    /// Drops chunks left empty by the last commit's sizing step.
    mutating func dropEmptyChunks() {
        // Usually there are none: look first (no copy, no write) before rebuilding the arrays.
        if reusable.indices.contains(where: { reusable[$0].entries.isEmpty }) {
            for c in reusable where c.entries.isEmpty { retire(c) }
            reusable.removeAll { $0.entries.isEmpty }
        }
        if pending.indices.contains(where: { pending[$0].entries.isEmpty }) {
            for c in pending where c.entries.isEmpty { retire(c) }
            pending.removeAll { $0.entries.isEmpty }
        }
    }

    /// Merges small neighbours where one of them is being rewritten anyway.
    mutating func mergeSmallChunks() {
        FreeList.mergeSmall(&reusable, retired: &retired, below: mergeBelow)
        FreeList.mergeSmall(&pending, retired: &retired, below: mergeBelow)
    }

    // MARK: Reading

    var extents: [FreeExtent] { reusable.flatMap(\.entries) + recent + pending.flatMap(\.entries) }
    var chunks: [FreeChunk] { reusable + pending }
    var reusablePages: UInt64 {
        reusable.reduce(0) { $0 + $1.entries.reduce(0) { $0 + $1.count } } + recentExtents.reduce(0) { $0 + $1.count }
    }
    var pendingPages: UInt64 { pending.reduce(0) { $0 + $1.entries.reduce(0) { $0 + $1.count } } }
    var pendingExtentCount: Int {
        var n = 0
        for i in pending.indices { n += pending[i].entries.count }
        return n
    }
    var extentCount: Int {
        var n = recentExtents.count - recentSpent + pendingExtentCount
        for i in reusable.indices { n += reusable[i].entries.count }
        return n
    }
    /// Chunks of the run (or runs) that need a page at commit.
    func dirtyChunkCount(pendingIncluded: Bool) -> Int {
        FreeList.dirty(reusable) + (pendingIncluded ? FreeList.dirty(pending) : 0)
    }
    /// Chunks stored in pages of their own in the base version.
    var ownPageCount: Int { FreeList.owned(reusable) + FreeList.owned(pending) }
    var pendingOwnPageCount: Int { FreeList.owned(pending) }

    // Counting without concatenating the runs (each chunk holds an array).
    private static func dirty(_ run: [FreeChunk]) -> Int {
        var n = 0
        for i in run.indices where run[i].isDirty { n += 1 }
        return n
    }

    private static func owned(_ run: [FreeChunk]) -> Int {
        var n = 0
        for i in run.indices where run[i].ownPage != nil { n += 1 }
        return n
    }

    /// Gives each changed chunk the page it is stored in (by `assign`), in order, once the
    /// list is final for this commit; pending chunks only if `pendingInPages`.
    mutating func placeDirtyChunks(
        pendingInPages: Bool, _ assign: (_ chunk: FreeChunk, _ isPending: Bool) throws -> UInt64
    ) rethrows {
        for c in reusable.indices where reusable[c].isDirty { reusable[c].page = try assign(reusable[c], false) }
        guard pendingInPages else { return }
        for c in pending.indices where pending[c].isDirty { pending[c].page = try assign(pending[c], true) }
    }

    /// Makes every reusable extent recent: the chunk pages of `reusable` go to `retired` (freed
    /// at commit, as the base version still reads them).
    mutating func foldIntoRecent() {
        guard !reusable.isEmpty else { return }
        for c in reusable { retire(c) }
        settleRecent()
        recentExtents = FreeList.merged(reusable.flatMap(\.entries), recentExtents)
        reusable = []
    }

    /// Two start-ordered runs of extents as one, adjacent extents merged.
    private static func merged(_ a: [FreeExtent], _ b: [FreeExtent]) -> [FreeExtent] {
        var out: [FreeExtent] = []
        out.reserveCapacity(a.count + b.count)
        var i = 0, j = 0
        while i < a.count || j < b.count {
            let e: FreeExtent
            if j == b.count || (i < a.count && a[i].start < b[j].start) { e = a[i]; i += 1 } else { e = b[j]; j += 1 }
            if let last = out.last, last.end == e.start { out[out.count - 1].count += e.count } else { out.append(e) }
        }
        return out
    }

    /// Makes the pending run one chunk stored in the top node (as decoding that top node gives
    /// it back); the pages its chunks had go to `retired`. Only for a run that fits one chunk.
    mutating func movePendingToTopNode() {
        if pending.count == 1 {
            retire(pending[0])
            pending[0].page = FreeChunk.inTopNode
            return
        }
        for c in pending { retire(c) }
        let q = pending.flatMap(\.entries)
        pending = q.isEmpty ? [] : [FreeChunk(entries: q, page: FreeChunk.inTopNode)]
    }

    // MARK: Internals

    /// Marks a chunk changed: its page goes to `retired`, and it is written anew at commit.
    private mutating func touchReusable(_ c: Int) {
        if reusable[c].page != 0 {
            retire(reusable[c])
            reusable[c].page = 0
        }
    }

    private mutating func touchPending(_ c: Int) {
        if pending[c].page != 0 {
            retire(pending[c])
            pending[c].page = 0
        }
    }

    private mutating func retire(_ chunk: FreeChunk) {
        if let p = chunk.ownPage { retired.append(p) }
    }

    /// Inserts into `recent`, merging with the extents either side.
    private mutating func insertRecent(_ e: FreeExtent) {
        settleRecent()
        let i = recentExtents.partitionIndex { $0.start > e.start }
        let joinsBefore = i > 0 && recentExtents[i - 1].end == e.start
        let joinsAfter = i < recentExtents.count && e.end == recentExtents[i].start
        switch (joinsBefore, joinsAfter) {
        case (true, true):
            recentExtents[i - 1].count += e.count + recentExtents[i].count
            recentExtents.remove(at: i)
        case (true, false): recentExtents[i - 1].count += e.count
        case (false, true):
            recentExtents[i].start = e.start
            recentExtents[i].count += e.count
        case (false, false): recentExtents.insert(e, at: i)
        }
    }

    /// Drops the extents allocations used up (`recentSpent`), in one move.
    private mutating func settleRecent() {
        guard recentSpent > 0 else { return }
        recentExtents.removeFirst(recentSpent)
        recentSpent = 0
    }

    /// Inserts into the start-ordered reusable run, merging with the extents either side.
    private mutating func insertReusable(_ e: FreeExtent) {
        if reusable.isEmpty {
            reusable.append(FreeChunk(entries: [e]))
            return
        }
        // The last chunk whose first extent starts at or before e (else the first chunk).
        var lo = 0, hi = reusable.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if (reusable[mid].entries.first?.start ?? 0) <= e.start { lo = mid + 1 } else { hi = mid }
        }
        let c = max(lo - 1, 0)
        let i = reusable[c].entries.partitionIndex { $0.start > e.start }
        // The neighbours: (chunk, index) before and after the insertion point.
        let before: (Int, Int)? =
            i > 0
            ? (c, i - 1)
            : (c > 0 && !reusable[c - 1].entries.isEmpty ? (c - 1, reusable[c - 1].entries.count - 1) : nil)
        let after: (Int, Int)? =
            i < reusable[c].entries.count
            ? (c, i) : (c + 1 < reusable.count && !reusable[c + 1].entries.isEmpty ? (c + 1, 0) : nil)
        let joinsBefore = before.map { reusable[$0.0].entries[$0.1].end == e.start } ?? false
        let joinsAfter = after.map { e.end == reusable[$0.0].entries[$0.1].start } ?? false
        switch (joinsBefore, joinsAfter) {
        case (true, true):
            let (bc, bi) = before!, (ac, ai) = after!
            let absorbed = reusable[ac].entries[ai].count
            touchReusable(bc)
            reusable[bc].entries[bi].count += e.count + absorbed
            touchReusable(ac)
            reusable[ac].entries.remove(at: ai)
            if reusable[ac].entries.isEmpty {
                reusable.remove(at: ac)
            }
        case (true, false):
            let (bc, bi) = before!
            touchReusable(bc)
            reusable[bc].entries[bi].count += e.count
        case (false, true):
            let (ac, ai) = after!
            touchReusable(ac)
            reusable[ac].entries[ai].start = e.start
            reusable[ac].entries[ai].count += e.count
        case (false, false):
            touchReusable(c)
            reusable[c].entries.insert(e, at: i)
            if reusable[c].entries.count > chunkCapacity {
                let half = reusable[c].entries.count / 2
                let right = FreeChunk(entries: Array(reusable[c].entries[half...]))
                reusable[c].entries.removeSubrange(half...)
                reusable.insert(right, at: c + 1)
            }
        }
    }

    private static func mergeSmall(_ run: inout [FreeChunk], retired: inout [UInt64], below mergeBelow: Int) {
        var c = 0
        while c + 1 < run.count {
            let a = run[c], b = run[c + 1]
            if (a.isDirty || b.isDirty) && a.entries.count + b.entries.count <= mergeBelow {
                if let p = a.ownPage { retired.append(p) }
                if let p = b.ownPage { retired.append(p) }
                run[c] = FreeChunk(entries: a.entries + b.entries)
                run.remove(at: c + 1)
            } else {
                c += 1
            }
        }
    }
}

extension Array {
    /// The first index whose element satisfies `isAbove`, for a predicate false then true
    /// along the array.
    func partitionIndex(_ isAbove: (Element) -> Bool) -> Int {
        var lo = 0, hi = count
        while lo < hi {
            let mid = (lo + hi) / 2
            if isAbove(self[mid]) { hi = mid } else { lo = mid + 1 }
        }
        return lo
    }
}
