/// A value being put into a leaf: inline, already in an overflow extent, or new and large
/// (written to its own extent at commit).
enum LeafValue {
    case inline([UInt8])
    case overflow(ref: UInt64, length: Int)
    case large([UInt8])

    static func make(keyCount: Int, value: [UInt8]) -> LeafValue {
        keyCount + value.count > Layout.maxInlineCell ? .large(value) : .inline(value)
    }

    /// Bytes of the cell holding this value under a key of `keyCount` bytes, while in memory.
    func cellLength(keyCount: Int) -> Int {
        switch self {
        case .overflow: return LeafCell.overflowHeaderSize + keyCount
        case .inline(let v), .large(let v): return LeafCell.headerSize + keyCount + v.count
        }
    }
}

/// A child pointer inside a tree being written: a node of the base version, untouched, or a
/// node copied into memory for this transaction.
enum Child {
    case page(UInt64)
    case dirty(DirtyNode)
}

/// Where a walk for a key down the nodes a writer owns ends (`DirtyNode.descend`).
enum OwnedDescent {
    /// At a leaf this writer owns, the key's index there (or where it would go).
    case leaf(Unmanaged<DirtyNode>, index: Int, found: Bool)
    /// At a page of the base version, `depth` levels below where the walk began.
    case page(UInt64, depth: Int)
}

/// A node copied out of its page for the writer to change (copy-on-write: the page itself is
/// never written again while any version can reach it). Serialized to a new page at commit.
///
/// The node is one heap buffer, as LMDB's dirty page is: each cell's key prefix, then each
/// cell's offset, then the cells in their on-disk format (see `PageView`). An insert into a
/// node out of cache then misses on the node object and on the lines of that buffer it
/// touches, not on four more blocks (an array each for offsets and prefixes, an arena object
/// and its bytes). The arena fills from its end down, as a page does: a node copied from its
/// page, or one filled in key order, holds its cells just as they go on the page, so copying it
/// in or out is one memcpy; only the cells that change are built anew. Two things differ from
/// the page: a branch cell's child ref is stale while that child is dirty (`children` is the
/// truth; the commit writes the child, then `setChildRef`), and a leaf cell flagged
/// `pendingLarge` holds a large value inline until the commit moves it to an overflow extent.
final class DirtyNode {
    // The fields an insert reads come first, to share the object's first cache line. They are
    // exempt from Swift's dynamic exclusivity checks (a runtime call per access); no access to
    // them overlaps another.
    /// Each cell's key prefix (`keyPrefix`), in key order; also the start of the buffer. A
    /// binary search compares these and reads a key in the arena only on a tie, so a probe is
    /// not a cache miss into the arena (an Int64 key's prefix is the whole key).
    @exclusivity(unchecked) private var prefixes: UnsafeMutablePointer<UInt64>
    /// Each cell's offset in the arena, in key order. 32 bits: a pending large value (up to
    /// `Layout.maxValueSize`) makes an arena far larger than a page.
    @exclusivity(unchecked) private var offsets: UnsafeMutablePointer<UInt32>
    @exclusivity(unchecked) private var arena: UnsafeMutableRawPointer
    @exclusivity(unchecked) private(set) var count = 0
    /// Arena bytes below the lowest cell, free for the next one. Replaced and removed cells
    /// stay above it as garbage until `reserve` compacts.
    @exclusivity(unchecked) private var low: Int
    @exclusivity(unchecked) private var arenaCapacity: Int
    @exclusivity(unchecked) private var slotCapacity: Int
    /// Serialized size of the cells as they will be on the page, offset array included.
    @exclusivity(unchecked) private(set) var size = 0
    let isLeaf: Bool
    /// The page this node is written to holds this many node bytes (`PageGeometry.pageBytes`:
    /// a whole page in a plain file, less the envelope in an encrypted one).
    let pageBytes: Int
    /// Branch only: the child under each cell.
    @exclusivity(unchecked) var children: [Child] = []
    /// False when no cell can be `pendingLarge`, so the commit need not look at every cell.
    @exclusivity(unchecked) private(set) var mayHoldLargeValues = false
    #if FIEF_BROKEN_VARIANTS
        /// The page this node was copied from, for the overwrite-in-place broken variant (a
        /// field only in builds that compile broken variants in).
        @exclusivity(unchecked) var origin: UInt64 = 0
    #endif

