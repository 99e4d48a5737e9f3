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

    static let inlineChunkCountOffset = 72  // u32
    static let inlineExtentCountOffset = 76  // u16
    static let inlineOffset = 80
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
            version: p.raw.u64(32), catalogRoot: p.raw.u64(40), tableCount: p.raw.u64(48),
            freeListRef: p.raw.u64(56), pageCount: p.raw.u64(64))
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
        let chunks = Int(p.raw.u32(inlineChunkCountOffset)), extents = Int(p.raw.u16(inlineExtentCountOffset))
        guard 8 * chunks + FreeExtent.size * extents <= end - inlineOffset, p.raw.u16(78) == 0,
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
        p.setU64(version, at: 32); p.setU64(catalogRoot, at: 40); p.setU64(tableCount, at: 48)
        p.setU64(freeListRef, at: 56); p.setU64(pageCount, at: 64)
        p.setU32(UInt32(freeListChunks.count), at: Meta.inlineChunkCountOffset)
        p.setU16(UInt16(freeExtents.count), at: Meta.inlineExtentCountOffset)
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

/// How a table's keys and values are typed. Storage is bytes; the kind says how to read them.
public enum KeyKind: UInt8, Sendable, CustomStringConvertible {
    case int64 = 1
    case bytes = 2
    public var description: String { self == .int64 ? "int64" : "bytes" }
}

public typealias ValueKind = KeyKind

/// A table's entry in the catalog tree.
struct TableRecord {
    var root: UInt64
    var count: UInt64
    var keyKind: KeyKind
    var valueKind: ValueKind

    static let size = 24

    func encode() -> [UInt8] {
        var b = [UInt8](repeating: 0, count: TableRecord.size)
        b.withUnsafeMutableBytes { p in
            p.setU64(root, at: 0); p.setU64(count, at: 8)
            p.setU8(keyKind.rawValue, at: 16); p.setU8(valueKind.rawValue, at: 17)
        }
        return b
    }

    static func decode(_ b: [UInt8], table: String) throws -> TableRecord {
        guard b.count == size else {
            throw CorruptNode(ref: 0, detail: "catalog entry for '\(table)' has \(b.count) bytes")
        }
        return try b.withUnsafeBytes { p in
            guard let k = KeyKind(rawValue: p.u8(16)), let v = ValueKind(rawValue: p.u8(17)) else {
                throw CorruptNode(ref: 0, detail: "catalog entry for '\(table)' has unknown key or value kind")
            }
            return TableRecord(root: p.u64(0), count: p.u64(8), keyKind: k, valueKind: v)
        }
    }
}
