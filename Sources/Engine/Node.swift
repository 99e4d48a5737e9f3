/// A value being put into a leaf: inline, already in an overflow extent, or new and large
/// (written to its own extent at commit).
enum LeafValue {
    case inline([UInt8])
    case overflow(ref: UInt64, length: Int)
    case large([UInt8])

    static func make(key: [UInt8], value: [UInt8]) -> LeafValue {
        key.count + value.count > Layout.maxInlineCell ? .large(value) : .inline(value)
    }
}

/// A child pointer inside a tree being written: a node of the base version, untouched, or a
/// node copied into memory for this transaction.
enum Child {
    case page(UInt64)
    case dirty(DirtyNode)
}

/// A node copied out of its page for the writer to change (copy-on-write: the page itself is
/// never written again while any version can reach it). Serialized to a new page at commit.
///
/// The cells are kept in their on-disk format (see `PageView`) in one `CellArena`, addressed
/// by an offset table in key order, so copying a node in is one memcpy and writing it out is
/// one memcpy per cell; only the cells that change are built anew. Two things differ from the
/// page: a branch cell's child ref is stale when that child is dirty (`children` is the truth,
/// and `encode` patches the ref in), and a leaf cell flagged `pendingLarge` holds a large value
/// inline until the commit moves it to an overflow extent.
final class DirtyNode {
    let isLeaf: Bool
    /// Arena offsets of the cells, in key order.
    private var cells: [Int] = []
    /// Branch only: the child under each cell.
    var children: [Child] = []
    /// Serialized size of the cells as they will be on the page, offset array included.
    private(set) var size = 0
    private var arena: CellArena
    /// The page this node was copied from (used only by the overwrite-in-place broken variant).
    var origin: UInt64 = 0

    static let overflowFlag: UInt8 = 1
    /// In memory only, never on a page: a large value not yet written to an overflow extent.
    static let pendingLargeFlag: UInt8 = 2

    init(isLeaf: Bool, capacity: Int = Layout.pageSize) {
        self.isLeaf = isLeaf
        arena = CellArena(capacity: capacity)
    }

    var count: Int { cells.count }
    var overflows: Bool { size > Layout.nodeCapacity }

    // MARK: Reading cells. Pointers are valid until the node next changes.

    private var raw: UnsafeRawBufferPointer { UnsafeRawBufferPointer(arena.bytes) }

    func key(_ i: Int) -> UnsafeRawBufferPointer {
        let o = cells[i]
        if isLeaf {
            let start = raw.u8(o + 2) & DirtyNode.overflowFlag != 0 ? 16 : 8
            return arena.slice(o + start, Int(raw.u16(o)))
        }
        return arena.slice(o + 10, Int(raw.u16(o + 8)))
    }

    /// A leaf's value; a pending large value is reported as inline bytes.
    func value(_ i: Int) -> StoredValue {
        let o = cells[i]
        let valueLength = Int(raw.u32(o + 4))
        if raw.u8(o + 2) & DirtyNode.overflowFlag != 0 {
            return .overflow(ref: raw.u64(o + 8), length: valueLength)
        }
        return .inline(arena.slice(o + 8 + Int(raw.u16(o)), valueLength))
    }

    func isPendingLarge(_ i: Int) -> Bool { raw.u8(cells[i] + 2) & DirtyNode.pendingLargeFlag != 0 }

    /// Bytes of cell `i` in the arena.
    private func arenaLength(_ i: Int) -> Int {
        let o = cells[i]
        guard isLeaf else { return 10 + Int(raw.u16(o + 8)) }
        let keyLength = Int(raw.u16(o))
        if raw.u8(o + 2) & DirtyNode.overflowFlag != 0 { return 16 + keyLength }
        return 8 + keyLength + Int(raw.u32(o + 4))
    }

    /// Bytes of cell `i` on the page, not counting its offset-array entry.
    private func pageLength(_ i: Int) -> Int {
        isLeaf && isPendingLarge(i) ? 16 + Int(raw.u16(cells[i])) : arenaLength(i)
    }

    /// Bytes cell `i` takes on the page, its offset-array entry included.
    func cellSize(_ i: Int) -> Int { 2 + pageLength(i) }

    /// Index of the first key >= `key`, and whether it is equal.
    func search(_ key: UnsafeRawBufferPointer) -> (index: Int, found: Bool) {
        var lo = 0, hi = cells.count
        while lo < hi {
            let mid = (lo + hi) / 2
            let c = compareBytes(self.key(mid), key)
            if c == 0 { return (mid, true) }
            if c < 0 { lo = mid + 1 } else { hi = mid }
        }
        return (lo, false)
    }

