import CFiefSys

/// A node found damaged while reading. Carries no path; `Database` turns it into
/// `EngineError.corrupt` naming the file.
struct CorruptNode: Error {
    let ref: UInt64
    let detail: String
}

/// A value as stored in a leaf: in the cell itself, or in an overflow extent.
enum StoredValue {
    case inline(UnsafeRawBufferPointer)
    case overflow(ref: UInt64, length: Int)
}

/// Read-only, bounds-checked view of one node in the mapped file (or, encrypted, decrypted
/// from it). Every accessor checks offsets against the page — `raw.count` bytes, less than a
/// whole page in an encrypted file — so a damaged node throws `CorruptNode` instead of trapping.
///
/// Page header (32 bytes): checksum u64 (of bytes 8..<span*pageSize) | kind u8 | flags u8 |
/// count u16 | span u32 (pages in this extent) | version u64 (that wrote it) | extra u64.
/// With flag `PageHeader.gapFlag` (format 6) the checksum leaves out a gap of free bytes, whose
/// bounds are the two u32s of `extra` (see `PageHeader.seal`).
/// Leaf and branch cells are addressed by a u16 offset array right after the header and
/// packed from the end of the page.
struct PageView {
    let raw: UnsafeRawBufferPointer
    let ref: UInt64

    var storedChecksum: UInt64 { raw.u64(PageHeader.Offset.checksum) }
    var kindByte: UInt8 { raw.u8(PageHeader.Offset.kind) }
    var count: Int { Int(raw.u16(PageHeader.Offset.count)) }
    var span: Int { Int(raw.u32(PageHeader.Offset.span)) }
    var version: UInt64 { raw.u64(PageHeader.Offset.version) }
    var extra: UInt64 { raw.u64(PageHeader.Offset.extra) }

    func kind() throws -> PageKind {
        guard let k = PageKind(rawValue: kindByte) else {
            throw CorruptNode(ref: ref, detail: "unknown node kind \(kindByte)")
        }
        return k
    }

    func expect(_ k: PageKind) throws {
        let found = try kind()
        guard found == k else {
            throw CorruptNode(ref: ref, detail: "expected a \(k.name) node, found a \(found.name) node")
        }
    }

    private func cellOffset(_ i: Int) throws -> Int {
        let n = count
        guard i >= 0, i < n, CellOffsets.end(count: n) <= raw.count else {
            throw CorruptNode(ref: ref, detail: "cell \(i) out of range (count \(n))")
        }
        let o = CellOffsets.offset(raw, i)
        guard o >= CellOffsets.end(count: n), o < raw.count else {
            throw CorruptNode(ref: ref, detail: "cell \(i) offset \(o) outside the page")
        }
        return o
    }

    /// Whether a forward scan of this leaf should ask for each next cell ahead (`prefetchCell`):
    /// so few cells share the page that each is several cache lines long. A leaf's cells lie
    /// from its end backwards, so a forward scan jumps back a whole cell to each next one, where
    /// the CPU's own prefetcher, following the last cell's bytes forwards, never looks; at 1M
    /// objects, every cluster's first read waited on memory. Short cells' neighbours sit in the
    /// lines just read, and a reverse scan's next cell starts where this one ends.
    var hasLongCells: Bool { count <= 16 }

    /// Asks for cell `i`'s first 256 bytes ahead of their use; nothing for a cell out of range.
    func prefetchCell(_ i: Int) {
        let n = count
        guard i >= 0, i < n, CellOffsets.end(count: n) <= raw.count, let base = raw.baseAddress else { return }
        let o = CellOffsets.offset(raw, i)
        for line in stride(from: o, to: min(o + 256, raw.count), by: 64) { fief_prefetch(base + line) }
    }

    private func slice(_ from: Int, _ len: Int) throws -> UnsafeRawBufferPointer {
        guard len >= 0, from + len <= raw.count else {
            throw CorruptNode(ref: ref, detail: "cell runs past the end of the page")
        }
        return UnsafeRawBufferPointer(rebasing: raw[from..<(from + len)])
    }

    /// Bytes the node takes: header, offset array and cells (packed from the page's end, so
    /// everything from the lowest cell offset on).
    func bytesUsed() throws -> Int {
        let n = count
        var low = raw.count
        for i in 0..<n { low = min(low, try cellOffset(i)) }
        return CellOffsets.end(count: n) + (raw.count - low)
    }

    // Leaf cells (`LeafCell`), branch cells (`BranchCell`): Format/Cells.swift.
    func leafKey(_ i: Int) throws -> UnsafeRawBufferPointer { try leafCell(i).key }

    func leafValue(_ i: Int) throws -> StoredValue { try leafCell(i).value }

