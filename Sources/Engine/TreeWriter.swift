/// Copy-on-write changes to B+trees within one write transaction. A node of the base version
/// is copied into memory the first time the writer touches it, and its page is recorded as
/// freed by this version; nothing is written to the file until commit.
final class TreeWriter {
    let pages: PageSource
    /// Extents (first page number, page count) of the base version this transaction no longer
    /// reaches.
    @exclusivity(unchecked) private(set) var freed: [(start: UInt64, count: UInt64)] = []

    /// The pages it builds: the base version's, except when a copy changes encryption.
    let geometry: PageGeometry

    /// Nodes the handle's previous commit wrote, taken instead of decoding their pages
    /// (a write transaction whose base that commit is; see `WrittenNodes`).
    @exclusivity(unchecked) var reuse: WrittenNodes?

    init(pages: PageSource, geometry: PageGeometry? = nil) {
        self.pages = pages
        self.geometry = geometry ?? pages.geometry
        path = .allocate(capacity: Tree.maxDepth)
    }

    deinit { path.deallocate() }

    func free(ref: UInt64, pages count: Int) {
        freed.append((ref / UInt64(Layout.pageSize), UInt64(count)))
    }

    private func freeValue(_ v: StoredValue) throws {
        if case .overflow(let r, _) = v {
            free(ref: r, pages: try pages.page(r).span)
        }
    }

    func materialize(_ c: inout Child) throws -> DirtyNode {
        switch c {
        case .dirty(let n): return n
        case .page(let ref):
            let n = try reuse?.take(ref) ?? DirtyNode.decode(try pages.page(ref), pageBytes: geometry.pageBytes)
            #if FIEF_BROKEN_VARIANTS
                n.origin = ref
            #endif
            // An embedded catalog leaf has no page of its own: its top node's is freed whole.
            if !BrokenVariant.on(.overwriteInPlace) && ref % UInt64(Layout.pageSize) == 0 { free(ref: ref, pages: 1) }
            c = .dirty(n)
            return n
        }
    }

    /// Inserts or replaces. Returns true when the key is new.
    func put(_ root: inout Child?, key: [UInt8], value: LeafValue) throws -> Bool {
        try key.withUnsafeBytes { try put(&root, key: $0, value: value) }
    }

    /// As `put`, with the key lent (an int64 key built on the caller's stack needs no array).
    func put(_ root: inout Child?, key: UnsafeRawBufferPointer, value: LeafValue) throws -> Bool {
        guard root != nil else {
            let leaf = DirtyNode(isLeaf: true, pageBytes: geometry.pageBytes)
            leaf.insertLeaf(at: 0, key: key, value: value)
            root = .dirty(leaf)
            return true
        }
        return try insert(into: &root, key: key, value: value, appending: false)
    }

    /// Inserts below `root` (not nil), changed in place, with a new root above a split.
    private func insert(
        into root: inout Child?, key: UnsafeRawBufferPointer, value: LeafValue, appending: Bool
    ) throws -> Bool {
        let (inserted, split) = try insert(&root!, key: key, value: value, appending: appending)
        if let right = split, let left = root {
            let top = DirtyNode(isLeaf: false, pageBytes: geometry.pageBytes)
            top.insertBranch(at: 0, key: UnsafeRawBufferPointer(start: nil, count: 0), child: left)
            top.insertBranch(at: 1, key: right.key(0), child: .dirty(right))
            root = .dirty(top)
        }
        return inserted
    }

    /// The branches of the descent under way and the child taken in each, root first (one slot
    /// a level, `Tree.maxDepth` of them). Unretained: the tree holds the nodes, and nothing
    /// leaves it before the insert returns.
    private let path: UnsafeMutablePointer<(node: Unmanaged<DirtyNode>, index: Int)>

