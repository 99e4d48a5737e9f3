/// A value being put into a leaf: inline, already in an overflow extent, or new and large
/// (written to its own extent at commit).
enum LeafValue {
    case inline([UInt8])
    case overflow(ref: UInt64, length: Int)
    case large([UInt8])

    static func make(keyCount: Int, value: [UInt8]) -> LeafValue {
        keyCount + value.count > Layout.maxInlineCell ? .large(value) : .inline(value)
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
/// page: a branch cell's child ref is stale while that child is dirty (`children` is the truth;
/// the commit writes the child, then `setChildRef`), and a leaf cell flagged `pendingLarge`
/// holds a large value inline until the commit moves it to an overflow extent.
final class DirtyNode {
    let isLeaf: Bool
    // The stored properties a commit touches per cell are exempt from Swift's dynamic
    // exclusivity checks (a runtime call per access); no access to them overlaps another.
    /// Arena offsets of the cells, in key order.
    @exclusivity(unchecked) private var cells: [Int] = []
    /// Each cell's key prefix (`keyPrefix`), beside `cells`: a binary search compares these
    /// in one contiguous array and reads a key in the arena only on a tie, so a probe is not
    /// a cache miss into the arena (an Int64 key's prefix is the whole key).
    @exclusivity(unchecked) private var prefixes: [UInt64] = []
    /// Branch only: the child under each cell.
    @exclusivity(unchecked) var children: [Child] = []
    /// Serialized size of the cells as they will be on the page, offset array included.
    @exclusivity(unchecked) private(set) var size = 0
    @exclusivity(unchecked) private var arena: CellArena
    #if FIEF_BROKEN_VARIANTS
        /// The page this node was copied from, for the overwrite-in-place broken variant (a
        /// field only in builds that compile broken variants in).
        @exclusivity(unchecked) var origin: UInt64 = 0
    #endif
    /// False when no cell can be `pendingLarge`, so the commit need not look at every cell.
    @exclusivity(unchecked) private(set) var mayHoldLargeValues = false

    /// Arena bytes beyond the live cells, for the cells a transaction adds before a compaction.
    static let headroom = Layout.pageSize / 2

    /// The page this node is written to holds this many node bytes (`PageGeometry.pageBytes`:
    /// a whole page in a plain file, less the envelope in an encrypted one).
    let pageBytes: Int

    init(isLeaf: Bool, pageBytes: Int, arenaCapacity: Int = Layout.pageSize) {
        self.isLeaf = isLeaf
        self.pageBytes = pageBytes
        arena = CellArena(capacity: arenaCapacity)
    }

    var count: Int { cells.count }
    var capacity: Int { pageBytes - Layout.pageHeaderSize }
    var overflows: Bool { size > capacity }

    // MARK: Reading cells. Pointers are valid until the node next changes.

    private var raw: UnsafeRawBufferPointer { UnsafeRawBufferPointer(arena.bytes) }

    func key(_ i: Int) -> UnsafeRawBufferPointer { DirtyNode.key(raw, at: cells[i], isLeaf: isLeaf) }

    /// The key of the cell at `o` in `raw` (a page or an arena).
    @inline(__always)
    static func key(_ raw: UnsafeRawBufferPointer, at o: Int, isLeaf: Bool) -> UnsafeRawBufferPointer {
        let start: Int, length: Int
        if isLeaf {
            start = LeafCell.keyStart(raw, at: o)
            length = LeafCell.keyLength(raw, at: o)
        } else {
            start = o + BranchCell.headerSize
            length = BranchCell.keyLength(raw, at: o)
        }
        return UnsafeRawBufferPointer(start: raw.baseAddress! + start, count: length)
    }

    /// A leaf's value; a pending large value is reported as inline bytes.
    func value(_ i: Int) -> StoredValue {
        let o = cells[i]
        let valueLength = LeafCell.valueLength(raw, at: o)
        if LeafCell.isOverflow(raw, at: o) {
            return .overflow(ref: raw.u64(o + LeafCell.Offset.overflowRef), length: valueLength)
        }
        return .inline(arena.slice(o + LeafCell.headerSize + LeafCell.keyLength(raw, at: o), valueLength))
    }

    /// Leaf cell `i`'s value bytes in the arena, to change in place at their length; nil for
    /// a value in an overflow extent (those pages belong to the base version).
    func mutableValue(_ i: Int) -> UnsafeMutableRawBufferPointer? {
        let o = cells[i]
        if LeafCell.isOverflow(raw, at: o) { return nil }
        let start = o + LeafCell.headerSize + LeafCell.keyLength(raw, at: o)
        return UnsafeMutableRawBufferPointer(rebasing: arena.bytes[start..<(start + LeafCell.valueLength(raw, at: o))])
    }

    func isPendingLarge(_ i: Int) -> Bool { LeafCell.flags(raw, at: cells[i]) & LeafCell.pendingLargeFlag != 0 }

    /// Bytes of cell `i` in the arena.
    @inline(__always)
    private func arenaLength(_ i: Int) -> Int { DirtyNode.cellLength(raw, at: cells[i], isLeaf: isLeaf) }

    /// Bytes of the cell at `o` in `raw` (a page or an arena), whose header must lie inside it.
    /// Static, on a local pointer: the loops over every cell of a node (decode, encode) then
    /// make no calls that touch the node's stored properties, which in Swift cost a dynamic
    /// exclusivity check each.
    @inline(__always)
    static func cellLength(_ raw: UnsafeRawBufferPointer, at o: Int, isLeaf: Bool) -> Int {
        isLeaf ? LeafCell.length(raw, at: o) : BranchCell.length(raw, at: o)
    }

    /// Bytes of cell `i` on the page, not counting its offset-array entry.
    @inline(__always)
    private func pageLength(_ i: Int) -> Int {
        isLeaf && mayHoldLargeValues && isPendingLarge(i)
            ? LeafCell.overflowHeaderSize + LeafCell.keyLength(raw, at: cells[i]) : arenaLength(i)
    }

    /// Bytes cell `i` takes on the page, its offset-array entry included.
    @inline(__always)
    func cellSize(_ i: Int) -> Int { 2 + pageLength(i) }

    /// The first 8 bytes of `key`, big-endian, zero-padded. Prefixes order as their keys do
    /// wherever they differ (a key that ends early pads with zeros, as the shorter key sorts
    /// first); equal prefixes say nothing, and the keys must be compared.
    @inline(__always)
    static func keyPrefix(_ key: UnsafeRawBufferPointer) -> UInt64 {
        if key.count >= 8 { return UInt64(bigEndian: key.loadUnaligned(as: UInt64.self)) }
        var v: UInt64 = 0
        for i in 0..<key.count { v |= UInt64(key[i]) << (56 - 8 * i) }
        return v
    }

    /// Cell `i`'s key against `key` (whose prefix is `p`): the prefixes, then the keys on a tie.
    /// Only a tie reads `cells` and the arena: in a large transaction, whose nodes are mostly
    /// out of cache, each of those is a cache miss that most probes need not take.
    @inline(__always)
    private func compare(
        _ prefixes: UnsafeBufferPointer<UInt64>, _ i: Int, to key: UnsafeRawBufferPointer, prefix p: UInt64
    ) -> Int {
        let q = prefixes[i]
        if q != p { return q < p ? -1 : 1 }
        return compareBytes(self.key(i), key)
    }

    /// Index of the first key >= `key`, and whether it is equal.
    func search(_ key: UnsafeRawBufferPointer) -> (index: Int, found: Bool) {
        let p = DirtyNode.keyPrefix(key)
        return prefixes.withUnsafeBufferPointer { prefixes in
            var lo = 0, hi = prefixes.count
            while lo < hi {
                let mid = (lo + hi) / 2
                let c = compare(prefixes, mid, to: key, prefix: p)
                if c == 0 { return (mid, true) }
                if c < 0 { lo = mid + 1 } else { hi = mid }
            }
            return (lo, false)
        }
    }

    /// Branch: the child whose range holds `key` (key 0 is a lower bound only).
    func childIndex(_ key: UnsafeRawBufferPointer) -> Int {
        let p = DirtyNode.keyPrefix(key)
        return prefixes.withUnsafeBufferPointer { prefixes in
            var lo = 1, hi = prefixes.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if compare(prefixes, mid, to: key, prefix: p) <= 0 { lo = mid + 1 } else { hi = mid }
            }
            return lo - 1
        }
    }

    func search(_ key: [UInt8]) -> (index: Int, found: Bool) { key.withUnsafeBytes { search($0) } }
    func childIndex(_ key: [UInt8]) -> Int { key.withUnsafeBytes { childIndex($0) } }

    // MARK: Changing cells. A `key` argument must not point into this node's own arena.

    /// Makes room for a cell of `length` bytes. When the arena is full, the live cells move to
    /// a fresh one with half a page to spare, which drops the garbage of replaced and removed
    /// cells. (Live cells never hold much more than a page: the node splits first, so more
    /// headroom would only cost memory in a large transaction, which keeps every node it touched.)
    private func reserve(_ length: Int) {
        guard arena.free < length else { return }
        let old = raw, isLeaf = isLeaf
        let fresh: CellArena = cells.withUnsafeMutableBufferPointer { cells in
            var live = 0
            for o in cells { live += DirtyNode.cellLength(old, at: o, isLeaf: isLeaf) }
            let fresh = CellArena(capacity: max(Layout.pageSize, live + length + DirtyNode.headroom))
            let to = fresh.bytes.baseAddress!
            var end = 0
            for i in cells.indices {
                let n = DirtyNode.cellLength(old, at: cells[i], isLeaf: isLeaf)
                (to + end).copyMemory(from: old.baseAddress! + cells[i], byteCount: n)
                cells[i] = end
                end += n
            }
            _ = fresh.claim(end)
            return fresh
        }
        arena = fresh
    }

    /// Appends a leaf cell to the arena and returns its offset (not yet in `cells`).
    private func writeLeafCell(key: UnsafeRawBufferPointer, value: LeafValue) -> Int {
        switch value {
        case .overflow(let ref, let length):
            let bytes = LeafCell.overflowHeaderSize + key.count
            reserve(bytes)
            let p = arena.bytes
            let o = arena.claim(bytes)
            LeafCell.writeHeader(
                p, at: o, keyLength: key.count, flags: LeafCell.overflowFlag, valueLength: length, overflowRef: ref)
            p.copy(key, at: o + LeafCell.overflowHeaderSize)
            return o
        case .inline(let v), .large(let v):
            let bytes = LeafCell.headerSize + key.count + v.count
            reserve(bytes)
            let q = arena.bytes
            let o = arena.claim(bytes)
            let flag: UInt8
            if case .large = value { flag = LeafCell.pendingLargeFlag; mayHoldLargeValues = true } else { flag = 0 }
            LeafCell.writeHeader(q, at: o, keyLength: key.count, flags: flag, valueLength: v.count)
            q.copy(key, at: o + LeafCell.headerSize)
            v.withUnsafeBytes { q.copy($0, at: o + LeafCell.headerSize + key.count) }
            return o
        }
    }

    func insertLeaf(at i: Int, key: UnsafeRawBufferPointer, value: LeafValue) {
        let o = writeLeafCell(key: key, value: value)
        cells.insertShifting(o, at: i)
        prefixes.insertShifting(DirtyNode.keyPrefix(key), at: i)
        size += cellSize(i)
    }

    /// Replaces the value of cell `i`, keeping its key.
    func setValue(at i: Int, _ value: LeafValue) {
        size -= cellSize(i)
        // The new cell copies its key from the old one: make room first, so the arena does not
        // move (and free the key) while the cell is being written.
        let keyLength = key(i).count
        switch value {
        case .overflow: reserve(LeafCell.overflowHeaderSize + keyLength)
        case .inline(let v), .large(let v): reserve(LeafCell.headerSize + keyLength + v.count)
        }
        cells[i] = writeLeafCell(key: key(i), value: value)
        size += cellSize(i)
    }

    func insertBranch(at i: Int, key: UnsafeRawBufferPointer, child: Child) {
        reserve(BranchCell.headerSize + key.count)
        let p = arena.bytes
        let o = arena.claim(BranchCell.headerSize + key.count)
        let ref: UInt64
        if case .page(let r) = child { ref = r } else { ref = 0 }
        BranchCell.writeHeader(p, at: o, child: ref, keyLength: key.count)
        p.copy(key, at: o + BranchCell.headerSize)
        cells.insertShifting(o, at: i)
        prefixes.insertShifting(DirtyNode.keyPrefix(key), at: i)
        children.insert(child, at: i)
        size += cellSize(i)
    }

    /// Branch: records where child `i` was written.
    func setChildRef(at i: Int, _ ref: UInt64) {
        arena.bytes.setU64(ref, at: cells[i] + BranchCell.Offset.child)
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
        prefixes.remove(at: i)
        if !isLeaf { children.remove(at: i) }
    }

    /// Appends every cell of `other` (a right sibling whose keys all sort after this node's).
    func append(contentsOf other: DirtyNode) {
        for i in 0..<other.count {
            let n = other.arenaLength(i)
            reserve(n)
            let o = arena.claim(n)
            (arena.bytes.baseAddress! + o).copyMemory(
                from: other.arena.bytes.baseAddress! + other.cells[i], byteCount: n)
            cells.append(o)
            prefixes.append(other.prefixes[i])
            size += cellSize(cells.count - 1)
        }
        if !isLeaf { children += other.children }
        mayHoldLargeValues = mayHoldLargeValues || other.mayHoldLargeValues
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
            guard left <= capacity, right <= capacity else { continue }
            let score = appending ? -k : abs(left - right)
            if score < bestScore { bestScore = score; best = k }
        }
        precondition(best > 0, "node of \(n) cells and \(total) bytes cannot split")
        let right = DirtyNode(isLeaf: isLeaf, pageBytes: pageBytes)
        right.mayHoldLargeValues = mayHoldLargeValues
        for i in best..<n {
            let len = arenaLength(i)
            right.reserve(len)
            let o = right.arena.claim(len)
            (right.arena.bytes.baseAddress! + o).copyMemory(from: arena.bytes.baseAddress! + cells[i], byteCount: len)
            right.cells.append(o)
        }
        right.prefixes = Array(prefixes[best...])
        right.size = total - prefix[best]
        if !isLeaf {
            right.children = Array(children[best...])
            children.removeSubrange(best...)
        }
        cells.removeSubrange(best...)
        prefixes.removeSubrange(best...)
        size = prefix[best]
        return right
    }

