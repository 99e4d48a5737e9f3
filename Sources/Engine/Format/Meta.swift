/// The top node of a version: everything reachable from one slot. The catalog tree maps
/// table names to `TableRecord`s; the free list says which pages are not reachable.
///
/// The free list's chunk pages are named by refs in the top node while they fit, else by a
/// chain of root pages (`freeListRef`). After the refs come free extents (format 4 and later):
/// the whole list while it is small, else its recent extents and its pending run while they
/// fit. A commit writes the top node anyway, so what sits there costs no page. For the same
/// reason a catalog that is one small leaf (format 4 and later) is embedded at the end of the
/// top node: `catalogRoot` then points inside the top node's own page.
struct Meta: Equatable {
    var version: UInt64
    var catalogRoot: UInt64  // 0: no tables; not page-aligned: embedded here
    var tableCount: UInt64
    var freeListRef: UInt64  // 0: no root chain
    var pageCount: UInt64  // pages in use by this version's file, header included
    var freeListChunks: [UInt64] = []
    /// Reusable extents (by start), then pending ones (by tag), as in chunk pages.
    var freeExtents: [FreeExtent] = []

    /// Byte offsets in the top node's page (docs/FORMAT.md §1.5), after the page header.
    enum Offset {
        static let version = 32
        static let catalogRoot = 40
        static let tableCount = 48
        static let freeListRef = 56
        static let pageCount = 64
        /// u32: inline chunk refs.
        static let inlineChunkCount = 72
        /// u16: inline free extents.
        static let inlineExtentCount = 76
        /// u16, zero.
        static let reserved = 78
        /// The inline chunk refs, then the inline extents.
        static let inline = 80
    }
    static let inlineOffset = Offset.inline
    static func inlineChunkCapacity(_ g: PageGeometry) -> Int { (g.pageBytes - inlineOffset) / 8 }
    /// In a plain file.
    static let inlineChunkCapacity = inlineChunkCapacity(.plain)
    static func inlineExtentCapacity(_ g: PageGeometry) -> Int { (g.pageBytes - inlineOffset) / FreeExtent.size }
    /// The most an embedded catalog leaf may take of the top node (the rest is the free list's).
    static let embeddedCatalogLimit = 1024
    /// The bytes an embedded leaf of `size` cell bytes (offsets included) takes.
    static func embeddedBytes(nodeSize size: Int) -> Int { (Layout.pageHeaderSize + size + 7) / 8 * 8 }

    /// Where in this top node the catalog leaf starts, when it is embedded.
    var embeddedCatalogOffset: Int? {
        let o = Int(catalogRoot % UInt64(Layout.pageSize))
        return o == 0 ? nil : o
    }

    static func decode(_ p: PageView) throws -> Meta {
        guard PageHeader.checksumMatches(p.raw, ref: p.ref) else {
            throw CorruptNode(ref: p.ref, detail: "top node checksum mismatch")
        }
        try p.expect(.meta)
        var m = Meta(
            version: p.raw.u64(Offset.version), catalogRoot: p.raw.u64(Offset.catalogRoot),
            tableCount: p.raw.u64(Offset.tableCount), freeListRef: p.raw.u64(Offset.freeListRef),
            pageCount: p.raw.u64(Offset.pageCount))
        guard m.version == p.version else {
            throw CorruptNode(
                ref: p.ref, detail: "top node version \(m.version) disagrees with its header \(p.version)")
        }
        guard m.pageCount >= 2 else { throw CorruptNode(ref: p.ref, detail: "top node claims \(m.pageCount) pages") }
        var end = p.raw.count
        if let o = m.embeddedCatalogOffset {
            guard m.catalogRoot - UInt64(o) == p.ref, o % 8 == 0, o >= inlineOffset,
                o + Layout.pageHeaderSize <= p.raw.count
            else {
                throw CorruptNode(
                    ref: p.ref, detail: "top node's catalog ref \(m.catalogRoot) points inside a page, not its own tail"
                )
            }
            end = o
        }
        let chunks = Int(p.raw.u32(Offset.inlineChunkCount)), extents = Int(p.raw.u16(Offset.inlineExtentCount))
        guard 8 * chunks + FreeExtent.size * extents <= end - inlineOffset, p.raw.u16(Offset.reserved) == 0,
            chunks == 0 || m.freeListRef == 0
        else {
            throw CorruptNode(
                ref: p.ref, detail: "top node claims \(chunks) inline free-list chunks and \(extents) inline extents")
        }
        m.freeListChunks = (0..<chunks).map { p.raw.u64(inlineOffset + 8 * $0) }
        let extentsAt = inlineOffset + 8 * chunks
        m.freeExtents = (0..<extents).map { FreeExtent.decode(p.raw, at: extentsAt + FreeExtent.size * $0) }
        return m
    }

    /// A top node with no embedded catalog, for page `page` of `out`'s file.
    func encode(_ out: PageWriter, page: UInt64) -> [UInt8] {
        var buf = [UInt8](repeating: 0, count: out.geometry.pageBytes)
        buf.withUnsafeMutableBytes {
            encode(into: $0, checksumSkipsGap: out.checksumSkipsGap, placedAt: out.placement(page))
        }
        return buf
    }

    /// Into a zeroed page of `pageBytes` bytes, with `catalog` (the leaf `catalogRoot` names)
    /// at its end when the catalog is embedded.
    func encode(
        into p: UnsafeMutableRawBufferPointer, catalog: DirtyNode? = nil, checksumSkipsGap: Bool, placedAt ref: UInt64?
    ) {
        PageHeader.fill(p, kind: .meta, count: 0, span: 1, version: version, extra: 0)
        p.setU64(version, at: Offset.version)
        p.setU64(catalogRoot, at: Offset.catalogRoot)
        p.setU64(tableCount, at: Offset.tableCount)
        p.setU64(freeListRef, at: Offset.freeListRef)
        p.setU64(pageCount, at: Offset.pageCount)
        p.setU32(UInt32(freeListChunks.count), at: Offset.inlineChunkCount)
        p.setU16(UInt16(freeExtents.count), at: Offset.inlineExtentCount)
        for (i, r) in freeListChunks.enumerated() { p.setU64(r, at: Meta.inlineOffset + 8 * i) }
        let extentsAt = Meta.inlineOffset + 8 * freeListChunks.count
        for (i, e) in freeExtents.enumerated() { e.encode(into: p, at: extentsAt + FreeExtent.size * i) }
        var end = p.count
        if let o = embeddedCatalogOffset, let catalog {
            catalog.encode(
                into: UnsafeMutableRawBufferPointer(rebasing: p[o...]), version: version,
                checksumSkipsGap: checksumSkipsGap,
                placedAt: ref.map { $0 + UInt64(o) })
            end = o
        }
        let used = extentsAt + FreeExtent.size * freeExtents.count
        PageHeader.seal(p, gap: checksumSkipsGap ? used..<end : nil, placedAt: ref)
    }
}
