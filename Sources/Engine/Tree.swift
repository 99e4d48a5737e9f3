/// Reads of one B+tree, whether its nodes are pages of a committed version or nodes a
/// writer has copied into memory. Keys are byte strings in `compareBytes` order.
enum Tree {
    /// Deeper than this, a tree must be a cycle in a damaged file.
    static let maxDepth = 64

    static func get(_ root: Child?, key: [UInt8], pages: PageSource) throws -> [UInt8]? {
        try withValue(root, key: key, pages: pages) { $0.map { Array($0) } }
    }

    /// Finds `key` and lends its value (nil when absent) to `body` without copying it: the
    /// bytes belong to the snapshot's mapping or to the writer's node, valid during the call.
    static func withValue<T>(
        _ root: Child?, key: [UInt8], pages: PageSource, _ body: (UnsafeRawBufferPointer?) throws -> T
    ) throws -> T {
        guard let v = try key.withUnsafeBytes({ try find(root, key: $0, pages: pages) }) else { return try body(nil) }
        return try lend(v, pages: pages, body)
    }

    /// The stored value of `key`, or nil. Not generic, so every typed get runs this one
    /// compiled loop. An inline value points into the mapping or into a writer's node: valid
    /// until the transaction ends or the node next changes.
    static func find(_ root: Child?, key: UnsafeRawBufferPointer, pages: PageSource) throws -> StoredValue? {
        var owned: UnsafeMutableRawBufferPointer?
        return try find(root, key: key, pages: pages, owned: &owned)
    }

    /// As above; `owned` is set to the value's bytes when they lie inline in a node this write
    /// copied (`DirtyNode.mutableValue`), which the write may change in place until the tree
    /// next changes. A value on a page (shared with older versions) never is.
    @inline(__always)
    static func find(
        _ root: Child?, key: UnsafeRawBufferPointer, pages: PageSource, owned: inout UnsafeMutableRawBufferPointer?
    ) throws -> StoredValue? {
        guard var c = root else { return nil }
        var depth = 0
        while depth < maxDepth {
            switch c {
            case .dirty(let n):
                switch DirtyNode.descend(from: n, key: key, levels: maxDepth - depth) {
                case .leaf(let leaf, let i, let found)?:
                    guard found else { return nil }
                    return leaf._withUnsafeGuaranteedRef { n in
                        owned = n.mutableValue(i)
                        return n.value(i)
                    }
                case .page(let ref, let levels)?:
                    c = .page(ref)
                    depth += levels
                case nil:
                    depth = maxDepth
                }
            case .page(let top):
                // The committed part of the tree: pages only from here down.
                var ref = top
                while depth < maxDepth {
                    let p = try pages.page(ref)
                    switch p.kindByte {
                    case PageKind.leaf.rawValue:
                        let (i, found) = try p.leafSearch(key)
                        return found ? try p.leafValue(i) : nil
                    case PageKind.branch.rawValue:
                        ref = try p.branchChild(p.childIndex(key))
                        depth += 1
                    default:
                        throw p.notATreeNode()
                    }
                }
            }
        }
        throw CorruptNode(ref: 0, detail: "tree deeper than \(maxDepth) levels (a cycle?)")
    }

    /// The largest key (a copy), or nil for an empty tree: the right edge, no search.
    static func lastKey(_ root: Child?, pages: PageSource) throws -> [UInt8]? {
        try withLastKey(root, pages: pages) { $0.map { Array($0) } }
    }

    /// The largest key lent to `body` (nil for an empty tree), valid during the call: an
    /// append compares with it, where a copy per append was a quarter of the append.
    static func withLastKey<T>(
        _ root: Child?, pages: PageSource, _ body: (UnsafeRawBufferPointer?) throws -> T
    ) throws -> T {
        guard var c = root else { return try body(nil) }
        for _ in 0..<maxDepth {
            switch c {
            case .dirty(let n):
                if n.isLeaf { return try body(n.count == 0 ? nil : n.key(n.count - 1)) }
                guard let right = n.children.last else { return try body(nil) }
                c = right
            case .page(let ref):
                let p = try pages.page(ref)
                switch p.kindByte {
                case PageKind.leaf.rawValue: return try body(p.count == 0 ? nil : try p.leafKey(p.count - 1))
                case PageKind.branch.rawValue: c = .page(try p.branchChild(p.count - 1))
                default: throw p.notATreeNode()
                }
            }
        }
        throw CorruptNode(ref: 0, detail: "tree deeper than \(maxDepth) levels (a cycle?)")
    }

    static func lend<T>(_ v: StoredValue, pages: PageSource, _ body: (UnsafeRawBufferPointer?) throws -> T) throws -> T
    {
        switch v {
        case .inline(let b): return try body(b)
        case .overflow(let r, let len): return try body(try pages.overflowValue(ref: r, length: len))
        }
    }

