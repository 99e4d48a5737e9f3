extension WriteTransaction {
    /// The commit protocol (docs/FORMAT.md, section 3; it keeps invariants I1, I6, I8, I9, I12,
    /// I15, I18, I19 and I22 stated there; its steps after step 1 are `CommitStep`s):
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
        try step(.syncBase) { if durable { try syncBaseIfItsFlipMayBeVolatile() } }
        let written = WrittenNodes()
        let (slot, meta, committed) = try writeVersion(written)
        try makeDurable(slot, durable: durable)
        written.settle()
        db.freeListCache.store(freeList, nodes: written, fileID: db.currentFileID, slot: slot)
        isActive = false
        db.published(
            fileSize: meta.pageCount * UInt64(Layout.pageSize), top: slot, meta: meta, tables: committed,
            sidecar: committedSidecar)
        CrashArming.reach(.afterPublishBeforeDoorbell)
        try step(.ringDoorbell) { db.lockFile?.ringDoorbell(version: version) }
    }

    /// I12: the base's flip may be only in the page cache (its writer died before the sync
    /// after it). Until it is durable, a power cut may select the version before, whose slot
    /// this commit is about to overwrite and whose freed pages it may reuse: sync it first. A
    /// base whose writer saw its flip synced (recorded in the lock file) costs nothing here.
    private func syncBaseIfItsFlipMayBeVolatile() throws {
        guard let lockFile = db.lockFile, lockFile.syncedVersion != base.version else { return }
        try timedSync()
        lockFile.recordSynced(version: base.version)
    }

    /// Step 1 without the slot: every changed node, the catalog, the free list and the top
    /// node, into pages no live version can reach (I1, I2). Returns the slot that names the
    /// new version and its top node, and the tables this transaction opened as the new version
    /// has them. `written` collects the tree nodes written.
    private func writeVersion(_ written: WrittenNodes) throws -> (TopSlot, Meta, [String: TableState]) {
        let v = version
        var out = PageWriter(file: db.file, cipher: base.pages.encrypted?.cipher, format: db.format)
        // One run for the changed nodes and the top node, where the free list has one: a small
        // commit whose base freed the same path (each commit's pages are the ones two commits
        // back) then writes one run of neighbouring pages.
        var nodes = 1
        for s in tables.values where s.dirty { nodes += NodeWriter.dirtyNodes(s.root) }
        freeList.reserveRun(nodes)
        // A clean table's state carries over as it is; only one rooted in a written page, since
        // readers of the new version share it.
        var committed = [String: TableState](minimumCapacity: tables.count)
        for (name, s) in tables {
            if case .dirty? = s.root { continue }
            committed[name] = s
        }
        for (name, s) in tables.sorted(by: { $0.key < $1.key }) where s.dirty {
            let root = try writeTree(s.root, &out, written)
            let record = TableRecord(root: root, count: s.count, keyKind: s.keyKind, valueKind: s.valueKind)
            _ = try writer.put(&catalogRoot, key: Array(name.utf8), value: .inline(record.encode()))
            committed[name] = TableState(record)
        }
        let fillsTopNode = db.format.fillsTopNode
        let embedded = fillsTopNode ? try embeddableCatalog() : nil
        let catalog = embedded == nil ? try writeTree(catalogRoot, &out, written) : 0

        // The base version's top node is not part of the new version (its free-list pages are
        // freed by the free list's own save, which knows which ones it rewrites).
        writer.free(ref: base.slot.ref, pages: 1)
        for f in writer.freed { freeList.free(start: f.start, count: f.count, at: v) }

        let metaPage = freeList.allocate(1)
        freeList.returnUnusedRun()
        let nodeBytes = out.geometry.pageBytes
        let catalogBytes = embedded.map { Meta.embeddedBytes(nodeSize: $0.size) } ?? 0
        let room = fillsTopNode ? nodeBytes - catalogBytes - Meta.inlineOffset : nil
        let placed = try FreeListStorage.save(&freeList, version: v, room: room, &out)
        let topRef = BrokenVariant.on(.catalogInOldTop) ? base.slot.ref : metaPage * UInt64(Layout.pageSize)
        let catalogRef = embedded == nil ? catalog : topRef + UInt64(nodeBytes - catalogBytes)
        let meta = Meta(
            version: v, catalogRoot: catalogRef, tableCount: tableCount, freeListRef: placed.rootRef,
            pageCount: freeList.pageCount, freeListChunks: placed.inlineChunks, freeExtents: placed.inlineExtents)
        var topChecksum: UInt64 = 0
        let skipsGap = out.checksumSkipsGap, topPlacement = out.placement(metaPage)
        try out.add(page: metaPage, nodeBytes: nodeBytes, zeroed: true) { p in
            meta.encode(into: p, catalog: embedded, checksumSkipsGap: skipsGap, placedAt: topPlacement)
            topChecksum = TopSlot.topChecksum(ofTopPage: UnsafeRawBufferPointer(p))
        }
        if let embedded { written.record(catalogRef, embedded) }
        if BrokenVariant.on(.encryptInPlace), base.pages.encrypted != nil {
            let old = try base.pages.page(base.slot.ref)
            try out.add(page: base.slot.ref / UInt64(Layout.pageSize), Array(old.raw))
        }
        try out.flush()
        db.countCommit(pages: out.pagesAdded)
        CrashArming.reach(.afterNodesWritten)
        let slot = TopSlot(ref: metaPage * UInt64(Layout.pageSize), version: v, topChecksum: topChecksum)
        return (slot, meta, committed)
    }

    /// The durable protocol: the slot into the inactive place (I6), sync (I8), flip, sync
    /// (I9); a failed sync after the flip poisons the handle (I15).
    private func makeDurable(_ slot: TopSlot, durable: Bool) throws {
        let target = CommitFailpoint.slot(after: base.select)
        try step(.writeTop, flipping: target) {
            try writeHeader(slot.encoded(), at: Layout.slotOffsets[target.index], durable: durable)
        }
        try step(.syncData) { if durable { try timedSync() } }
        try step(.flipSelect) { try writeHeader(target.byte, at: Layout.selectOffset, durable: durable) }
        try step(.syncFlip) { if durable { try syncFlip() } }
        if durable { db.lockFile?.recordSynced(version: slot.version) }
    }

    /// Runs one step of the protocol as its failpoint allows (in a release build, as written),
    /// then reaches its crash point. `flipping`: the select bit the commit flips to.
    private func step(_ s: CommitStep, flipping target: SelectBit? = nil, _ body: () throws -> Void) throws {
        switch CommitFailpoint.at(s) {
        case nil: try body()
        case .skip?: break
        case .flipFirst?:
            if let target { try db.file.write(target.byte, at: UInt64(Layout.selectOffset)) }
            try body()
        }
        if let point = s.crashPoint { CrashArming.reach(point) }
    }

    /// The sync after the flip. When it fails the flip may or may not be on disk; both
    /// versions are intact. The old bit goes back into the page cache and the handle refuses
    /// further writes.
    private func syncFlip() throws {
        do {
            try timedSync()
        } catch {
            try? db.file.write(base.select.byte, at: UInt64(Layout.selectOffset))
            // The disk may hold either bit: the next writer must sync before touching the
            // other slot (I12), whichever version it finds selected.
            db.lockFile?.recordSynced(version: 0)
            db.poison("sync after the select-bit flip failed: \(error)")
            throw error
        }
    }

    /// `fsync`/`fdatasync` of the data file, its wait counted for `Database.commitCounts`.
    private func timedSync() throws {
        let start = MonotonicClock.nanos()
        defer { db.countSync(nanos: MonotonicClock.nanos() &- start) }
        try db.file.sync()
    }

    /// A durable commit's header writes are `pwrite`s, each one write the filesystem sees in
    /// protocol order; a commit without sync stores into the page cache (`HeaderWindow`).
    private func writeHeader(_ bytes: [UInt8], at offset: Int, durable: Bool) throws {
        if durable {
            try db.file.write(bytes, at: UInt64(offset))
        } else {
            try db.file.storeInHeader(bytes, at: offset)
        }
    }

    /// The catalog, when it goes into the top node (format 4 and later, checked by the caller): a leaf that changed
    /// this transaction (or was embedded in the base's top node, which this commit frees) and
    /// takes at most `Meta.embeddedCatalogLimit` bytes. Then a commit that changes a table
    /// writes no catalog page.
    private func embeddableCatalog() throws -> DirtyNode? {
        guard var root = catalogRoot else { return nil }
        if case .page(let ref) = root, ref % UInt64(Layout.pageSize) == 0 { return nil }
        let node = try writer.materialize(&root)
        catalogRoot = root
        guard node.isLeaf, Meta.embeddedBytes(nodeSize: node.size) <= Meta.embeddedCatalogLimit else { return nil }
        return node
    }

    private func writeTree(_ c: Child?, _ out: inout PageWriter, _ written: WrittenNodes) throws -> UInt64 {
        try NodeWriter.tree(c, version: version, &freeList, &out, written: written)
    }
}
