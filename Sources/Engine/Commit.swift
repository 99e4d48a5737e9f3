/// Gathers a commit's page writes and issues them in page order, one pwrite per run of
/// neighbouring pages, so a commit makes few write calls however its pages were allocated.
/// Nothing reaches the file before `flush` (or before `flushBytes` are buffered).
struct PageWriter {
    let file: DatabaseFile
    private var pages: [(page: UInt64, bytes: [UInt8])] = []
    private var buffered = 0
    private var run: [UInt8] = []
    static let flushBytes = 4 << 20

    init(file: DatabaseFile) { self.file = file }

    mutating func add(page: UInt64, _ bytes: [UInt8]) throws {
        pages.append((page, bytes))
        buffered += bytes.count
        if buffered >= PageWriter.flushBytes { try flush() }
    }

    mutating func flush() throws {
        guard !pages.isEmpty else { return }
        pages.sort { $0.page < $1.page }
        let ps = UInt64(Layout.pageSize)
        var i = 0
        while i < pages.count {
            // A run: each extent starts where the previous one ends.
            var j = i + 1
            var end = pages[i].page + UInt64(pages[i].bytes.count) / ps
            while j < pages.count && pages[j].page == end {
                end += UInt64(pages[j].bytes.count) / ps
                j += 1
            }
            if j == i + 1 {
                try file.write(pages[i].bytes, at: pages[i].page * ps)
            } else {
                run.removeAll(keepingCapacity: true)
                run.reserveCapacity(Int(end - pages[i].page) * Layout.pageSize)  // one allocation per run, no regrowth copies
                for k in i..<j { run += pages[k].bytes }
                try file.write(run, at: pages[i].page * ps)
            }
            i = j
        }
        pages.removeAll(keepingCapacity: true)
        buffered = 0
    }
}

extension WriteTransaction {
    /// The commit protocol (docs/FORMAT.md, section 3; it keeps invariants I1, I6, I8, I9, I12,
    /// I15, I18, I19 and I22 stated there):
    /// 1. write new nodes, the free list and the top node into free pages or the file's end,
    ///    and the new top ref into the inactive slot;
    /// 2. sync; 3. flip the select bit; 4. sync; then publish, ring the doorbell (wake
    ///    watchers in every process) and return (acknowledge).
    /// The inactive slot is ignored until the flip, so it shares the data's sync.
    func commit() throws {
        try ensureActive()
        do {
            try writeAndPublish()
        } catch {
            // The cached list still describes the base version, but a failed commit may have
            // left anything behind; the next writer decodes the list from the file instead.
            db.freeListCache.clear()
            throw error
        }
    }

    private func writeAndPublish() throws {
        let durable = db.options.durability == .full
        if durable { try syncBaseIfItsFlipMayBeVolatile() }
        let (slot, pageCount) = try writeVersion()
        try makeDurable(slot, durable: durable)
        db.freeListCache.store(freeList, fileID: db.currentFileID, slot: slot)
        isActive = false
        db.published(fileSize: pageCount * UInt64(Layout.pageSize))
        CrashArming.reach(.afterPublishBeforeDoorbell)
        if !BrokenVariant.on(.noDoorbell) { db.lockFile?.ringDoorbell(version: version) }
        CrashArming.reach(.afterPublish)
    }

    /// I12: the base's flip may be only in the page cache (its writer died before the sync
    /// after it). Until it is durable, a power cut may select the version before, whose slot
    /// this commit is about to overwrite and whose freed pages it may reuse: sync it first. A
    /// base whose writer saw its flip synced (recorded in the lock file) costs nothing here.
    private func syncBaseIfItsFlipMayBeVolatile() throws {
        guard let lockFile = db.lockFile, lockFile.syncedVersion != base.version, !BrokenVariant.on(.noBaseSync) else { return }
        try db.file.sync()
        lockFile.recordSynced(version: base.version)
    }

    /// Step 1 without the slot: every changed node, the catalog, the free list and the top
    /// node, into pages no live version can reach (I1, I2). Returns the slot that names the
    /// new version and its page count.
    private func writeVersion() throws -> (TopSlot, UInt64) {
        let v = version
        var out = PageWriter(file: db.file)
        for (name, s) in tables.sorted(by: { $0.key < $1.key }) where s.dirty {
            let root = try writeTree(s.root, &out)
            let record = TableRecord(root: root, count: s.count, keyKind: s.keyKind, valueKind: s.valueKind)
            _ = try writer.put(&catalogRoot, key: Array(name.utf8), value: .inline(record.encode()))
        }
        let catalog = try writeTree(catalogRoot, &out)

        // The base version's top node is not part of the new version (its free-list pages are
        // freed by the free list's own save, which knows which ones it rewrites).
        writer.free(ref: base.slot.ref, pages: 1)
        for f in writer.freed { freeList.free(start: f.start, count: f.count, at: v) }

        let metaPage = freeList.allocate(1)
        let placed = try FreeListStorage.save(&freeList, version: v, &out)
        let meta = Meta(version: v, catalogRoot: catalog, tableCount: tableCount, freeListRef: placed.rootRef,
                        pageCount: freeList.pageCount, freeListChunks: placed.inlineChunks)
        let metaBytes = meta.encode()
        try out.add(page: metaPage, metaBytes)
        try out.flush()
        CrashArming.reach(.afterNodesWritten)
        let slot = TopSlot(ref: metaPage * UInt64(Layout.pageSize), version: v, topChecksum: metaBytes.withUnsafeBytes { $0.u64(0) })
        return (slot, meta.pageCount)
    }

