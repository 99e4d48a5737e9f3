/// Puts nodes and overflow values into newly allocated pages. Shared by commits and by
/// compacted copies.
enum NodeWriter {
    static func node(_ n: DirtyNode, version: UInt64, _ alloc: inout FreeList, _ out: inout PageWriter) throws -> UInt64
    {
        let page = alloc.allocate(1)
        let skipsGap = out.checksumSkipsGap, placed = out.placement(page)
        try out.add(page: page, nodeBytes: n.pageBytes, zeroed: false) {
            n.encode(into: $0, version: version, checksumSkipsGap: skipsGap, placedAt: placed)
        }
        return page * UInt64(Layout.pageSize)
    }

    static func overflow(
        _ bytes: UnsafeRawBufferPointer, version: UInt64, _ alloc: inout FreeList, _ out: inout PageWriter
    ) throws -> UInt64 {
        let g = out.geometry
        let span = OverflowExtent.span(valueLength: bytes.count, g)
        let start = alloc.allocate(span)
        let placed = out.placement(start)
        try out.add(page: start, nodeBytes: g.extentBytes(span: span), zeroed: true) { p in
            PageHeader.fill(p, kind: .overflow, count: 0, span: span, version: version, extra: UInt64(bytes.count))
            p.copy(bytes, at: OverflowExtent.valueOffset)
            PageHeader.seal(p, placedAt: placed)
        }
        return start * UInt64(Layout.pageSize)
    }

    /// How many in-memory nodes `c`'s tree has: the pages `tree` will take for nodes.
    static func dirtyNodes(_ c: Child?) -> Int {
        guard case .dirty(let n)? = c else { return 0 }
        return dirtyNodes(n)
    }

    private static func dirtyNodes(_ n: DirtyNode) -> Int {
        var count = 1
        if !n.isLeaf { n.forEachDirtyChild { _, child in count += dirtyNodes(child) } }
        return count
    }

    /// Writes every in-memory node of a tree, children first, and its large values to
    /// overflow extents; returns the root's ref (0 for an empty tree). Nodes of the base
    /// version keep their refs.
    static func tree(
        _ c: Child?, version: UInt64, _ alloc: inout FreeList, _ out: inout PageWriter, written: WrittenNodes? = nil
    ) throws -> UInt64 {
        guard let c else { return 0 }
        switch c {
        case .page(let ref):
            return ref
        case .dirty(let n):
            if n.isLeaf {
                if n.mayHoldLargeValues {
                    for i in 0..<n.count where n.isPendingLarge(i) {
                        guard case .inline(let bytes) = n.value(i) else { continue }
                        let ref = try overflow(bytes, version: version, &alloc, &out)
                        n.setValue(at: i, .overflow(ref: ref, length: bytes.count))
                    }
                }
            } else {
                // Untouched children keep the ref their cell already holds.
                try n.forEachDirtyChild { i, child in
                    n.setChildRef(at: i, try tree(.dirty(child), version: version, &alloc, &out, written: written))
                }
            }
            #if FIEF_BROKEN_VARIANTS
                if BrokenVariant.on(.overwriteInPlace) && n.origin != 0 {
                    return try overwriteInPlace(n, version: version, &out)
                }
            #endif
            let ref = try node(n, version: version, &alloc, &out)
            written?.record(ref, n)
            return ref
        }
    }

    #if FIEF_BROKEN_VARIANTS
        /// The overwrite-in-place broken variant: the node goes back to the page it was read
        /// from, which the version before this commit still reaches (I1 broken).
        private static func overwriteInPlace(_ n: DirtyNode, version: UInt64, _ out: inout PageWriter) throws -> UInt64
        {
            var buf = [UInt8](repeating: 0, count: n.pageBytes)
            let skipsGap = out.checksumSkipsGap, placed = out.placement(n.origin / UInt64(Layout.pageSize))
            buf.withUnsafeMutableBytes {
                n.encode(into: $0, version: version, checksumSkipsGap: skipsGap, placedAt: placed)
            }
            try out.add(page: n.origin / UInt64(Layout.pageSize), buf)
            return n.origin
        }
    #endif
}