    /// Arena bytes beyond the live cells, for the cells a transaction adds before a compaction.
    static let headroom = Layout.pageSize / 2

    init(isLeaf: Bool, pageBytes: Int, slots: Int = 16, arenaCapacity: Int = Layout.pageSize) {
        self.isLeaf = isLeaf
        self.pageBytes = pageBytes
        (prefixes, offsets, arena) = DirtyNode.allocate(slots: slots, arenaBytes: arenaCapacity)
        slotCapacity = slots
        self.arenaCapacity = arenaCapacity
        low = arenaCapacity
    }

    deinit { UnsafeMutableRawPointer(prefixes).deallocate() }

    private static func allocate(
        slots: Int, arenaBytes: Int
    ) -> (UnsafeMutablePointer<UInt64>, UnsafeMutablePointer<UInt32>, UnsafeMutableRawPointer) {
        precondition(slots > 0 && arenaBytes <= Int(UInt32.max), "node of \(arenaBytes) bytes")
        let b = UnsafeMutableRawPointer.allocate(byteCount: 12 * slots + arenaBytes, alignment: 8)
        return (
            b.bindMemory(to: UInt64.self, capacity: slots),
            (b + 8 * slots).bindMemory(to: UInt32.self, capacity: slots), b + 12 * slots
        )
    }

    /// Slots for a page's worth of cells as large on average as `n` cells of `bytes` (offset
    /// entries included), and the one more a node holds until it splits: filling a node copied
    /// from a page or split from one then never grows its buffer, unless its cells vary in size.
    private static func slots(cells n: Int, bytes: Int, capacity: Int) -> Int {
        n == 0 || bytes == 0 ? 16 : max(n, capacity * n / bytes) + 2
    }

    var capacity: Int { pageBytes - Layout.pageHeaderSize }
    var overflows: Bool { size > capacity }

    // MARK: Reading cells. Pointers are valid until the node next changes.

