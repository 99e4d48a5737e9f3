/// How a free list is stored: as extents in the top node itself while it is small (format 4
/// and later); else as chunk pages of extents, listed in order in the top node (see `Meta`) or,
/// when there are more than it holds, by a chain of root pages it names. Beside chunk pages,
/// the top node still holds the recent extents and, while it fits, the pending run: the parts
/// every small commit changes, so such a commit writes no free-list page.
///
/// Root page (kind free-list): header count = chunk refs in this page, extra = the next root
/// page's ref (0: last); then the refs, u64 each. Reusable chunks come first, then pending.
/// Chunk page (kind free-list-chunk): header count = extents, extra = 0 reusable, 1 pending;
/// then (start u64, count u64, freedAt u64) per extent.
///
/// A commit rewrites the chunks it changed (and the root chain, a page per 508 chunks, if
/// any), never the whole list, and checksums only what it writes.
enum FreeListStorage {
    static func refsPerRootPage(_ g: PageGeometry) -> Int { FreeListPages.refsPerRootPage(g) }

    /// Root pages for `chunks` chunk refs when the top node has room for `inlineRefs`.
    static func rootPagesNeeded(chunks: Int, inlineRefs: Int, _ g: PageGeometry) -> Int {
        let perPage = refsPerRootPage(g)
        return chunks <= inlineRefs ? 0 : (chunks + perPage - 1) / perPage
    }

    /// Where a commit put the list: the first root page, the chunk refs for the top node, or
    /// the extents themselves for the top node.
    struct Placement {
        var rootRef: UInt64 = 0
        var inlineChunks: [UInt64] = []
        var inlineExtents: [FreeExtent] = []
    }

    // MARK: Reading

    static func decode(_ meta: Meta, pages: PageSource) throws -> FreeList {
        let pageCount = meta.pageCount
        let rootRef = meta.freeListRef
        let ps = UInt64(Layout.pageSize)
        let g = pages.geometry
        var rootPages: [UInt64] = []
        var chunkRefs: [UInt64] = meta.freeListChunks
        var ref = rootRef
        while ref != 0 {
            guard rootPages.count < pageCount else {
                throw CorruptNode(ref: rootRef, detail: "free-list root chain loops")
            }
            let p = try pages.page(ref)
            guard PageHeader.checksumMatches(p.raw, ref: ref) else {
                throw CorruptNode(ref: ref, detail: "free-list root checksum mismatch")
            }
            try p.expect(.freeList)
            guard p.span == 1, p.count <= refsPerRootPage(g) else {
                throw CorruptNode(ref: ref, detail: "free-list root claims \(p.count) chunks in \(p.span) pages")
            }
            rootPages.append(ref / ps)
            for i in 0..<p.count { chunkRefs.append(p.raw.u64(FreeListPages.rootRef(i))) }
            ref = p.extra
        }
        var order = ExtentOrder(pageCount: pageCount)
        var reusable: [FreeChunk] = []
        var pending: [FreeChunk] = []
        for r in chunkRefs {
            let p = try pages.page(r)
            guard PageHeader.checksumMatches(p.raw, ref: r) else {
                throw CorruptNode(ref: r, detail: "free-list chunk checksum mismatch")
            }
            try p.expect(.freeListChunk)
            let n = p.count
            guard p.span == 1, n <= FreeChunk.capacity(g), p.extra <= 1 else {
                throw CorruptNode(ref: r, detail: "free-list chunk claims \(n) extents, class \(p.extra)")
            }
            let isPending = p.extra == 1
            guard isPending || pending.isEmpty else {
                throw CorruptNode(ref: r, detail: "reusable free-list chunk after a pending one")
            }
            var entries: [FreeExtent] = []
            entries.reserveCapacity(n)
            for i in 0..<n {
                let e = FreeExtent.decode(p.raw, at: FreeListPages.chunkEntry(i))
                try order.check(e, pending: isPending, ref: r)
                entries.append(e)
            }
            let chunk = FreeChunk(entries: entries, page: r / ps)
            if isPending { pending.append(chunk) } else { reusable.append(chunk) }
        }
        // In the top node: the recent extents (their own start order), then the pending run's
        // last chunk, after any stored in pages.
        let split = meta.freeExtents.firstIndex { $0.freedAt != 0 } ?? meta.freeExtents.count
        let recent = Array(meta.freeExtents[..<split]), tail = Array(meta.freeExtents[split...])
        var recentOrder = ExtentOrder(pageCount: pageCount)
        for e in recent { try recentOrder.check(e, pending: false, ref: 0) }
        for e in tail { try order.check(e, pending: true, ref: 0) }
        if !tail.isEmpty { pending.append(FreeChunk(entries: tail, page: FreeChunk.inTopNode)) }
        return FreeList(
            reusable: reusable, recent: recent, pending: pending, pageCount: pageCount, rootPages: rootPages,
            geometry: g)
    }