    /// In-order walk of keys in [from, to), forward or backward. `body` returns false to stop.
    /// Keys and values are handed out as borrowed bytes, valid only during the call.
    static func scan(
        _ root: Child?, from: [UInt8]?, to: [UInt8]?, reverse: Bool, pages: PageSource,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        guard let root else { return }
        _ = try visit(root, depth: 0, from: from, to: to, reverse: reverse, pages: pages, body)
    }

    private static func inRange(_ k: UnsafeRawBufferPointer, from: [UInt8]?, to: [UInt8]?) -> (
        aboveFrom: Bool, belowTo: Bool
    ) {
        let a = from.map { f in f.withUnsafeBytes { compareBytes(k, $0) >= 0 } } ?? true
        let b = to.map { t in t.withUnsafeBytes { compareBytes(k, $0) < 0 } } ?? true
        return (a, b)
    }

    private static func visit(
        _ c: Child, depth: Int, from: [UInt8]?, to: [UInt8]?, reverse: Bool, pages: PageSource,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Bool {
        guard depth < maxDepth else {
            throw CorruptNode(ref: 0, detail: "tree deeper than \(maxDepth) levels (a cycle?)")
        }
        switch c {
        case .dirty(let n):
            if n.isLeaf {
                let indices = reverse ? Array((0..<n.count).reversed()) : Array(0..<n.count)
                for i in indices where i < n.count {
                    // Copies, not pointers into the node: `body` may change this very tree.
                    let key = Array(n.key(i))
                    let go: Bool = try key.withUnsafeBytes { kb in
                        let (above, below) = inRange(kb, from: from, to: to)
                        if !above { return reverse ? false : true }  // before the range
                        if !below { return reverse ? true : false }  // after the range
                        switch n.value(i) {
                        case .inline(let v): return try Array(v).withUnsafeBytes { try body(kb, $0) }
                        case .overflow(let r, let len):
                            return try body(kb, try pages.overflowValue(ref: r, length: len))
                        }
                    }
                    if !go { return false }
                }
                return true
            }
            let lo = from.map { n.childIndex($0) } ?? 0
            let hi = to.map { n.childIndex($0) } ?? (n.children.count - 1)
            if lo > hi { return true }
            for i in (reverse ? Array((lo...hi).reversed()) : Array(lo...hi)) {
                if !(try visit(
                    n.children[i], depth: depth + 1, from: from, to: to, reverse: reverse, pages: pages, body))
                {
                    return false
                }
            }
            return true
        case .page(let ref):
            let p = try pages.page(ref)
            switch try p.kind() {
            case .leaf:
                let n = p.count
                var i: Int
                if reverse {
                    i = try to.map { t in try t.withUnsafeBytes { try p.leafSearch($0).index } } ?? n
                    i -= 1
                    while i >= 0 {
                        let (k, v) = try p.leafCell(i)
                        if !inRange(k, from: from, to: to).aboveFrom { return false }
                        if !(try body(k, try valueBytes(v, pages))) { return false }
                        i -= 1
                    }
                } else {
                    i = try from.map { f in try f.withUnsafeBytes { try p.leafSearch($0).index } } ?? 0
                    let ahead = p.hasLongCells
                    // A leaf whose last key is below `to` holds no key at or past it: its keys
                    // are compared with `to` only when the range ends inside it.
                    var toInLeaf = false
                    if let to, i < n {
                        let last = try p.leafCell(n - 1).key
                        toInLeaf = to.withUnsafeBytes { compareBytes(last, $0) >= 0 }
                    }
                    while i < n {
                        let (k, v) = try p.leafCell(i)
                        if toInLeaf, let to, to.withUnsafeBytes({ compareBytes(k, $0) >= 0 }) { return false }
                        if ahead { p.prefetchCell(i + 1) }
                        if !(try body(k, try valueBytes(v, pages))) { return false }
                        i += 1
                    }
                }
                return true
            case .branch:
                let lo = try from.map { f in try f.withUnsafeBytes { try p.childIndex($0) } } ?? 0
                let hi = try to.map { t in try t.withUnsafeBytes { try p.childIndex($0) } } ?? (p.count - 1)
                if lo > hi { return true }
                for i in (reverse ? Array((lo...hi).reversed()) : Array(lo...hi)) {
                    // The next child comes into the cache while this one is read: a scan's
                    // leaves lie anywhere in the file, and each one's first touch waited on memory.
                    let next = reverse ? i - 1 : i + 1
                    if next >= lo && next <= hi, let r = try? p.branchChild(next) { pages.prefetch(r) }
                    if !(try visit(
                        .page(try p.branchChild(i)), depth: depth + 1, from: from, to: to, reverse: reverse,
                        pages: pages, body))
                    {
                        return false
                    }
                }
                return true
            default:
                throw p.notATreeNode()
            }
        }
    }

    static func valueBytes(_ v: StoredValue, _ pages: PageSource) throws -> UnsafeRawBufferPointer {
        switch v {
        case .inline(let b): return b
        case .overflow(let r, let len): return try pages.overflowValue(ref: r, length: len)
        }
    }
}