    /// Branch: the child whose range holds `key` (key 0 is a lower bound only).
    func childIndex(_ key: UnsafeRawBufferPointer) -> Int {
        var lo = 1, hi = cells.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if compareBytes(self.key(mid), key) <= 0 { lo = mid + 1 } else { hi = mid }
        }
        return lo - 1
    }

    func search(_ key: [UInt8]) -> (index: Int, found: Bool) { key.withUnsafeBytes { search($0) } }
    func childIndex(_ key: [UInt8]) -> Int { key.withUnsafeBytes { childIndex($0) } }

    // MARK: Changing cells. A `key` argument must not point into this node's own arena.

    /// Makes room for a cell of `length` bytes. When the arena is full, the live cells move to
    /// a fresh one twice their size, which drops the garbage of replaced and removed cells.
    private func reserve(_ length: Int) {
        guard arena.free < length else { return }
        var live = 0
        for i in cells.indices { live += arenaLength(i) }
        let fresh = CellArena(capacity: max(Layout.pageSize, 2 * (live + length)))
        for i in cells.indices {
            let n = arenaLength(i)
            let o = fresh.claim(n)
            (fresh.bytes.baseAddress! + o).copyMemory(from: arena.bytes.baseAddress! + cells[i], byteCount: n)
            cells[i] = o
        }
        arena = fresh
    }

    /// Appends a leaf cell to the arena and returns its offset (not yet in `cells`).
    private func writeLeafCell(key: UnsafeRawBufferPointer, value: LeafValue) -> Int {
        switch value {
        case .overflow(let ref, let length):
            reserve(16 + key.count)
            let p = arena.bytes
            let o = arena.claim(16 + key.count)
            p.setU16(UInt16(key.count), at: o); p.setU8(DirtyNode.overflowFlag, at: o + 2); p.setU8(0, at: o + 3)
            p.setU32(UInt32(length), at: o + 4)
            p.setU64(ref, at: o + 8)
            p.copy(key, at: o + 16)
            return o
        case .inline(let v), .large(let v):
            reserve(8 + key.count + v.count)
            let q = arena.bytes
            let o = arena.claim(8 + key.count + v.count)
            let flag: UInt8
            if case .large = value { flag = DirtyNode.pendingLargeFlag } else { flag = 0 }
            q.setU16(UInt16(key.count), at: o); q.setU8(flag, at: o + 2); q.setU8(0, at: o + 3)
            q.setU32(UInt32(v.count), at: o + 4)
            q.copy(key, at: o + 8)
            v.withUnsafeBytes { q.copy($0, at: o + 8 + key.count) }
            return o
        }
    }

    func insertLeaf(at i: Int, key: UnsafeRawBufferPointer, value: LeafValue) {
        let o = writeLeafCell(key: key, value: value)
        cells.insert(o, at: i)
        size += cellSize(i)
    }

    /// Replaces the value of cell `i`, keeping its key.
    func setValue(at i: Int, _ value: LeafValue) {
        size -= cellSize(i)
        // The new cell copies its key from the old one: make room first, so the arena does not
        // move (and free the key) while the cell is being written.
        let keyLength = key(i).count
        switch value {
        case .overflow: reserve(16 + keyLength)
        case .inline(let v), .large(let v): reserve(8 + keyLength + v.count)
        }
        cells[i] = writeLeafCell(key: key(i), value: value)
        size += cellSize(i)
    }

    func insertBranch(at i: Int, key: UnsafeRawBufferPointer, child: Child) {
        reserve(10 + key.count)
        let p = arena.bytes
        let o = arena.claim(10 + key.count)
        if case .page(let ref) = child { p.setU64(ref, at: o) } else { p.setU64(0, at: o) }
        p.setU16(UInt16(key.count), at: o + 8)
        p.copy(key, at: o + 10)
        cells.insert(o, at: i)
        children.insert(child, at: i)
        size += cellSize(i)
    }

    /// Branch: gives cell `i` a new separator key, keeping its child.
    func setBranchKey(at i: Int, _ key: UnsafeRawBufferPointer) {
        let child = children[i]
        remove(at: i)
        insertBranch(at: i, key: key, child: child)
    }

    func remove(at i: Int) {
        size -= cellSize(i)
        cells.remove(at: i)
        if !isLeaf { children.remove(at: i) }
    }

    /// Appends every cell of `other` (a right sibling whose keys all sort after this node's).
    func append(contentsOf other: DirtyNode) {
        for i in 0..<other.count {
            let n = other.arenaLength(i)
            reserve(n)
            let o = arena.claim(n)
            (arena.bytes.baseAddress! + o).copyMemory(from: other.arena.bytes.baseAddress! + other.cells[i], byteCount: n)
            cells.append(o)
            size += cellSize(cells.count - 1)
        }
        if !isLeaf { children += other.children }
    }

    /// Splits an overfull node in two, both within capacity. `appending` (the change was at the
    /// right edge) keeps the left node full, so sequential loads pack pages instead of leaving
    /// them half empty. Returns the right node; its first key is the separator.
    func split(appending: Bool) -> DirtyNode {
        let n = cells.count
        var prefix = [Int](repeating: 0, count: n + 1)
        for i in 0..<n { prefix[i + 1] = prefix[i] + cellSize(i) }
        let total = prefix[n]
        var best = -1
        var bestScore = Int.max
        for k in 1..<n {
            let left = prefix[k], right = total - left
            guard left <= Layout.nodeCapacity, right <= Layout.nodeCapacity else { continue }
            let score = appending ? -k : abs(left - right)
            if score < bestScore { bestScore = score; best = k }
        }
        precondition(best > 0, "node of \(n) cells and \(total) bytes cannot split")
        let right = DirtyNode(isLeaf: isLeaf)
        for i in best..<n {
            let len = arenaLength(i)
            right.reserve(len)
            let o = right.arena.claim(len)
            (right.arena.bytes.baseAddress! + o).copyMemory(from: arena.bytes.baseAddress! + cells[i], byteCount: len)
            right.cells.append(o)
        }
        right.size = total - prefix[best]
        if !isLeaf {
            right.children = Array(children[best...])
            children.removeSubrange(best...)
        }
        cells.removeSubrange(best...)
        size = prefix[best]
        return right
    }

    // MARK: Pages

    /// Copies a node out of its page: the page's bytes into the arena, the offset array into
    /// `cells`. Every cell is bounds-checked first, so a damaged node throws.
    static func decode(_ page: PageView) throws -> DirtyNode {
        guard PageHeader.checksumMatches(page.raw) else {
            throw CorruptNode(ref: page.ref, detail: "node checksum mismatch")
        }
        let kind = try page.kind()
        guard kind == .leaf || kind == .branch else {
            throw CorruptNode(ref: page.ref, detail: "expected a tree node, found a \(kind.name) node")
        }
        let n = page.count
        let node = DirtyNode(isLeaf: kind == .leaf, capacity: 2 * Layout.pageSize)
        node.arena.bytes.copyMemory(from: UnsafeRawBufferPointer(rebasing: page.raw[0..<Layout.pageSize]))
        node.arena.used = Layout.pageSize
        node.cells.reserveCapacity(n + 1)
        if !node.isLeaf { node.children.reserveCapacity(n + 1) }
        for i in 0..<n {
            if node.isLeaf {
                _ = try page.leafKey(i)
                _ = try page.leafValue(i)
            } else {
                _ = try page.branchKey(i)
                node.children.append(.page(try page.branchChild(i)))
            }
            let o = Int(page.raw.u16(Layout.pageHeaderSize + 2 * i))
            // Only the overflow bit means anything on a page.
            if node.isLeaf { node.arena.bytes.setU8(page.raw.u8(o + 2) & DirtyNode.overflowFlag, at: o + 2) }
            node.cells.append(o)
            let len = node.arenaLength(i)
            node.size += 2 + len
        }
        return node
    }

    /// Serializes into a zeroed page. Children and large values must already have refs.
    func encode(into p: UnsafeMutableRawBufferPointer, version: UInt64, childRefs: [UInt64]) {
        let n = cells.count
        PageHeader.fill(p, kind: isLeaf ? .leaf : .branch, count: n, span: 1, version: version, extra: 0)
        var end = Layout.pageSize
        for i in 0..<n {
            precondition(!isLeaf || !isPendingLarge(i), "large value not yet written to an overflow extent")
            let len = arenaLength(i)
            end -= len
            p.setU16(UInt16(end), at: Layout.pageHeaderSize + 2 * i)
            p.copy(arena.slice(cells[i], len), at: end)
            if !isLeaf { p.setU64(childRefs[i], at: end) }
        }
        PageHeader.seal(p)
    }
}