    /// `appending`: the key goes after every key, so no node is searched; the leaf reached
    /// refuses it (returning false, splitting nothing) unless it is above the leaf's last key.
    /// One loop down to the leaf, copying each node out of its page; only a split walks back up
    /// (most inserts return from the leaf). Returns whether the key is new, and the right half
    /// of the root when it split.
    private func insert(_ r: inout Child, key: UnsafeRawBufferPointer, value: LeafValue, appending: Bool)
        throws -> (Bool, DirtyNode?)
    {
        var depth = 0
        var node = Unmanaged.passUnretained(try materialize(&r))
        while let next = try node._withUnsafeGuaranteedRef({ n -> Unmanaged<DirtyNode>? in
            guard !n.isLeaf else { return nil }
            guard depth < Tree.maxDepth else { throw CorruptNode(ref: 0, detail: "tree too deep") }
            let i = appending ? n.children.count - 1 : n.childIndex(key)
            path[depth] = (node, i)
            if case .dirty(let child) = n.children[i] { return Unmanaged.passUnretained(child) }
            return Unmanaged.passUnretained(try materialize(&n.children[i]))
        }) {
            node = next
            depth += 1
        }
        return try node._withUnsafeGuaranteedRef { leaf in
            if appending, leaf.count > 0, compareBytes(key, leaf.key(leaf.count - 1)) <= 0 { return (false, nil) }
            let (i, found) = appending ? (leaf.count, false) : leaf.search(key)
            if found {
                try freeValue(leaf.value(i))
                leaf.setValue(at: i, value)
            } else {
                leaf.insertLeaf(at: i, key: key, value: value)
            }
            guard leaf.overflows else { return (!found, nil) }
            let splitAppends = !found && i == leaf.count - 1
            // A load in key order packs its leaves by splitting at the end: no shifting there.
            var right: DirtyNode?
            if depth > 0 && !appending {
                let parent = path[depth - 1]
                right = shiftOrSplit(parent.node.takeUnretainedValue(), at: parent.index, splitAppends: splitAppends)
            } else {
                right = leaf.split(appending: splitAppends)
            }
            // Every branch up the path: a shift's new separator can overflow the parent as
            // surely as a split's new cell, and a split may climb to the root.
            while depth > 0 {
                depth -= 1
                let (unmanaged, i) = path[depth]
                let parent = unmanaged.takeUnretainedValue()
                if let split = right { parent.insertBranch(at: i + 1, key: split.key(0), child: .dirty(split)) }
                right = parent.overflows ? parent.split(appending: i + 1 == parent.count - 1) : nil
            }
            return (!found, right)
        }
    }

    /// Evens out overfull leaf `i` of `parent` with a neighbour this write already holds (left
    /// first, then right), moving the separator between them; else splits it and returns the
    /// right half. A neighbour still on its page is not copied for this: that would write a
    /// page more.
    private func shiftOrSplit(_ parent: DirtyNode, at i: Int, splitAppends: Bool) -> DirtyNode? {
        guard case .dirty(let leaf) = parent.children[i] else { preconditionFailure("overfull leaf not in memory") }
        if i > 0, case .dirty(let left) = parent.children[i - 1], leaf.shiftCells(to: left, left: true) {
            parent.setBranchKey(at: i, leaf.key(0))
            return nil
        }
        if i + 1 < parent.children.count, case .dirty(let right) = parent.children[i + 1],
            leaf.shiftCells(to: right, left: false)
        {
            parent.setBranchKey(at: i + 1, right.key(0))
            return nil
        }
        return leaf.split(appending: splitAppends)
    }

    /// The leaf cell of `key` in a node this write owns: the path to it is copied out of its
    /// pages as `put` copies it, but only once the key is known to be there (an absent key
    /// copies nothing). The one descent of an in-place value change (`mutateValue`).
    func ownedLeafCell(_ root: inout Child?, key: UnsafeRawBufferPointer) throws -> (node: DirtyNode, index: Int)? {
        guard var r = root else { return nil }
        if let owned = TreeWriter.ownedPathCell(r, key: key) { return owned.found ? (owned.node, owned.index) : nil }
        var hit: (node: DirtyNode, index: Int)?
        guard try descendOwning(&r, key: key, depth: 0, atCell: { hit = ($0, $1) }, upward: { _, _ in }) else {
            return nil
        }
        root = r
        return hit
    }

    /// Where `key` is (or would be) in its leaf when the whole path to it is owned already: a
    /// loop down the nodes (`DirtyNode.descend`), where the recursive descent with its
    /// closures cost four times as much for a change to a leaf this write has changed before
    /// (most of a run of updates). Nil when the path meets a page.
    private static func ownedPathCell(_ root: Child, key: UnsafeRawBufferPointer) -> (
        node: DirtyNode, index: Int, found: Bool
    )? {
        guard case .dirty(let top) = root,
            case .leaf(let leaf, let i, let found)? = DirtyNode.descend(from: top, key: key, levels: Tree.maxDepth)
        else { return nil }
        return (leaf.takeUnretainedValue(), i, found)
    }

    /// Adds `key` after every key of the tree (`MDB_APPEND`): the right edge is followed with
    /// no search and a full leaf splits at its end, so a load in key order packs its leaves.
    /// Returns false, adding nothing, unless `key` is above the last key of the tree's last
    /// leaf, which the descent checks when it gets there: the right edge may then have been
    /// copied out of its pages (the caller marks the tree changed either way). A separate
    /// descent to the last key first cost each appended key a third of its instructions.
    func append(_ root: inout Child?, key: UnsafeRawBufferPointer, value: LeafValue) throws -> Bool {
        guard root != nil else { return try put(&root, key: key, value: value) }
        return try insert(into: &root, key: key, value: value, appending: true)
    }

