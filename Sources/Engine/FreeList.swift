/// A run of free pages, tagged with the version whose commit freed it. Pages freed by
/// version v were reachable in v-1 and earlier, so they may be reused only once no live
/// version is older than v. Tag 0 means reusable by anyone.
struct FreeExtent: Equatable {
    var start: UInt64   // page number
    var count: UInt64
    var freedAt: UInt64
}

/// The free space of one version, and the allocator a write transaction draws pages from.
/// Stored at commit as one checksummed extent: header, then (start u64, count u64, freedAt u64).
struct FreeList {
    /// Reusable now, sorted by start descending so the lowest extent is last (cheap to take).
    private(set) var reusable: [FreeExtent] = []
    /// Still visible to some live version.
    private(set) var pending: [FreeExtent] = []
    /// Pages freed by the transaction being built; they join `pending` at commit.
    private(set) var freedNow: [FreeExtent] = []
    /// High-water mark of the file, in pages (header page included).
    private(set) var pageCount: UInt64

    static let entrySize = 24

    init(pageCount: UInt64) { self.pageCount = pageCount }

    static func decode(_ ext: UnsafeRawBufferPointer, ref: UInt64, pageCount: UInt64) throws -> FreeList {
        guard PageHeader.checksumMatches(ext) else { throw CorruptNode(ref: ref, detail: "free-list checksum mismatch") }
        let head = PageView(raw: UnsafeRawBufferPointer(rebasing: ext[0..<Layout.pageSize]), ref: ref)
        try head.expect(.freeList)
        let n = Int(head.extra)
        guard n >= 0, Layout.pageHeaderSize + n * entrySize <= ext.count else {
            throw CorruptNode(ref: ref, detail: "free list claims \(head.extra) entries, more than its extent holds")
        }
        var list = FreeList(pageCount: pageCount)
        for i in 0..<n {
            let o = Layout.pageHeaderSize + i * entrySize
            let e = FreeExtent(start: ext.u64(o), count: ext.u64(o + 8), freedAt: ext.u64(o + 16))
            guard e.start >= 1, e.count >= 1, e.start + e.count <= pageCount else {
                throw CorruptNode(ref: ref, detail: "free extent \(e.start)+\(e.count) outside the file's \(pageCount) pages")
            }
            if e.freedAt == 0 { list.reusable.append(e) } else { list.pending.append(e) }
        }
        list.reusable.sort { $0.start > $1.start }
        return list
    }

    /// Everything freed at or before `minLive` (the oldest version any reader or the latest
    /// commit still needs) becomes reusable. `minLive` never decreases: readers only pin the
    /// newest version.
    mutating func release(upTo minLive: UInt64) {
        var keep: [FreeExtent] = []
        for var e in pending {
            if e.freedAt <= minLive { e.freedAt = 0; reusable.append(e) } else { keep.append(e) }
        }
        pending = keep
        reusable.sort { $0.start > $1.start }
    }

    /// `n` contiguous pages: first fit among reusable extents, lowest first; else the end of file.
    mutating func allocate(_ n: Int) -> UInt64 {
        let want = UInt64(n)
        var i = reusable.count - 1
        while i >= 0 {
            if reusable[i].count >= want {
                let start = reusable[i].start
                reusable[i].start += want
                reusable[i].count -= want
                if reusable[i].count == 0 { reusable.remove(at: i) }
                return start
            }
            i -= 1
        }
        let start = pageCount
        pageCount += want
        return start
    }

    mutating func free(start: UInt64, count: UInt64, at version: UInt64) {
        freedNow.append(FreeExtent(start: start, count: count, freedAt: version))
    }

    /// The entries to store: adjacent extents with the same tag merged.
    func entries() -> [FreeExtent] {
        var all = reusable + pending + freedNow
        all.sort { ($0.freedAt, $0.start) < ($1.freedAt, $1.start) }
        var out: [FreeExtent] = []
        for e in all {
            if var last = out.last, last.freedAt == e.freedAt, last.start + last.count == e.start {
                last.count += e.count
                out[out.count - 1] = last
            } else {
                out.append(e)
            }
        }
        return out
    }

    static func pagesNeeded(entries: Int) -> Int {
        Layout.pages(forBytes: Layout.pageHeaderSize + entries * entrySize)
    }

    static func encode(_ entries: [FreeExtent], span: Int, version: UInt64) -> [UInt8] {
        var buf = [UInt8](repeating: 0, count: span * Layout.pageSize)
        buf.withUnsafeMutableBytes { p in
            PageHeader.fill(p, kind: .freeList, count: 0, span: span, version: version, extra: UInt64(entries.count))
            for (i, e) in entries.enumerated() {
                let o = Layout.pageHeaderSize + i * entrySize
                p.setU64(e.start, at: o); p.setU64(e.count, at: o + 8); p.setU64(e.freedAt, at: o + 16)
            }
            PageHeader.seal(p)
        }
        return buf
    }

    var reusablePages: UInt64 { reusable.reduce(0) { $0 + $1.count } }
    var pendingPages: UInt64 { pending.reduce(0) { $0 + $1.count } }
}