    // MARK: Pages

    /// Copies a node out of its page: the page's bytes into the arena (one memcpy), its offset
    /// array into `cells`. Every cell is bounds-checked, so a damaged node throws.
    /// `pageBytes`: the bytes of the page the node will be written to, when not the page it
    /// comes from (an embedded catalog leaf is shorter than a page).
    static func decode(_ page: PageView, pageBytes nodePageBytes: Int? = nil) throws -> DirtyNode {
        guard PageHeader.checksumMatches(page.raw, ref: page.ref) else {
            throw CorruptNode(ref: page.ref, detail: "node checksum mismatch")
        }
        let kind = try page.kind()
        guard kind == .leaf || kind == .branch else {
            throw page.notATreeNode()
        }
        let isLeaf = kind == .leaf
        let n = page.count
        let src = page.raw
        let pageBytes = src.count
        let firstCell = CellOffsets.end(count: n)
        guard firstCell <= pageBytes else {
            throw CorruptNode(ref: page.ref, detail: "\(n) cells do not fit in a page")
        }
        let node = DirtyNode(
            isLeaf: isLeaf, pageBytes: max(nodePageBytes ?? pageBytes, pageBytes),
            arenaCapacity: pageBytes + DirtyNode.headroom)
        let arena = node.arena
        let dst = arena.bytes
        dst.copyMemory(from: src)
        arena.used = pageBytes
        var cells: [Int] = []
        cells.reserveCapacity(n + 1)
        var prefixes: [UInt64] = []
        prefixes.reserveCapacity(n + 1)
        var children: [Child] = []
        if !isLeaf { children.reserveCapacity(n + 1) }
        var size = 0
        for i in 0..<n {
            let o = CellOffsets.offset(src, i)
            guard o >= firstCell, o + (isLeaf ? LeafCell.headerSize : BranchCell.headerSize) <= pageBytes else {
                throw CorruptNode(ref: page.ref, detail: "cell \(i) offset \(o) outside the page")
            }
            let length = DirtyNode.cellLength(src, at: o, isLeaf: isLeaf)
            guard o + length <= pageBytes else {
                throw CorruptNode(ref: page.ref, detail: "cell runs past the end of the page")
            }
            if isLeaf {
                // Only the overflow bit means anything on a page.
                dst.setU8(LeafCell.flags(src, at: o) & LeafCell.overflowFlag, at: o + LeafCell.Offset.flags)
            } else {
                children.append(.page(BranchCell.child(src, at: o)))
            }
            cells.append(o)
            prefixes.append(DirtyNode.keyPrefix(DirtyNode.key(src, at: o, isLeaf: isLeaf)))
            size += 2 + length
        }
        node.cells = cells
        node.prefixes = prefixes
        node.children = children
        node.size = size
        return node
    }

