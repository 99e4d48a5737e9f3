/// The free list as this handle's last commit left it, so the next write transaction starts
/// from memory instead of decoding every chunk. Valid only while that commit's version is
/// still the newest of the same file: any other writer (handle or process) commits a new
/// version, and `compact` swaps the file, and either makes the key stop matching.
/// Touched only by the writer (under the writer lock), so it needs no lock of its own.
final class FreeListCache: @unchecked Sendable {
    private var key: (fileID: String, slot: TopSlot)?
    private var list: FreeList?
    private var nodes: WrittenNodes?

    /// The list stored by the version `slot` names, if this handle committed it last.
    func list(fileID: String, slot: TopSlot) -> FreeList? {
        guard let key, key.fileID == fileID, key.slot == slot else { return nil }
        return list
    }

    /// As `list`, but handed over: the cache keeps no copy, so the transaction changes the
    /// list's arrays in place instead of copying them on its first change. A transaction that
    /// rolls back leaves no list behind (the next one decodes it from the file).
    func takeList(fileID: String, slot: TopSlot) -> FreeList? {
        guard let key, key.fileID == fileID, key.slot == slot else { return nil }
        defer { list = nil }
        return list
    }

    /// The nodes that commit wrote (see `WrittenNodes`), under the same condition.
    func nodes(fileID: String, slot: TopSlot) -> WrittenNodes? {
        guard let key, key.fileID == fileID, key.slot == slot else { return nil }
        return nodes
    }

    func store(_ list: FreeList, nodes: WrittenNodes? = nil, fileID: String, slot: TopSlot) {
        key = (fileID, slot)
        self.list = list
        self.nodes = nodes
    }

    func clear() {
        key = nil
        list = nil
        nodes = nil
    }
}

/// The tree nodes the handle's last commit wrote, as its writer held them in memory (keyed by
/// the ref each was written to), so the next write transaction that starts from that very
/// version takes a node from here instead of copying its page out of the file: no checksum
/// to verify, no copy. Kept with the free list in `FreeListCache`, under the same key and
/// rules (I18): only for the version this handle committed itself, on the same file. Such a
/// node is exactly the bytes of its page — the page is live in that version, so nothing has
/// written it since (I1) — and, being the writer's own memory, storage damage to the page
/// cannot reach the next version through it (the damaged page is replaced, not copied; a
/// reader with `verifyChecksums` or `check()` still finds the damage while the page is live).
/// A transaction takes the nodes it changes out of the set, so one that rolls back leaves
/// the rest valid for the next.
final class WrittenNodes {
    /// Few (a small commit writes one node per tree level): a list searched linearly costs
    /// less than hashing.
    @exclusivity(unchecked) private var entries: [(ref: UInt64, node: DirtyNode)] = []
    /// Bounds the memory kept between commits: a large commit keeps only this many nodes
    /// (those written first; any subset is as good as the whole).
    static let limit = 64

    var count: Int { entries.count }

    func record(_ ref: UInt64, _ n: DirtyNode) {
        if entries.count < WrittenNodes.limit { entries.append((ref, n)) }
    }

    /// Once the commit is published: every recorded node becomes what decoding its page
    /// would give (children as refs).
    func settle() { for e in entries { e.node.settleAfterWrite() } }

    /// The node written to `ref`, removed from the set (the caller is about to change it).
    func take(_ ref: UInt64) -> DirtyNode? {
        guard let i = entries.firstIndex(where: { $0.ref == ref }) else { return nil }
        entries.swapAt(i, entries.count - 1)
        return entries.removeLast().node
    }
}
