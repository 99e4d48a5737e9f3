/// Writes a page header into a freshly built page buffer, checksum last.
enum PageHeader {
    /// Byte offsets in the header (docs/FORMAT.md §1.2), `Layout.pageHeaderSize` bytes.
    enum Offset {
        /// u64, of the bytes from `checksummed` on.
        static let checksum = 0
        static let checksummed = 8
        static let kind = 8
        static let flags = 9
        /// u16.
        static let count = 10
        /// u32: pages in the extent.
        static let span = 12
        /// u64: the version that wrote the page.
        static let version = 16
        /// u64; in a page whose checksum skips a gap, the gap's start and end (two u32s).
        static let extra = 24
        static let gapStart = 24
        static let gapEnd = 28
    }

    /// Flags bit: the checksum leaves out the bytes from `extra`'s low u32 to its high u32.
    static let gapFlag: UInt8 = 1
    /// Format 7 (plain): the checksum is seeded with the page's own file offset, so a whole,
    /// well-formed page written at the wrong place (a misdirected write, a page copied over
    /// another) fails it, as LMDB's and bbolt's page numbers in each page catch.
    static let placedFlag: UInt8 = 2

    static func fill(
        _ p: UnsafeMutableRawBufferPointer, kind: PageKind, count: Int, span: Int, version: UInt64, extra: UInt64
    ) {
        p.setU8(kind.rawValue, at: Offset.kind)
        p.setU8(0, at: Offset.flags)
        p.setU16(UInt16(count), at: Offset.count)
        p.setU32(UInt32(span), at: Offset.span)
        p.setU64(version, at: Offset.version)
        p.setU64(extra, at: Offset.extra)
    }

    /// Checksums the page from byte 8: all of it, or, given a `gap` (format 6 and later), all
    /// but the gap: the free bytes between a node's offset array and its cells, or after a top
    /// node's entries. No reader looks at them, and a small commit's nodes are mostly gap, so
    /// hashing them was most of a commit's checksum work. The bounds go into the header
    /// (flagged, in `extra`, which such pages leave 0), so checking a page needs only the page;
    /// `Database.check` still finds a gap that is not all zeros.
    static func seal(_ p: UnsafeMutableRawBufferPointer, gap: Range<Int>? = nil, placedAt ref: UInt64? = nil) {
        let flags = UnsafeRawBufferPointer(p).u8(Offset.flags)
        p.setU8(ref != nil ? flags | placedFlag : flags & ~placedFlag, at: Offset.flags)
        if let gap {
            let raw = UnsafeRawBufferPointer(p)
            precondition(
                raw.u64(Offset.extra) == 0 && gap.lowerBound >= Layout.pageHeaderSize && gap.upperBound <= p.count,
                "a gap in a page that uses extra, or outside the page")
            p.setU8(raw.u8(Offset.flags) | gapFlag, at: Offset.flags)
            p.setU32(UInt32(gap.lowerBound), at: Offset.gapStart)
            p.setU32(UInt32(gap.upperBound), at: Offset.gapEnd)
        }
        p.setU64(checksum(UnsafeRawBufferPointer(p), ref: ref ?? 0) ?? 0, at: Offset.checksum)
    }

    /// The gap a sealed page's checksum leaves out, if it is flagged and its bounds lie in the
    /// page; an empty range at the header's end when unflagged; nil when the bounds are damaged.
    static func gap(_ raw: UnsafeRawBufferPointer) -> Range<Int>? {
        guard raw.u8(Offset.flags) & gapFlag != 0 else { return Layout.pageHeaderSize..<Layout.pageHeaderSize }
        let start = Int(raw.u32(Offset.gapStart)), end = Int(raw.u32(Offset.gapEnd))
        guard start >= Layout.pageHeaderSize, start <= end, end <= raw.count else { return nil }
        return start..<end
    }

    /// What `seal` stores for the page at file offset `ref`: XXH64 of bytes 8 up to the gap,
    /// as the seed of XXH64 of the bytes after it (unflagged: XXH64 of bytes 8 to the end),
    /// the first hash seeded with `ref` when the page is flagged as placed. nil when the gap's
    /// bounds are damaged.
    static func checksum(_ raw: UnsafeRawBufferPointer, ref: UInt64) -> UInt64? {
        guard raw.count >= Layout.pageHeaderSize else { return nil }
        let seed = raw.u8(Offset.flags) & placedFlag != 0 ? ref : 0
        guard raw.u8(Offset.flags) & gapFlag != 0 else {
            return Checksum.of(UnsafeRawBufferPointer(rebasing: raw[Offset.checksummed...]), seed: seed)
        }
        guard let gap = gap(raw) else { return nil }
        let before = Checksum.of(UnsafeRawBufferPointer(rebasing: raw[Offset.checksummed..<gap.lowerBound]), seed: seed)
        return Checksum.of(UnsafeRawBufferPointer(rebasing: raw[gap.upperBound...]), seed: before)
    }

    /// Whether the page read at file offset `ref` carries the checksum of its bytes (and, when
    /// placed, of that offset).
    static func checksumMatches(_ raw: UnsafeRawBufferPointer, ref: UInt64) -> Bool {
        guard let sum = checksum(raw, ref: ref) else { return false }
        return raw.u64(Offset.checksum) == sum
    }
}
