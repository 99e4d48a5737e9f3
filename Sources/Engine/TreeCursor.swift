/// Lookups in one table in ascending key order — a merge walk, as of sorted candidates from an
/// index — that remember the path they took: a key inside the current leaf's range is searched
/// in that leaf alone, and a key past it climbs only to the lowest node whose range holds it,
/// where a fresh `get` would descend from the root each time.
///
/// The path is kept only where the pages it points into stay valid and unchanged (a read
/// transaction, `lendsStableBytes`); in a write, each lookup is a plain descent, since the
/// writer's nodes change under it. Any order of keys is answered correctly; ascending order
/// is what makes it cheap.
package struct TreeCursor {
    /// One node of the path: its page, its key range [low, high) (nil: unbounded on that side;
    /// the bounds point into the parents' pages) and, for a branch, the child taken.
    private struct Level {
        var page: PageView
        var low: UnsafeRawBufferPointer?
        var high: UnsafeRawBufferPointer?
        var child: Int
    }

    private let root: Child?
    private let pages: PageSource
    private let keepsPath: Bool
    private var path: [Level] = []
    /// Where a descent is counted (`Transaction.descents`); the cursor lives no longer than
    /// its transaction.
    private unowned let tx: Transaction

    init(root: Child?, pages: PageSource, keepsPath: Bool, tx: Transaction) {
        self.root = root
        self.pages = pages
        self.keepsPath = keepsPath
        self.tx = tx
    }

    /// The value of `key` (nil when absent), lent to `body`: the bytes are valid during the call.
    package mutating func withValue<T>(_ key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) throws -> T)
        throws -> T
    {
        guard keepsPath, case .page(let top) = root else {
            tx.descents &+= 1
            guard let v = try Tree.find(root, key: key, pages: pages) else { return try body(nil) }
            return try Tree.lend(v, pages: pages, body)
        }
        guard let leaf = try leaf(for: key, top: top) else { return try body(nil) }
        let (i, found) = try leaf.leafSearch(key)
        guard found else { return try body(nil) }
        return try body(try Tree.valueBytes(try leaf.leafValue(i), pages))
    }

    /// The leaf whose range holds `key`: the current one, or reached from the lowest node on
    /// the path whose range holds it.
    private mutating func leaf(for key: UnsafeRawBufferPointer, top: UInt64) throws -> PageView? {
        var descends = path.isEmpty
        while let last = path.last, !TreeCursor.holds(last, key) {
            path.removeLast()
            descends = true
        }
        // Counted once per lookup that leaves the current leaf, from wherever it climbed to.
        if descends { tx.descents &+= 1 }
        if path.isEmpty {
            path.append(Level(page: try pages.page(top), low: nil, high: nil, child: 0))
        }
        while path.count <= Tree.maxDepth {
            let node = path[path.count - 1]
            switch node.page.kindByte {
            case PageKind.leaf.rawValue:
                return node.page
            case PageKind.branch.rawValue:
                let i = try node.page.childIndex(key)
                path[path.count - 1].child = i
                // A branch's key 0 is a lower bound only: the child's range starts at the node's.
                let low = i == 0 ? node.low : try node.page.branchKey(i)
                let high = i + 1 < node.page.count ? try node.page.branchKey(i + 1) : node.high
                path.append(Level(page: try pages.page(try node.page.branchChild(i)), low: low, high: high, child: 0))
            default:
                throw node.page.notATreeNode()
            }
        }
        throw CorruptNode(ref: 0, detail: "tree deeper than \(Tree.maxDepth) levels (a cycle?)")
    }

    private static func holds(_ level: Level, _ key: UnsafeRawBufferPointer) -> Bool {
        if let low = level.low, compareBytes(key, low) < 0 { return false }
        if let high = level.high, compareBytes(key, high) >= 0 { return false }
        return true
    }
}

extension Transaction {
    /// A cursor for lookups in `table` in ascending key order (see `TreeCursor`), valid while
    /// this transaction stays on its version and, in a write, until the table next changes.
    package func cursor(table: String) throws -> TreeCursor {
        try guarded { TreeCursor(root: try state(table).root, pages: pages, keepsPath: lendsStableBytes, tx: self) }
    }
}
