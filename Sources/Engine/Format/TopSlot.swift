/// One of the two top-pointer slots in the header (docs/FORMAT.md §1.1): where a committed
/// version's top (meta) node is, which version it is, and the checksum of that node. The slot
/// checksums itself, so a half-written slot is recognised as garbage rather than followed.
/// Its layout is defined here only: every reader slices it out of a header with
/// `init(header:index:)`, every writer lays it down with `encode(into:at:)`.
public struct TopSlot: Equatable, Sendable {
    public var ref: UInt64
    public var version: UInt64
    public var topChecksum: UInt64
    public var slotChecksum: UInt64

    /// Byte offsets inside a slot (`Layout.slotSize` bytes).
    enum Offset {
        static let ref = 0
        static let version = 8
        static let topChecksum = 16
        /// Of the first 24 bytes.
        static let slotChecksum = 24
    }

    init(ref: UInt64, version: UInt64, topChecksum: UInt64) {
        self.ref = ref
        self.version = version
        self.topChecksum = topChecksum
        self.slotChecksum = TopSlot.checksum(ref: ref, version: version, topChecksum: topChecksum)
    }

    /// The slot's fields as `raw` (at least `Layout.slotSize` bytes) holds them.
    init(raw: UnsafeRawBufferPointer) {
        ref = raw.u64(Offset.ref)
        version = raw.u64(Offset.version)
        topChecksum = raw.u64(Offset.topChecksum)
        slotChecksum = raw.u64(Offset.slotChecksum)
    }

    /// Slot `index` (0 or 1) of a header page.
    init(header: UnsafeRawBufferPointer, index: Int) {
        let o = Layout.slotOffsets[index]
        self.init(raw: UnsafeRawBufferPointer(rebasing: header[o..<(o + Layout.slotSize)]))
    }

    /// The checksum a top node's page stores first: what a slot's `topChecksum` must equal.
    static func topChecksum(ofTopPage page: UnsafeRawBufferPointer) -> UInt64 {
        page.u64(PageHeader.Offset.checksum)
    }

    static func checksum(ref: UInt64, version: UInt64, topChecksum: UInt64) -> UInt64 {
        withUnsafeTemporaryAllocation(byteCount: Offset.slotChecksum, alignment: 8) { p in
            p.setU64(ref, at: Offset.ref)
            p.setU64(version, at: Offset.version)
            p.setU64(topChecksum, at: Offset.topChecksum)
            return Checksum.of(UnsafeRawBufferPointer(p))
        }
    }

    /// The slot's own bytes agree with its checksum and it names a plausible node.
    public var isSelfConsistent: Bool {
        ref != 0 && ref % UInt64(Layout.pageSize) == 0 && version != 0
            && slotChecksum == TopSlot.checksum(ref: ref, version: version, topChecksum: topChecksum)
    }

    public var isBlank: Bool { ref == 0 && version == 0 && topChecksum == 0 && slotChecksum == 0 }

    func encode(into p: UnsafeMutableRawBufferPointer, at o: Int) {
        p.setU64(ref, at: o + Offset.ref)
        p.setU64(version, at: o + Offset.version)
        p.setU64(topChecksum, at: o + Offset.topChecksum)
        p.setU64(slotChecksum, at: o + Offset.slotChecksum)
    }

    func encoded() -> [UInt8] {
        var b = [UInt8](repeating: 0, count: Layout.slotSize)
        b.withUnsafeMutableBytes { encode(into: $0, at: 0) }
        return b
    }
}

/// The one rule for whether a slot names an intact top node (docs/FORMAT.md §1.1 and §1.5):
/// recovery, snapshots, `stats()` and `fief db inspect` all judge slots with it.
extension TopSlot {
    /// The top node this slot names, decoded, from its page `top` (read at `ref`): the page's
    /// stored checksum is the slot's `topChecksum`, the node passes `Meta.decode` (its own
    /// checksum, kind and fields) and is the slot's version. `index` only names the slot in
    /// the error.
    func decodeTop(_ top: PageView, index: Int) throws -> Meta {
        guard top.storedChecksum == topChecksum else {
            throw CorruptNode(ref: ref, detail: "top node does not match the checksum in slot \(index)")
        }
        let meta = try Meta.decode(top)
        guard meta.version == version else {
            throw CorruptNode(ref: ref, detail: "top node is version \(meta.version) but slot \(index) says \(version)")
        }
        return meta
    }

    /// Whether `top`, read at `ref`, is an intact top node this slot names, without decoding
    /// it (a report on both slots, where the inactive one may name a page since reused).
    func names(topPage top: UnsafeRawBufferPointer) -> Bool {
        isSelfConsistent && TopSlot.topChecksum(ofTopPage: top) == topChecksum
            && PageHeader.checksumMatches(top, ref: ref)
    }
}