    /// The rules every stored extent keeps, in list order: inside the file; reusable ones by
    /// start without overlap, then pending ones by tag.
    private struct ExtentOrder {
        let pageCount: UInt64
        var lastReusableEnd: UInt64 = 0
        var lastTag: UInt64 = 0
        var seenPending = false

        init(pageCount: UInt64) { self.pageCount = pageCount }

        mutating func check(_ e: FreeExtent, pending: Bool, ref: UInt64) throws {
            guard e.start >= 1, e.count >= 1, e.start < pageCount, e.count <= pageCount - e.start else {
                throw CorruptNode(
                    ref: ref, detail: "free extent \(e.start)+\(e.count) outside the file's \(pageCount) pages")
            }
            if pending {
                guard e.freedAt != 0, e.freedAt >= lastTag else {
                    throw CorruptNode(ref: ref, detail: "pending free extent at page \(e.start) out of tag order")
                }
                lastTag = e.freedAt
                seenPending = true
            } else {
                guard !seenPending else {
                    throw CorruptNode(ref: ref, detail: "reusable free extent after a pending one")
                }
                guard e.freedAt == 0, e.start >= lastReusableEnd else {
                    throw CorruptNode(ref: ref, detail: "reusable free extent at page \(e.start) out of order")
                }
                lastReusableEnd = e.end
            }
        }
    }

    // MARK: Writing

    /// Stores the list as of this commit. With `room` (the top node's bytes for chunk refs and
    /// extents, format 4 and later) the top node holds the whole list while it fits; else
    /// `recent`, and the pending run while it fits, with the rest in chunk pages. Without,
    /// everything is in chunk pages.
    static func save(_ list: inout FreeList, version: UInt64, room inlineRoom: Int?, _ out: inout PageWriter) throws
        -> Placement
    {
        let g = out.geometry
        let room = inlineRoom ?? g.pageBytes - Meta.inlineOffset, es = FreeExtent.size
        list.dropEmptyChunks()
        list.mergeSmallChunks()
        list.keepEmptyChunks = true
        defer { list.keepEmptyChunks = false }
        for p in list.rootPages { list.free(start: p, count: 1, at: version) }
        list.rootPages = []
        guard inlineRoom != nil else {
            list.spillRecent()
            return try saveInPages(&list, version: version, pendingInline: false, inlineRefs: room / 8, &out)
        }
        if let placed = placeAllInTopNode(&list, version: version, room: room) { return placed }

        // Recent stays in the top node while it is small (a commit's worth of released pages,
        // leaving the room to the pending run, which a pinned reader makes grow) and the refs
        // of every chunk (one more if a pending one is added) fit beside it.
        let chunkCount = list.reusable.count + list.pending.count
        if list.recent.count > room / es / 4 || es * list.recent.count + 8 * (chunkCount + 1) > room {
            list.spillRecent()
        }
        // The pending run joins it if it fits even after every page this commit may free:
        // its chunks' own pages, those retired, and one per reusable chunk changed by taking
        // pages for the list. Each free adds at most one extent.
        let pendingBound =
            list.pendingExtentCount + list.retired.count + list.pendingOwnPageCount + list.reusable.count + 1
        let pendingInline = es * (list.recent.count + pendingBound) + 8 * (list.reusable.count + 1) <= room
        if pendingInline { list.movePendingToTopNode() }
        let inlineRefs = (room - es * (list.recent.count + (pendingInline ? pendingBound : 0))) / 8
        return try saveInPages(&list, version: version, pendingInline: pendingInline, inlineRefs: inlineRefs, &out)
    }