    /// The durable protocol: the slot into the inactive place (I6), sync (I8), flip, sync
    /// (I9); a failed sync after the flip poisons the handle (I15).
    private func makeDurable(_ slot: TopSlot, durable: Bool) throws {
        let target = BrokenVariant.on(.topInActiveSlot) ? base.select : base.select.other
        if BrokenVariant.on(.flipBeforeTop) {
            try db.file.write([target.rawValue], at: UInt64(Layout.selectOffset))
        }
        try db.file.write(slot.encoded(), at: UInt64(Layout.slotOffsets[target.index]))
        CrashArming.reach(.afterTopWritten)

        if durable && !BrokenVariant.on(.noDataSync) { try db.file.sync() }
        CrashArming.reach(.afterDataSync)

        try db.file.write([target.rawValue], at: UInt64(Layout.selectOffset))
        CrashArming.reach(.afterSelectFlip)
        if durable {
            do {
                try db.file.sync()
            } catch {
                // The flip may or may not be on disk; both versions are intact. Put the old
                // bit back in the page cache and refuse further writes on this handle.
                try? db.file.write([base.select.rawValue], at: UInt64(Layout.selectOffset))
                // The disk may hold either bit: the next writer must sync before touching
                // the other slot (I12), whichever version it finds selected.
                db.lockFile?.recordSynced(version: 0)
                db.poison("sync after the select-bit flip failed: \(error)")
                throw error
            }
        }
        CrashArming.reach(.afterSelectSync)
        if durable { db.lockFile?.recordSynced(version: slot.version) }
    }

    /// Writes every in-memory node of a tree, children first; returns the root's ref (0 for
    /// an empty tree).
    private func writeTree(_ c: Child?, _ out: inout PageWriter) throws -> UInt64 {
        guard let c else { return 0 }
        switch c {
        case .page(let ref):
            return ref
        case .dirty(let n):
            if n.isLeaf {
                if n.mayHoldLargeValues {
                    for i in 0..<n.count where n.isPendingLarge(i) {
                        guard case .inline(let bytes) = n.value(i) else { continue }
                        let ref = try NodeWriter.overflow(bytes, version: version, &freeList, &out)
                        n.setValue(at: i, .overflow(ref: ref, length: bytes.count))
                    }
                }
            } else {
                // Untouched children keep the ref their cell already holds.
                for i in n.children.indices {
                    guard case .dirty = n.children[i] else { continue }
                    n.setChildRef(at: i, try writeTree(n.children[i], &out))
                }
            }
            if BrokenVariant.on(.overwriteInPlace) && n.origin != 0 {
                var buf = [UInt8](repeating: 0, count: Layout.pageSize)
                buf.withUnsafeMutableBytes { n.encode(into: $0, version: version) }
                try out.add(page: n.origin / UInt64(Layout.pageSize), buf)
                return n.origin
            }
            return try NodeWriter.node(n, version: version, &freeList, &out)
        }
    }
}

/// Puts nodes and overflow values into newly allocated pages. Shared by commits and by
/// compacted copies.
enum NodeWriter {
    static func node(_ n: DirtyNode, version: UInt64, _ alloc: inout FreeList, _ out: inout PageWriter) throws -> UInt64 {
        let page = alloc.allocate(1)
        var buf = [UInt8](repeating: 0, count: Layout.pageSize)
        buf.withUnsafeMutableBytes { n.encode(into: $0, version: version) }
        try out.add(page: page, buf)
        return page * UInt64(Layout.pageSize)
    }

    static func overflow(_ bytes: UnsafeRawBufferPointer, version: UInt64, _ alloc: inout FreeList, _ out: inout PageWriter) throws -> UInt64 {
        let span = Layout.pages(forBytes: Layout.pageHeaderSize + bytes.count)
        let start = alloc.allocate(span)
        var buf = [UInt8](repeating: 0, count: span * Layout.pageSize)
        buf.withUnsafeMutableBytes { p in
            PageHeader.fill(p, kind: .overflow, count: 0, span: span, version: version, extra: UInt64(bytes.count))
            p.copy(bytes, at: Layout.pageHeaderSize)
            PageHeader.seal(p)
        }
        try out.add(page: start, buf)
        return start * UInt64(Layout.pageSize)
    }
}