    /// After the commit that wrote this node (every child's ref set in its cell): makes it
    /// what `decode` of the page it was written to would give, so the writer's next
    /// transaction can take it instead of copying the page (`WrittenNodes`). Drops the
    /// in-memory children, which this node no longer needs to hold.
    func settleAfterWrite() {
        guard !isLeaf else { return }
        let raw = self.raw, cells = self.cells
        children.withUnsafeMutableBufferPointer { kids in
            for i in kids.indices {
                if case .dirty = kids[i] { kids[i] = .page(BranchCell.child(raw, at: cells[i])) }
            }
        }
    }

    /// Calls `body` with each in-memory child and its index. Walks the children in place: a
    /// branch has a few hundred, nearly all untouched refs, and this runs over every changed
    /// branch several times a commit, so no child is copied out to look at it.
    @inline(__always)
    func forEachDirtyChild(_ body: (Int, DirtyNode) throws -> Void) rethrows {
        try children.withUnsafeBufferPointer { kids in
            for i in kids.indices {
                if case .dirty(let d) = kids[i] { try body(i, d) }
            }
        }
    }

    /// Serializes into a page of `pageBytes` bytes, every byte of which it writes (the gap
    /// between the offset array and the cells as zeros): the cells' bytes as they are. Dirty
    /// children and large values must already be written and their refs set.
    func encode(into p: UnsafeMutableRawBufferPointer, version: UInt64, checksumSkipsGap: Bool, placedAt ref: UInt64?) {
        // A page, or the tail of a top node for an embedded catalog leaf.
        precondition(p.count <= pageBytes)
        let pageBytes = p.count
        let cells = self.cells
        let isLeaf = self.isLeaf
        let src = raw
        let n = cells.count
        PageHeader.fill(p, kind: isLeaf ? .leaf : .branch, count: n, span: 1, version: version, extra: 0)
        var end = pageBytes
        // Cells that lie in the arena just as they go on the page (each ending where the one
        // before it starts: a node copied from its page keeps its cells so) are copied as one
        // run, with one memcpy.
        var runStart = 0, runEnd = pageBytes  // the run in the arena
        var runPageEnd = pageBytes  // where the run ends on the page
        for i in 0..<n {
            let o = cells[i]
            precondition(
                !isLeaf || LeafCell.flags(src, at: o) & LeafCell.pendingLargeFlag == 0,
                "large value not yet written to an overflow extent")
            let length = DirtyNode.cellLength(src, at: o, isLeaf: isLeaf)
            end -= length
            CellOffsets.set(p, i, to: end)
            if i > 0 && o + length == runStart {
                runStart = o
            } else {
                if i > 0 {
                    (p.baseAddress! + (runPageEnd - (runEnd - runStart))).copyMemory(
                        from: src.baseAddress! + runStart, byteCount: runEnd - runStart)
                }
                runStart = o
                runEnd = o + length
                runPageEnd = end + length
            }
        }
        if n > 0 { (p.baseAddress! + end).copyMemory(from: src.baseAddress! + runStart, byteCount: runEnd - runStart) }
        let gap = CellOffsets.end(count: n)
        precondition(gap <= end, "node of \(n) cells overflows its page")
        (p.baseAddress! + gap).initializeMemory(as: UInt8.self, repeating: 0, count: end - gap)
        PageHeader.seal(
            p, gap: checksumSkipsGap ? gap..<(BrokenVariant.on(.gapOverCells) ? pageBytes : end) : nil, placedAt: ref)
    }
}

extension Array where Element: BitwiseCopyable {
    /// `insert(_:at:)` for the offset and prefix arrays of a node: one append and one move of
    /// the elements after `i`, where the generic insert went through `replaceSubrange` (one
    /// instruction in twenty of a random bulk load, `valgrind --tool=cachegrind`).
    @inline(__always)
    mutating func insertShifting(_ x: Element, at i: Int) {
        precondition(i >= 0 && i <= count, "insert position out of range")
        append(x)
        withUnsafeMutableBufferPointer { b in
            let p = b.baseAddress!
            UnsafeMutableRawPointer(p + i + 1).copyMemory(
                from: p + i, byteCount: (b.count - 1 - i) * MemoryLayout<Element>.stride)
            p[i] = x
        }
    }
}