    private var raw: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: arena, count: arenaCapacity) }
    private var mutableRaw: UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(start: arena, count: arenaCapacity)
    }

    /// Cell `i`'s arena offset. Checked: the offsets are raw memory, and a bad index must trap
    /// as an array's would, not read past them.
    @inline(__always)
    private func offset(_ i: Int) -> Int {
        precondition(UInt(bitPattern: i) < UInt(bitPattern: count), "cell index out of range")
        return Int(offsets[i])
    }

    func key(_ i: Int) -> UnsafeRawBufferPointer { DirtyNode.key(raw, at: offset(i), isLeaf: isLeaf) }

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
        let o = offset(i), raw = raw
        let valueLength = LeafCell.valueLength(raw, at: o)
        if LeafCell.isOverflow(raw, at: o) {
            return .overflow(ref: raw.u64(o + LeafCell.Offset.overflowRef), length: valueLength)
        }
        let start = o + LeafCell.headerSize + LeafCell.keyLength(raw, at: o)
        return .inline(UnsafeRawBufferPointer(start: arena + start, count: valueLength))
    }

    /// Leaf cell `i`'s value bytes in the arena, to change in place at their length; nil for
    /// a value in an overflow extent (those pages belong to the base version).
    func mutableValue(_ i: Int) -> UnsafeMutableRawBufferPointer? {
        let o = offset(i), raw = raw
        if LeafCell.isOverflow(raw, at: o) { return nil }
        let start = o + LeafCell.headerSize + LeafCell.keyLength(raw, at: o)
        return UnsafeMutableRawBufferPointer(start: arena + start, count: LeafCell.valueLength(raw, at: o))
    }

    func isPendingLarge(_ i: Int) -> Bool { LeafCell.flags(raw, at: offset(i)) & LeafCell.pendingLargeFlag != 0 }

    /// Bytes of cell `i` in the arena.
    @inline(__always)
    private func arenaLength(_ i: Int) -> Int { DirtyNode.cellLength(raw, at: offset(i), isLeaf: isLeaf) }

    /// Bytes of the cell at `o` in `raw` (a page or an arena), whose header must lie inside it.
    /// Static, on a local pointer: the loops over every cell of a node (decode, encode) then
    /// make no calls that touch the node's stored properties.
    @inline(__always)
    static func cellLength(_ raw: UnsafeRawBufferPointer, at o: Int, isLeaf: Bool) -> Int {
        isLeaf ? LeafCell.length(raw, at: o) : BranchCell.length(raw, at: o)
    }

    /// Bytes of cell `i` on the page, not counting its offset-array entry.
    @inline(__always)
    private func pageLength(_ i: Int) -> Int {
        isLeaf && mayHoldLargeValues && isPendingLarge(i)
            ? LeafCell.overflowHeaderSize + LeafCell.keyLength(raw, at: offset(i)) : arenaLength(i)
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
    /// Only a tie reads the offsets and the arena: in a large transaction, whose nodes are
    /// mostly out of cache, each of those is a cache miss that most probes need not take.
    @inline(__always)
    private func compare(_ i: Int, to key: UnsafeRawBufferPointer, prefix p: UInt64) -> Int {
        let q = prefixes[i]
        if q != p { return q < p ? -1 : 1 }
        return compareBytes(DirtyNode.key(raw, at: Int(offsets[i]), isLeaf: isLeaf), key)
    }

    /// Index of the first key >= `key`, and whether it is equal.
    func search(_ key: UnsafeRawBufferPointer) -> (index: Int, found: Bool) {
        let p = DirtyNode.keyPrefix(key)
        var lo = 0, hi = count
        while lo < hi {
            let mid = (lo + hi) / 2
            let c = compare(mid, to: key, prefix: p)
            if c == 0 { return (mid, true) }
            if c < 0 { lo = mid + 1 } else { hi = mid }
        }
        return (lo, false)
    }

    /// Branch: the child whose range holds `key` (key 0 is a lower bound only).
    func childIndex(_ key: UnsafeRawBufferPointer) -> Int {
        let p = DirtyNode.keyPrefix(key)
        var lo = 1, hi = count
        while lo < hi {
            let mid = (lo + hi) / 2
            if compare(mid, to: key, prefix: p) <= 0 { lo = mid + 1 } else { hi = mid }
        }
        return lo - 1
    }

    /// Walks from `top` toward `key` through owned nodes, unretained (the tree's root holds
    /// them for the walk): a retain and a release of each level's node were a tenth of a
    /// lookup in a write. Nil past `levels` levels (a cycle).
    static func descend(from top: DirtyNode, key: UnsafeRawBufferPointer, levels: Int) -> OwnedDescent? {
        var node = Unmanaged.passUnretained(top)
        for depth in 0..<max(0, levels) {
            let step: OwnedDescent? = node._withUnsafeGuaranteedRef { n in
                if n.isLeaf {
                    let (i, found) = n.search(key)
                    return .leaf(node, index: i, found: found)
                }
                let i = n.childIndex(key)
                return n.children.withUnsafeBufferPointer { b -> OwnedDescent? in
                    switch b[i] {
                    case .dirty(let c):
                        node = Unmanaged.passUnretained(c)
                        return nil
                    case .page(let ref): return .page(ref, depth: depth + 1)
                    }
                }
            }
            if let step { return step }
        }
        return nil
    }

    func search(_ key: [UInt8]) -> (index: Int, found: Bool) { key.withUnsafeBytes { search($0) } }
    func childIndex(_ key: [UInt8]) -> Int { key.withUnsafeBytes { childIndex($0) } }

    // MARK: Changing cells. A `key` argument must not point into this node's own arena.

    /// Makes room for `slots` more cells and `length` more bytes, so that claiming them cannot
    /// move the arena (and free the bytes a cell is being copied from).
    @inline(__always)
    private func reserve(_ length: Int, slots: Int = 0) {
        if low < length || count + slots > slotCapacity { rebuild(length, slots: slots) }
    }

    /// Moves the node to a fresh buffer with room for `slots` more cells and `length` more bytes
    /// and half a page to spare, which drops the garbage of replaced and removed cells. (Live
    /// cells never hold much more than a page: the node splits first, so more headroom would
    /// only cost memory in a large transaction, which keeps every node it touched.) The live
    /// cells go down from the end in key order, as on a page, so `encode` copies them in one run.
    private func rebuild(_ length: Int, slots more: Int) {
        let n = count, isLeaf = isLeaf, old = raw
        var live = 0
        for i in 0..<n { live += DirtyNode.cellLength(old, at: Int(offsets[i]), isLeaf: isLeaf) }
        let slots = n + more > slotCapacity ? max(n + more, slotCapacity + slotCapacity / 2) : slotCapacity
        let bytes = max(Layout.pageSize, live + length + DirtyNode.headroom)
        let (p, o, a) = DirtyNode.allocate(slots: slots, arenaBytes: bytes)
        p.initialize(from: prefixes, count: n)
        var end = bytes
        for i in 0..<n {
            let from = Int(offsets[i])
            let length = DirtyNode.cellLength(old, at: from, isLeaf: isLeaf)
            end -= length
            (a + end).copyMemory(from: arena + from, byteCount: length)
            o[i] = UInt32(end)
        }
        UnsafeMutableRawPointer(prefixes).deallocate()
        (prefixes, offsets, arena) = (p, o, a)
        (slotCapacity, arenaCapacity, low) = (slots, bytes, end)
    }

    /// Space for a cell of `length` bytes, already reserved; returns its offset.
    @inline(__always)
    private func claim(_ length: Int) -> Int {
        precondition(length <= low, "node arena overrun")
        low -= length
        return low
    }

    /// Opens slot `i` for a cell at `o`, moving the ones after it up (one move per array,
    /// where inserting into an Array went through `replaceSubrange`).
    @inline(__always)
    private func insertSlot(at i: Int, prefix: UInt64, offset o: Int) {
        precondition(i >= 0 && i <= count && count < slotCapacity, "insert position out of range")
        let after = count - i
        UnsafeMutableRawPointer(prefixes + i + 1).copyMemory(from: prefixes + i, byteCount: 8 * after)
        UnsafeMutableRawPointer(offsets + i + 1).copyMemory(from: offsets + i, byteCount: 4 * after)
        prefixes[i] = prefix
        offsets[i] = UInt32(o)
        count += 1
    }

    /// Writes a leaf cell into the arena (room for it and `slots` more cells reserved first) and
    /// returns its offset; it is not yet in a slot.
    private func writeLeafCell(key: UnsafeRawBufferPointer, value: LeafValue, slots: Int) -> Int {
        let bytes = value.cellLength(keyCount: key.count)
        reserve(bytes, slots: slots)
        let p = mutableRaw, o = claim(bytes)
        switch value {
        case .overflow(let ref, let length):
            LeafCell.writeHeader(
                p, at: o, keyLength: key.count, flags: LeafCell.overflowFlag, valueLength: length, overflowRef: ref)
            p.copy(key, at: o + LeafCell.overflowHeaderSize)
        case .inline(let v), .large(let v):
            let flag: UInt8
            if case .large = value { flag = LeafCell.pendingLargeFlag; mayHoldLargeValues = true } else { flag = 0 }
            LeafCell.writeHeader(p, at: o, keyLength: key.count, flags: flag, valueLength: v.count)
            p.copy(key, at: o + LeafCell.headerSize)
            v.withUnsafeBytes { p.copy($0, at: o + LeafCell.headerSize + key.count) }
        }
        return o
    }

    func insertLeaf(at i: Int, key: UnsafeRawBufferPointer, value: LeafValue) {
        let o = writeLeafCell(key: key, value: value, slots: 1)
        insertSlot(at: i, prefix: DirtyNode.keyPrefix(key), offset: o)
        size += cellSize(i)
    }

    /// Replaces the value of cell `i`, keeping its key.
    func setValue(at i: Int, _ value: LeafValue) {
        size -= cellSize(i)
        // The new cell copies its key from the old one: make room first, so the arena does not
        // move (and free the key) while the cell is being written.
        reserve(value.cellLength(keyCount: key(i).count))
        offsets[i] = UInt32(writeLeafCell(key: key(i), value: value, slots: 0))
        size += cellSize(i)
    }

    func insertBranch(at i: Int, key: UnsafeRawBufferPointer, child: Child) {
        let bytes = BranchCell.headerSize + key.count
        reserve(bytes, slots: 1)
        let o = claim(bytes)
        let ref: UInt64
        if case .page(let r) = child { ref = r } else { ref = 0 }
        BranchCell.writeHeader(mutableRaw, at: o, child: ref, keyLength: key.count)
        mutableRaw.copy(key, at: o + BranchCell.headerSize)
        insertSlot(at: i, prefix: DirtyNode.keyPrefix(key), offset: o)
        children.insert(child, at: i)
        size += cellSize(i)
    }

    /// Branch: records where child `i` was written.
    func setChildRef(at i: Int, _ ref: UInt64) {
        mutableRaw.setU64(ref, at: offset(i) + BranchCell.Offset.child)
    }

    /// Branch: gives cell `i` a new separator key, keeping its child.
    func setBranchKey(at i: Int, _ key: UnsafeRawBufferPointer) {
        let o = offset(i)
        if BranchCell.keyLength(raw, at: o) == key.count {
            // In place when as long (fixed-width keys): a separator moved by `shiftCells` made a
            // new cell per move, and the garbage rebuilt the whole branch every few moves.
            mutableRaw.copy(key, at: o + BranchCell.headerSize)
            prefixes[i] = DirtyNode.keyPrefix(key)
            return
        }
        let child = children[i]
        remove(at: i)
        insertBranch(at: i, key: key, child: child)
    }

    func remove(at i: Int) {
        size -= cellSize(i)
        let after = count - i - 1
        UnsafeMutableRawPointer(prefixes + i).copyMemory(from: prefixes + i + 1, byteCount: 8 * after)
        UnsafeMutableRawPointer(offsets + i).copyMemory(from: offsets + i + 1, byteCount: 4 * after)
        count -= 1
        if !isLeaf { children.remove(at: i) }
    }

    /// Appends every cell of `other` (a right sibling whose keys all sort after this node's).
    func append(contentsOf other: DirtyNode) {
        var bytes = 0
        for i in 0..<other.count { bytes += other.arenaLength(i) }
        reserve(bytes, slots: other.count)
        for i in 0..<other.count {
            let n = other.arenaLength(i)
            let o = claim(n)
            (arena + o).copyMemory(from: other.arena + other.offset(i), byteCount: n)
            prefixes[count] = other.prefixes[i]
            offsets[count] = UInt32(o)
            count += 1
            size += cellSize(count - 1)
        }
        if !isLeaf { children += other.children }
        mayHoldLargeValues = mayHoldLargeValues || other.mayHoldLargeValues
    }

    /// Leaf: moves cells to `sibling`, a leaf beside it, until this node fits its page with the
    /// two about even: from this node's front onto the end of a left sibling, or from its back
    /// onto the front of a right one. Returns false, moving nothing, when the sibling has no
    /// room for what must move (then the caller splits). A random load that evens a full leaf
    /// out with a neighbour it already holds, instead of splitting it, leaves its leaves fuller
    /// (B*-trees do the same).
    func shiftCells(to sibling: DirtyNode, left: Bool) -> Bool {
        // Only into a sibling at most half full (one a split left so): evened out, the two then
        // take a run of inserts each before either is full again. Into fuller ones (up to three
        // quarters), leaves ended fuller still (79 %), but each insert near a full pair moved
        // cells back and forth: 5 % more instructions and 15 % more L1 misses in a random load.
        guard isLeaf, sibling.isLeaf, count > 1, sibling.size <= sibling.capacity / 2 else { return false }
        // Cells to move, taken from the end that meets the sibling, fewest that bring this node
        // within capacity, then more while the two stay about even.
        var moved = 0, bytes = 0
        func next() -> Int { cellSize(left ? moved : count - 1 - moved) }
        while moved < count - 1, size - bytes > capacity {
            bytes += next()
            moved += 1
        }
        guard size - bytes <= capacity, sibling.size + bytes <= sibling.capacity else { return false }
        while moved < count - 1, sibling.size + bytes + next() <= size - bytes - next() {
            bytes += next()
            moved += 1
        }
        guard moved > 0 else { return true }
        let from = left ? 0..<moved : (count - moved)..<count
        var arenaBytes = 0
        for i in from { arenaBytes += arenaLength(i) }
        sibling.reserve(arenaBytes, slots: moved)
        // The sibling's slots for them: after its own, or before them (opened once).
        let at = left ? sibling.count : 0
        if !left {
            UnsafeMutableRawPointer(sibling.prefixes + moved).copyMemory(
                from: sibling.prefixes, byteCount: 8 * sibling.count)
            UnsafeMutableRawPointer(sibling.offsets + moved).copyMemory(
                from: sibling.offsets, byteCount: 4 * sibling.count)
        }
        for (j, i) in from.enumerated() {
            let length = arenaLength(i), o = sibling.claim(length)
            (sibling.arena + o).copyMemory(from: arena + offset(i), byteCount: length)
            sibling.prefixes[at + j] = prefixes[i]
            sibling.offsets[at + j] = UInt32(o)
        }
        sibling.count += moved
        sibling.size += bytes
        sibling.mayHoldLargeValues = sibling.mayHoldLargeValues || mayHoldLargeValues
        let kept = count - moved
        if left {
            UnsafeMutableRawPointer(prefixes).copyMemory(from: prefixes + moved, byteCount: 8 * kept)
            UnsafeMutableRawPointer(offsets).copyMemory(from: offsets + moved, byteCount: 4 * kept)
        }
        count = kept
        size -= bytes
        return true
    }

    /// Splits an overfull node in two, both within capacity. `appending` (the change was at the
    /// right edge) keeps the left node full, so sequential loads pack pages instead of leaving
    /// them half empty. Returns the right node; its first key is the separator.
    func split(appending: Bool) -> DirtyNode {
        let n = count
        var total = 0
        for i in 0..<n { total += cellSize(i) }
        var best = -1, bestLeft = 0
        var bestScore = Int.max
        var left = 0
        for k in 1..<n {
            left += cellSize(k - 1)
            let right = total - left
            guard left <= capacity, right <= capacity else { continue }
            let score = appending ? -k : abs(left - right)
            if score < bestScore { (bestScore, best, bestLeft) = (score, k, left) }
        }
        precondition(best > 0, "node of \(n) cells and \(total) bytes cannot split")
        var bytes = 0
        for i in best..<n { bytes += arenaLength(i) }
        let right = DirtyNode(
            isLeaf: isLeaf, pageBytes: pageBytes, slots: DirtyNode.slots(cells: n, bytes: total, capacity: capacity),
            arenaCapacity: max(Layout.pageSize, bytes + DirtyNode.headroom))
        right.mayHoldLargeValues = mayHoldLargeValues
        right.prefixes.initialize(from: prefixes + best, count: n - best)
        for i in best..<n {
            let length = arenaLength(i)
            let o = right.claim(length)
            (right.arena + o).copyMemory(from: arena + offset(i), byteCount: length)
            right.offsets[i - best] = UInt32(o)
        }
        right.count = n - best
        right.size = total - bestLeft
        if !isLeaf {
            right.children = Array(children[best...])
            children.removeSubrange(best...)
        }
        count = best
        size = bestLeft
        return right
    }

    // MARK: Pages

    /// Copies a node out of its page: the page's cells into the end of the arena (one memcpy,
    /// so they keep their places relative to each other and the page's end), its offset array
    /// into the slots. Every cell is bounds-checked, so a damaged node throws.
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
        let headerSize = isLeaf ? LeafCell.headerSize : BranchCell.headerSize
        var lowest = pageBytes
        for i in 0..<n {
            let o = CellOffsets.offset(src, i)
            guard o >= firstCell, o + headerSize <= pageBytes else {
                throw CorruptNode(ref: page.ref, detail: "cell \(i) offset \(o) outside the page")
            }
            lowest = min(lowest, o)
        }
        let cellBytes = pageBytes - lowest
        let nodePageBytes = max(nodePageBytes ?? pageBytes, pageBytes)
        let node = DirtyNode(
            isLeaf: isLeaf, pageBytes: nodePageBytes,
            slots: slots(cells: n, bytes: cellBytes + 2 * n, capacity: nodePageBytes - Layout.pageHeaderSize),
            arenaCapacity: max(Layout.pageSize, cellBytes + DirtyNode.headroom))
        // Page offset `o` is arena offset `o + shift`: the cells end where the arena does.
        let shift = node.arenaCapacity - pageBytes
        let dst = node.mutableRaw
        (dst.baseAddress! + lowest + shift).copyMemory(from: src.baseAddress! + lowest, byteCount: cellBytes)
        let prefixes = node.prefixes, offsets = node.offsets
        var children: [Child] = []
        if !isLeaf { children.reserveCapacity(n + 1) }
        var size = 0
        for i in 0..<n {
            let o = CellOffsets.offset(src, i)
            let length = DirtyNode.cellLength(src, at: o, isLeaf: isLeaf)
            guard o + length <= pageBytes else {
                throw CorruptNode(ref: page.ref, detail: "cell runs past the end of the page")
            }
            if isLeaf {
                // Only the overflow bit means anything on a page.
                dst.setU8(LeafCell.flags(src, at: o) & LeafCell.overflowFlag, at: o + shift + LeafCell.Offset.flags)
            } else {
                children.append(.page(BranchCell.child(src, at: o)))
            }
            prefixes[i] = DirtyNode.keyPrefix(DirtyNode.key(src, at: o, isLeaf: isLeaf))
            offsets[i] = UInt32(o + shift)
            size += 2 + length
        }
        node.low = lowest + shift
        node.count = n
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
        let raw = self.raw, offsets = self.offsets
        children.withUnsafeMutableBufferPointer { kids in
            for i in kids.indices {
                if case .dirty = kids[i] { kids[i] = .page(BranchCell.child(raw, at: Int(offsets[i]))) }
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
        let offsets = self.offsets
        let isLeaf = self.isLeaf
        let src = raw
        let n = count
        PageHeader.fill(p, kind: isLeaf ? .leaf : .branch, count: n, span: 1, version: version, extra: 0)
        var end = pageBytes
        // Cells that lie in the arena just as they go on the page (each ending where the one
        // before it starts: a node copied from its page or filled in key order keeps its cells
        // so) are copied as one run, with one memcpy.
        var runStart = 0, runEnd = pageBytes  // the run in the arena
        var runPageEnd = pageBytes  // where the run ends on the page
        for i in 0..<n {
            let o = Int(offsets[i])
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