    /// Key and value of leaf cell `i`, its header read once (a scan's per-entry step).
    @inline(__always)
    func leafCell(_ i: Int) throws -> (key: UnsafeRawBufferPointer, value: StoredValue) {
        let o = try cellOffset(i)
        guard o + LeafCell.headerSize <= raw.count else {
            throw CorruptNode(ref: ref, detail: "cell header past page end")
        }
        let keyLen = LeafCell.keyLength(raw, at: o)
        let valueLen = LeafCell.valueLength(raw, at: o)
        if LeafCell.isOverflow(raw, at: o) {
            guard o + LeafCell.overflowHeaderSize <= raw.count else {
                throw CorruptNode(ref: ref, detail: "cell header past page end")
            }
            return (
                try slice(o + LeafCell.overflowHeaderSize, keyLen),
                .overflow(ref: raw.u64(o + LeafCell.Offset.overflowRef), length: valueLen)
            )
        }
        let key = o + LeafCell.headerSize
        return (try slice(key, keyLen), .inline(try slice(key + keyLen, valueLen)))
    }

    func branchChild(_ i: Int) throws -> UInt64 {
        let o = try cellOffset(i)
        guard o + BranchCell.headerSize <= raw.count else {
            throw CorruptNode(ref: ref, detail: "cell header past page end")
        }
        return BranchCell.child(raw, at: o)
    }

    func branchKey(_ i: Int) throws -> UnsafeRawBufferPointer {
        let o = try cellOffset(i)
        guard o + BranchCell.headerSize <= raw.count else {
            throw CorruptNode(ref: ref, detail: "cell header past page end")
        }
        return try slice(o + BranchCell.headerSize, BranchCell.keyLength(raw, at: o))
    }

    /// Leaf: index of the first key >= `key`, and whether it is equal.
    ///
    /// The hot loop of every get, so it reads the cells itself with the checks of
    /// `cellOffset`, `leafKey` and `slice` folded into two comparisons per probe; a cell that
    /// fails them is read again through `leafKey`, which throws the usual error.
    func leafSearch(_ key: UnsafeRawBufferPointer) throws -> (index: Int, found: Bool) {
        let n = count
        let cellsStart = CellOffsets.end(count: n)
        guard cellsStart <= raw.count else { _ = try leafKey(0); throw badCell(0) }
        let base = raw.baseAddress!
        // Indices and offsets stay below 2^16 here, so wrapping arithmetic cannot wrap.
        var lo = 0, hi = n
        while lo < hi {
            let mid = (lo &+ hi) >> 1
            let o = CellOffsets.offset(raw, mid)
            guard o >= cellsStart, o &+ LeafCell.headerSize <= raw.count else {
                _ = try leafKey(mid); throw badCell(mid)
            }
            let keyLen = LeafCell.keyLength(raw, at: o)
            let start = LeafCell.keyStart(raw, at: o)
            guard start &+ keyLen <= raw.count else { _ = try leafKey(mid); throw badCell(mid) }
            let c = compareBytes(UnsafeRawBufferPointer(start: base + start, count: keyLen), key)
            if c == 0 { return (mid, true) }
            if c < 0 { lo = mid &+ 1 } else { hi = mid }
        }
        return (lo, false)
    }

    /// Branch: the child whose range holds `key` (the last with separator <= key; child 0
    /// takes everything below separator 1). Reads cells as `leafSearch` does.
    func childIndex(_ key: UnsafeRawBufferPointer) throws -> Int {
        let n = count
        guard n > 0 else { throw CorruptNode(ref: ref, detail: "branch node with no children") }
        let cellsStart = CellOffsets.end(count: n)
        guard cellsStart <= raw.count else { _ = try branchKey(0); throw badCell(0) }
        let base = raw.baseAddress!
        let h = BranchCell.headerSize
        var lo = 1, hi = n
        while lo < hi {
            let mid = (lo &+ hi) >> 1
            let o = CellOffsets.offset(raw, mid)
            guard o >= cellsStart, o &+ h <= raw.count else { _ = try branchKey(mid); throw badCell(mid) }
            let keyLen = BranchCell.keyLength(raw, at: o)
            guard o &+ h &+ keyLen <= raw.count else { _ = try branchKey(mid); throw badCell(mid) }
            if compareBytes(UnsafeRawBufferPointer(start: base + (o &+ h), count: keyLen), key) <= 0 {
                lo = mid &+ 1
            } else {
                hi = mid
            }
        }
        return lo - 1
    }

    /// The error for this page where a branch or leaf should be.
    func notATreeNode() -> CorruptNode {
        CorruptNode(
            ref: ref,
            detail: "expected a tree node, found "
                + ((try? kind()).map { "a \($0.name) node" } ?? "unknown node kind \(kindByte)"))
    }

    /// Only if the fast checks above and the accessors' own disagree (they should not).
    @inline(never)
    private func badCell(_ i: Int) -> CorruptNode {
        CorruptNode(ref: ref, detail: "cell \(i) is damaged")
    }
}