    /// Removes `key` in one descent. Returns false (and copies nothing) when it is absent.
    func delete(_ root: inout Child?, key: [UInt8]) throws -> Bool {
        guard var r = root else { return false }
        let removed = try key.withUnsafeBytes { k in
            try descendOwning(
                &r, key: k, depth: 0,
                atCell: { node, i in
                    try freeValue(node.value(i))
                    node.remove(at: i)
                }, upward: { parent, i in try rebalance(parent, at: i) })
        }
        guard removed else { return false }
        // Shrink the root: an empty tree has no root; a branch with one child is that child.
        while case .dirty(let n) = r {
            if n.count == 0 { root = nil; return true }
            if !n.isLeaf && n.children.count == 1 { r = n.children[0]; continue }
            break
        }
        root = r
        return true
    }

    /// Finds `key`'s leaf cell and runs `atCell` on it in a node this write owns, then
    /// `upward` on each branch on the way back (with the index of the child taken). A node
    /// still on its page is searched there first and copied only once the key is known to be
    /// below it. Returns false, having run nothing and copied nothing, when `key` is absent.
    private func descendOwning(
        _ c: inout Child, key: UnsafeRawBufferPointer, depth: Int,
        atCell: (DirtyNode, Int) throws -> Void, upward: (DirtyNode, Int) throws -> Void
    ) throws -> Bool {
        guard depth < Tree.maxDepth else { throw CorruptNode(ref: 0, detail: "tree too deep") }
        if case .page(let ref) = c {
            let p = try pages.page(ref)
            switch p.kindByte {
            case PageKind.leaf.rawValue:
                guard try p.leafSearch(key).found else { return false }
            case PageKind.branch.rawValue:
                let i = try p.childIndex(key)
                var child = Child.page(try p.branchChild(i))
                guard try descendOwning(&child, key: key, depth: depth + 1, atCell: atCell, upward: upward) else {
                    return false
                }
                let node = try materialize(&c)
                node.children[i] = child
                try upward(node, i)
                return true
            default:
                throw p.notATreeNode()
            }
        }
        let node = try materialize(&c)
        if node.isLeaf {
            let (i, found) = node.search(key)
            guard found else { return false }
            try atCell(node, i)
            return true
        }
        let i = node.childIndex(key)
        guard try descendOwning(&node.children[i], key: key, depth: depth + 1, atCell: atCell, upward: upward) else {
            return false
        }
        try upward(node, i)
        return true
    }

    /// After a removal below `parent.children[i]`: drop the child if empty, or merge it with a
    /// sibling when it is under a quarter full and both fit in one node.
    private func rebalance(_ parent: DirtyNode, at i: Int) throws {
        guard case .dirty(let child) = parent.children[i] else { return }
        if child.count == 0 {
            parent.remove(at: i)
            return
        }
        guard child.size < geometry.nodeCapacity / 4, parent.children.count > 1 else { return }
        let l = i > 0 ? i - 1 : i
        let r = l + 1
        guard
            try approximateSize(parent.children[l]) + approximateSize(parent.children[r]) + 64 <= geometry.nodeCapacity
        else { return }
        let left = try materialize(&parent.children[l])
        let right = try materialize(&parent.children[r])
        // A branch's key 0 is only a lower bound; merged, it needs the real separator.
        if !right.isLeaf { right.setBranchKey(at: 0, parent.key(r)) }
        guard left.size + right.size <= geometry.nodeCapacity else { return }
        left.append(contentsOf: right)
        parent.remove(at: r)
    }

    private func approximateSize(_ c: Child) throws -> Int {
        switch c {
        case .dirty(let n): return n.size
        case .page(let ref):
            let p = try pages.page(ref)
            let n = p.count
            guard n > 0 else { return 0 }
            // Cells are packed from the page end, the last cell lowest.
            let lowest = CellOffsets.offset(p.raw, n - 1)
            return Layout.pageSize - min(lowest, Layout.pageSize) + 2 * n
        }
    }

    /// Frees every page of a tree (for a dropped table).
    func freeAll(_ root: Child?) throws {
        guard let root else { return }
        try freeSubtree(root, depth: 0)
    }

    private func freeSubtree(_ c: Child, depth: Int) throws {
        guard depth < Tree.maxDepth else { throw CorruptNode(ref: 0, detail: "tree too deep") }
        switch c {
        case .dirty(let n):
            if n.isLeaf {
                for i in 0..<n.count { try freeValue(n.value(i)) }
            } else {
                for ch in n.children { try freeSubtree(ch, depth: depth + 1) }
            }
        case .page(let ref):
            let p = try pages.page(ref)
            free(ref: ref, pages: 1)
            switch try p.kind() {
            case .leaf:
                for i in 0..<p.count {
                    if case .overflow(let r, _) = try p.leafValue(i) { free(ref: r, pages: try pages.page(r).span) }
                }
            case .branch:
                for i in 0..<p.count { try freeSubtree(.page(try p.branchChild(i)), depth: depth + 1) }
            default:
                throw p.notATreeNode()
            }
        }
    }
}
