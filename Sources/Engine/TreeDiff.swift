/// The keys that differ between two versions of one tree, each list in key order.
package struct KeyDiff: Equatable, Sendable {
    /// In the old version only.
    package var deleted: [[UInt8]] = []
    /// In the new version only.
    package var inserted: [[UInt8]] = []
    /// In both, with different values.
    package var modified: [[UInt8]] = []

    package init(deleted: [[UInt8]] = [], inserted: [[UInt8]] = [], modified: [[UInt8]] = []) {
        self.deleted = deleted
        self.inserted = inserted
        self.modified = modified
    }

    package var isEmpty: Bool { deleted.isEmpty && inserted.isEmpty && modified.isEmpty }
}

/// One version of a tree for `Tree.diff`: its root (0 for an empty tree) and the pages of a
/// version the caller keeps pinned for the whole call.
struct TreeVersion {
    let root: UInt64
    let pages: PageSource
}

extension Tree {
    /// The keys deleted, inserted and modified from `old` to `new`, and how many pages were read.
    ///
    /// Why comparing refs is enough to skip a subtree: a writer never writes into a page any live
    /// version can reach (copy-on-write), and a page freed by a later version is reused only when
    /// no pinned version can still see it. Both versions are pinned, so a page ref reachable from
    /// both names the same bytes in both, and the subtree under it holds the same entries. Set
    /// algebra does the rest: each key sits in a tree once, so removing one shared subtree from
    /// both sides removes no difference. The cost is the pages on the paths to what changed.
    ///
    /// `sharesPages` is false when the versions live in different files (a `compact` came
    /// between them): refs then mean nothing across the two and every page is read.
    static func diff(old: TreeVersion, new: TreeVersion, sharesPages: Bool = true) throws -> (
        keys: KeyDiff, pagesRead: Int
    ) {
        var out = KeyDiff()
        if sharesPages && old.root == new.root { return (out, 0) }
        var a = DiffSide(old), b = DiffSide(new)
        try a.start()
        try b.start()
        while true {
            // One side used up: the other's rest is all inserted (or all deleted).
            guard let x = a.front else {
                guard let y = b.front else { break }
                if case .entry(let l, _) = y { out.inserted.append(l); b.drop() } else { try b.expand() }
                continue
            }
            guard let y = b.front else {
                if case .entry(let k, _) = x { out.deleted.append(k); a.drop() } else { try a.expand() }
                continue
            }
            switch (x, y) {
            case (.subtree(let r, _, _), .subtree(let s, _, _)) where sharesPages && r == s:
                a.drop()
                b.drop()
            case (.entry(let k, let v), .entry(let l, let w)):
                let c = compareBytes(k, l)
                if c < 0 {
                    out.deleted.append(k); a.drop()
                } else if c > 0 {
                    out.inserted.append(l); b.drop()
                } else {
                    if try !sameValue(v, a.pages, w, b.pages, sharesPages: sharesPages) { out.modified.append(k) }
                    a.drop()
                    b.drop()
                }
            case (.entry(let k, _), .subtree(_, let low, _)):
                // Every key left on b's side is >= the subtree's lower bound.
                if let low, compareBytes(k, low) < 0 { out.deleted.append(k); a.drop() } else { try b.expand() }
            case (.subtree(_, let low, _), .entry(let l, _)):
                if let low, compareBytes(l, low) < 0 { out.inserted.append(l); b.drop() } else { try a.expand() }
            case (.subtree(_, let lowA, let hA), .subtree(_, let lowB, let hB)):
                // Open the subtree that starts first; at the same start, the taller one, so the
                // other side's matching children come into view; at the same height, both.
                let c = DiffSide.compareBounds(lowA, lowB)
                if c < 0 {
                    try a.expand()
                } else if c > 0 {
                    try b.expand()
                } else if hA > hB {
                    try a.expand()
                } else if hB > hA {
                    try b.expand()
                } else {
                    try a.expand(); try b.expand()
                }
            }
        }
        return (out, a.pagesRead + b.pagesRead)
    }