    /// The chunks that need pages, and the root chain if their refs pass `inlineRefs`.
    ///
    /// The list's own storage comes out of the list: taking pages may change more chunks
    /// (which then need pages too) and frees the old pages of chunks it changes. So pages are
    /// taken until there are as many as changed chunks plus root pages; that number never
    /// shrinks while this runs (emptied chunks are kept), so nothing taken goes unused.
    private static func saveInPages(
        _ list: inout FreeList, version: UInt64, pendingInline: Bool, inlineRefs: Int, _ out: inout PageWriter
    ) throws -> Placement {
        let g = out.geometry
        var taken: [UInt64] = []
        while true {
            while !list.retired.isEmpty {
                let r = list.retired
                list.retired = []
                for p in r { list.free(start: p, count: 1, at: version) }
            }
            let chunkCount = list.reusable.count + (pendingInline ? 0 : list.pending.count)
            let needed =
                list.dirtyChunkCount(pendingIncluded: !pendingInline)
                + rootPagesNeeded(chunks: chunkCount, inlineRefs: inlineRefs, g)
            if taken.count >= needed { break }
            while taken.count < needed { taken.append(list.allocate(1)) }
        }
        if pendingInline {
            // Freeing changed the pending run's chunk: it is still the top node's.
            list.movePendingToTopNode()
            assert(list.retired.isEmpty && list.pending.count <= 1, "pending run outgrew the top node")
        }
        taken.sort()
        var next = 0
        var chunkImages: [(page: UInt64, chunk: FreeChunk, pending: Bool)] = []
        list.placeDirtyChunks(pendingInPages: !pendingInline) { chunk, isPending in
            let page = taken[next]
            next += 1
            chunkImages.append((page, chunk, isPending))
            return page
        }
        let chunkPages = list.reusable.map(\.page) + (pendingInline ? [] : list.pending.map(\.page))
        let roots = Array(taken[next...])
        assert(
            roots.count == rootPagesNeeded(chunks: chunkPages.count, inlineRefs: inlineRefs, g),
            "free-list storage sized wrong")
        let ps = UInt64(Layout.pageSize)
        let perRoot = refsPerRootPage(g)
        for (i, root) in roots.enumerated() {
            let lo = i * perRoot
            let refs = chunkPages[lo..<min(lo + perRoot, chunkPages.count)].map { $0 * ps }
            let nextRef = i + 1 < roots.count ? roots[i + 1] * ps : 0
            let placed = out.placement(root)
            try out.add(page: root, nodeBytes: g.pageBytes, zeroed: true) {
                encodeRoot(refs, next: nextRef, version: version, into: $0, placedAt: placed)
            }
        }
        list.rootPages = roots
        for c in chunkImages {
            let placed = out.placement(c.page)
            try out.add(page: c.page, nodeBytes: g.pageBytes, zeroed: true) {
                encodeChunk(c.chunk, pending: c.pending, version: version, into: $0, placedAt: placed)
            }
        }
        var placed =
            roots.isEmpty ? Placement(inlineChunks: chunkPages.map { $0 * ps }) : Placement(rootRef: roots[0] * ps)
        placed.inlineExtents = list.recent + (pendingInline ? list.pending.flatMap(\.entries) : [])
        return placed
    }

    /// The whole list into the top node, if it will fit there once every page it leaves (chunk
    /// pages, and those retired before) is freed: each free adds at most one extent.
    private static func placeAllInTopNode(_ list: inout FreeList, version: UInt64, room: Int) -> Placement? {
        let capacity = room / FreeExtent.size
        guard list.reusable.count + list.pending.count <= capacity,
            list.extentCount + list.retired.count + list.ownPageCount <= capacity
        else { return nil }
        list.foldIntoRecent()
        list.movePendingToTopNode()
        let r = list.retired
        list.retired = []
        for p in r where !BrokenVariant.on(.inlineListLeak) { list.free(start: p, count: 1, at: version) }
        // Freeing changed the pending run's chunk (or added one): it is in the top node too.
        list.movePendingToTopNode()
        assert(list.retired.isEmpty && list.extentCount <= capacity, "free list outgrew the top node")
        return Placement(inlineExtents: list.recent + list.pending.flatMap(\.entries))
    }

    /// Into a zeroed page.
    static func encodeChunk(
        _ chunk: FreeChunk, pending: Bool, version: UInt64, into p: UnsafeMutableRawBufferPointer, placedAt ref: UInt64?
    ) {
        PageHeader.fill(
            p, kind: .freeListChunk, count: chunk.entries.count, span: 1, version: version, extra: pending ? 1 : 0)
        chunk.entries.withUnsafeBufferPointer { entries in
            for (i, e) in entries.enumerated() { e.encode(into: p, at: FreeListPages.chunkEntry(i)) }
        }
        PageHeader.seal(p, placedAt: ref)
    }

    /// Into a zeroed page.
    static func encodeRoot(
        _ refs: [UInt64], next: UInt64, version: UInt64, into p: UnsafeMutableRawBufferPointer, placedAt ref: UInt64?
    ) {
        PageHeader.fill(p, kind: .freeList, count: refs.count, span: 1, version: version, extra: next)
        for (i, r) in refs.enumerated() { p.setU64(r, at: FreeListPages.rootRef(i)) }
        PageHeader.seal(p, placedAt: ref)
    }
}
