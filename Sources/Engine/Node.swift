/// A value held by a node being rewritten: still inline, already in an overflow extent of
/// the base version, or new and large (written to its own extent at commit).
enum LeafValue {
    case inline([UInt8])
    case overflow(ref: UInt64, length: Int)
    case large([UInt8])

    var length: Int {
        switch self {
        case .inline(let b), .large(let b): return b.count
        case .overflow(_, let n): return n
        }
    }

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
final class DirtyNode {
    var isLeaf: Bool
    var keys: [[UInt8]]
    var values: [LeafValue]
    var children: [Child]
    /// Serialized size of the cells, offset array included.
    var size: Int
    /// The page this node was copied from (used only by the overwrite-in-place broken variant).
    var origin: UInt64 = 0

    init(leafKeys keys: [[UInt8]], values: [LeafValue]) {
        isLeaf = true
        self.keys = keys
        self.values = values
        children = []
        size = 0
        recomputeSize()
    }

    init(branchKeys keys: [[UInt8]], children: [Child]) {
        isLeaf = false
        self.keys = keys
        values = []
        self.children = children
        size = 0
        recomputeSize()
    }

    static func leafCellSize(keyCount: Int, value: LeafValue) -> Int {
        switch value {
        case .inline(let v): return 2 + 8 + keyCount + v.count
        case .overflow, .large: return 2 + 16 + keyCount
        }
    }

    static func branchCellSize(keyCount: Int) -> Int { 2 + 10 + keyCount }

    func cellSize(_ i: Int) -> Int {
        isLeaf ? DirtyNode.leafCellSize(keyCount: keys[i].count, value: values[i])
            : DirtyNode.branchCellSize(keyCount: keys[i].count)
    }

    func recomputeSize() {
        var s = 0
        for i in 0..<keys.count { s += cellSize(i) }
        size = s
    }

    var overflows: Bool { size > Layout.nodeCapacity }

    /// Index of the first key >= `key`, and whether it is equal.
    func search(_ key: [UInt8]) -> (index: Int, found: Bool) {
        var lo = 0, hi = keys.count
        while lo < hi {
            let mid = (lo + hi) / 2
            let c = compareBytes(keys[mid], key)
            if c == 0 { return (mid, true) }
            if c < 0 { lo = mid + 1 } else { hi = mid }
        }
        return (lo, false)
    }

    func childIndex(_ key: [UInt8]) -> Int {
        var lo = 1, hi = keys.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if compareBytes(keys[mid], key) <= 0 { lo = mid + 1 } else { hi = mid }
        }
        return lo - 1
    }

    /// Splits an overfull node in two, both within capacity. `appending` (the change was at the
    /// right edge) keeps the left node full, so sequential loads pack pages instead of leaving
    /// them half empty. Returns the right node; its first key is the separator.
    func split(appending: Bool) -> DirtyNode {
        let n = keys.count
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
        let right: DirtyNode
        if isLeaf {
            right = DirtyNode(leafKeys: Array(keys[best...]), values: Array(values[best...]))
            values.removeSubrange(best...)
        } else {
            right = DirtyNode(branchKeys: Array(keys[best...]), children: Array(children[best...]))
            children.removeSubrange(best...)
        }
        keys.removeSubrange(best...)
        size = prefix[best]
        return right
    }

    /// Copies a node out of its page.
    static func decode(_ page: PageView) throws -> DirtyNode {
        guard PageHeader.checksumMatches(page.raw) else {
            throw CorruptNode(ref: page.ref, detail: "node checksum mismatch")
        }
        let kind = try page.kind()
        let n = page.count
        var keys: [[UInt8]] = []
        keys.reserveCapacity(n + 1)
        switch kind {
        case .leaf:
            var values: [LeafValue] = []
            values.reserveCapacity(n + 1)
            for i in 0..<n {
                keys.append(Array(try page.leafKey(i)))
                switch try page.leafValue(i) {
                case .inline(let v): values.append(.inline(Array(v)))
                case .overflow(let r, let len): values.append(.overflow(ref: r, length: len))
                }
            }
            return DirtyNode(leafKeys: keys, values: values)
        case .branch:
            var children: [Child] = []
            children.reserveCapacity(n + 1)
            for i in 0..<n {
                keys.append(Array(try page.branchKey(i)))
                children.append(.page(try page.branchChild(i)))
            }
            return DirtyNode(branchKeys: keys, children: children)
        default:
            throw CorruptNode(ref: page.ref, detail: "expected a tree node, found a \(kind.name) node")
        }
    }

    /// Serializes into a page. Children and large values must already have refs.
    func encode(into p: UnsafeMutableRawBufferPointer, version: UInt64, childRefs: [UInt64]) {
        let n = keys.count
        PageHeader.fill(p, kind: isLeaf ? .leaf : .branch, count: n, span: 1, version: version, extra: 0)
        var end = Layout.pageSize
        for i in 0..<n {
            let key = keys[i]
            let cell = cellSize(i) - 2
            end -= cell
            p.setU16(UInt16(end), at: Layout.pageHeaderSize + 2 * i)
            if isLeaf {
                p.setU16(UInt16(key.count), at: end)
                switch values[i] {
                case .inline(let v):
                    p.setU8(0, at: end + 2); p.setU8(0, at: end + 3)
                    p.setU32(UInt32(v.count), at: end + 4)
                    key.withUnsafeBytes { p.copy($0, at: end + 8) }
                    v.withUnsafeBytes { p.copy($0, at: end + 8 + key.count) }
                case .overflow(let r, let len):
                    p.setU8(1, at: end + 2); p.setU8(0, at: end + 3)
                    p.setU32(UInt32(len), at: end + 4)
                    p.setU64(r, at: end + 8)
                    key.withUnsafeBytes { p.copy($0, at: end + 16) }
                case .large:
                    preconditionFailure("large value not yet written to an overflow extent")
                }
            } else {
                p.setU64(childRefs[i], at: end)
                p.setU16(UInt16(key.count), at: end + 8)
                key.withUnsafeBytes { p.copy($0, at: end + 10) }
            }
        }
        PageHeader.seal(p)
    }
}