    private static func sameValue(
        _ v: StoredValue, _ p: PageSource, _ w: StoredValue, _ q: PageSource, sharesPages: Bool
    ) throws -> Bool {
        if sharesPages, case .overflow(let r, let n) = v, case .overflow(let s, let m) = w, r == s, n == m {
            return true
        }
        let x = try valueBytes(v, p), y = try valueBytes(w, q)
        return x.count == y.count && compareBytes(x, y) == 0
    }
}

/// One tree's side of a diff: what is left to compare, in key order, as a stack whose top is
/// the front. An item is a subtree not yet opened, or an entry of a leaf already opened.
private struct DiffSide {
    enum Item {
        /// `low`: a key no greater than any key in the subtree (nil: no bound). `height`:
        /// levels below it, 0 for a leaf; only steers which side opens first, so a wrong
        /// height costs pages, never correctness.
        case subtree(ref: UInt64, low: [UInt8]?, height: Int)
        /// The value points into the pinned version's mapping, valid for the whole diff.
        case entry(key: [UInt8], value: StoredValue)
    }

    let root: UInt64
    let pages: PageSource
    private var stack: [Item] = []
    /// Distinct pages read: the pages of the leftmost path, read to learn the height, are not
    /// counted again when the diff opens them.
    private(set) var pagesRead = 0
    private var leftmostPath: Set<UInt64> = []

    init(_ v: TreeVersion) {
        root = v.root
        pages = v.pages
    }

    var front: Item? { stack.last }

    mutating func drop() { stack.removeLast() }

    /// Pushes the root, measuring the tree's height down its leftmost path (every leaf of a
    /// B+tree is at the same depth, so that is every subtree's height too).
    mutating func start() throws {
        guard root != 0 else { return }
        var height = 0, ref = root
        while true {
            let p = try pages.page(ref)
            pagesRead += 1
            leftmostPath.insert(ref)
            switch try p.kind() {
            case .leaf: stack = [.subtree(ref: root, low: nil, height: height)]; return
            case .branch:
                guard height < Tree.maxDepth else {
                    throw CorruptNode(ref: ref, detail: "tree deeper than \(Tree.maxDepth) levels (a cycle?)")
                }
                height += 1
                ref = try p.branchChild(0)
            default: throw p.notATreeNode()
            }
        }
    }

    /// Replaces the front subtree with its children (or its leaf's entries).
    mutating func expand() throws {
        guard case .subtree(let ref, let low, let height) = stack.removeLast() else { return }
        let p = try pages.page(ref)
        if leftmostPath.remove(ref) == nil { pagesRead += 1 }
        // A sound tree has each page once; more reads than the version has pages is a cycle.
        guard UInt64(pagesRead) <= pages.limit / UInt64(Layout.pageSize) else {
            throw CorruptNode(ref: ref, detail: "tree reaches more pages than the file holds (a cycle?)")
        }
        switch try p.kind() {
        case .leaf:
            for i in stride(from: p.count - 1, through: 0, by: -1) {
                stack.append(.entry(key: Array(try p.leafKey(i)), value: try p.leafValue(i)))
            }
        case .branch:
            // Separator i bounds child i from below; child 0 only has its parent's bound.
            for i in stride(from: p.count - 1, through: 0, by: -1) {
                let bound = i == 0 ? low : Array(try p.branchKey(i))
                stack.append(.subtree(ref: try p.branchChild(i), low: bound, height: max(height - 1, 0)))
            }
        default:
            throw p.notATreeNode()
        }
    }

    static func compareBounds(_ a: [UInt8]?, _ b: [UInt8]?) -> Int {
        switch (a, b) {
        case (nil, nil): return 0
        case (nil, _): return -1
        case (_, nil): return 1
        case let (x?, y?): return compareBytes(x, y)
        }
    }
}
