/// The pages one table's tree holds and how full its leaves are: what LMDB's `mdb_stat`
/// prints per database, plus the fill that says whether a load packed its pages.
public struct TableSpace: Sendable, Equatable, Encodable {
    public let name: String
    public let entries: Int
    public var depth = 0
    public var branchPages = 0
    public var leafPages = 0
    public var overflowPages = 0
    /// Bytes the leaves' headers, cell offsets and cells take.
    public var leafBytesUsed = 0
    /// What the leaves could hold (an encrypted page keeps less than a plain one).
    public var leafBytesCapacity = 0

    public var pages: Int { branchPages + leafPages + overflowPages }
    /// Used share of the leaves' bytes, 0...1 (JSON carries the two byte counts).
    public var leafFill: Double { leafBytesCapacity == 0 ? 0 : Double(leafBytesUsed) / Double(leafBytesCapacity) }
}

extension ReadTransaction {
    /// Walks every table's tree once, counting its pages by kind and its leaves' used bytes.
    /// Reads page headers and offset arrays only; a damaged node throws `corrupt`.
    package func tableSpace() throws -> [TableSpace] {
        try guarded {
            try ensureActive()
            var out: [TableSpace] = []
            for name in try tableNames() {
                let s = try state(name)
                var space = TableSpace(name: name, entries: Int(s.count))
                if let root = s.root { try measure(root, depth: 1, into: &space) }
                out.append(space)
            }
            return out
        }
    }

    private func measure(_ node: Child, depth: Int, into space: inout TableSpace) throws {
        guard depth <= Tree.maxDepth else {
            throw CorruptNode(ref: 0, detail: "table deeper than \(Tree.maxDepth) levels")
        }
        space.depth = max(space.depth, depth)
        let page: PageView
        switch node {
        case .page(let ref): page = try pages.page(ref)
        case .dirty: return  // a read transaction sees no dirty nodes
        }
        let n = page.count
        switch try page.kind() {
        case .branch:
            space.branchPages += 1
            for i in 0..<n { try measure(.page(try page.branchChild(i)), depth: depth + 1, into: &space) }
        case .leaf:
            space.leafPages += 1
            space.leafBytesCapacity += page.raw.count
            space.leafBytesUsed += try page.bytesUsed()
            for i in 0..<n {
                if case .overflow(let ref, _) = try page.leafValue(i) {
                    space.overflowPages += try pages.page(ref).span
                }
            }
        default:
            throw CorruptNode(ref: page.ref, detail: "a \(try page.kind().name) node inside a table's tree")
        }
    }
}
