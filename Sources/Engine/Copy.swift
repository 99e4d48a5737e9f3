#if canImport(Glibc)
    import Glibc
#endif

extension Database {
    /// Writes a compacted copy of the newest version to `destination`, which must not exist,
    /// encrypted with the handle's own key (or plain, as the handle is). The copy is built in
    /// a temporary file beside it, synced, and linked into place, so `destination` never
    /// holds a partial file.
    public func writeCopy(to destination: String) throws {
        try writeCopy(to: destination, encryptionKey: options.encryptionKey)
    }

    /// As `writeCopy(to:)`, encrypted with `encryptionKey`, or plain when it is nil: this
    /// encrypts a plain database, decrypts an encrypted one, or changes its key.
    public func writeCopy(to destination: String, encryptionKey: [UInt8]?) throws {
        try EncryptionError.validate(encryptionKey)
        if access(destination, F_OK) == 0 { throw EngineError.alreadyExists(path: destination) }
        let pinned = try pin()
        defer { pinned.release() }
        guard let snap = pinned.snapshot else { throw EngineError.transactionClosed }
        let tmp = try writeCompacted(snap, besides: destination, key: encryptionKey)
        defer { unlink(tmp) }
        if link(tmp, destination) != 0 {
            let e = errno
            throw e == EEXIST
                ? EngineError.alreadyExists(path: destination)
                : EngineError.io(path: destination, operation: "link", errno: e)
        }
        CrashArming.reach(.copyLinked)
        try DatabaseFile.syncDirectory(of: destination)
    }

    /// Rewrites the file without free space: a compacted copy, synced, renamed over the
    /// original, directory synced. Refused while any other handle or process has it open.
    public func compact() throws {
        try exclusiveWrite {
            let snap = try currentSnapshot(pin: false)
            let tmp = try writeCompacted(snap, besides: path, key: options.encryptionKey)
            guard rename(tmp, path) == 0 else {
                let e = errno
                unlink(tmp)
                throw EngineError.io(path: path, operation: "rename compacted copy", errno: e)
            }
            CrashArming.reach(.compactRenamed)
            if !BrokenVariant.on(.compactNoDirSync) { try DatabaseFile.syncDirectory(of: path) }
            CrashArming.reach(.compactDirSynced)
            try reopenFile()
        }
    }

    /// Builds the compacted file, encrypted with `key` (a new salt) or plain; returns its
    /// temporary path.
    func writeCompacted(_ snap: Snapshot, besides target: String, key: [UInt8]?) throws -> String {
        let tmp = "\(target).compact-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let out = try DatabaseFile.open(path: tmp, writable: true, create: true, exclusive: true)
        defer { out.close() }
        do {
            try guarded {
                let v = snap.version
                let cipher = key.map { FileCipher.forNewFile(key: $0) }
                var pw = PageWriter(file: out, cipher: cipher?.0, format: .new(encrypted: key != nil))
                var alloc = FreeList(pageCount: 1, geometry: pw.geometry)
                let copier = TreeCopier(src: snap.pages, version: v, geometry: pw.geometry)
                // Catalog: each table's tree copied, then a fresh catalog over the new roots.
                var records: [([UInt8], TableRecord)] = []
                try Tree.scan(
                    snap.meta.catalogRoot == 0 ? nil : .page(snap.meta.catalogRoot), from: nil, to: nil, reverse: false,
                    pages: snap.pages
                ) { k, val in
                    let name = Array(k)
                    var rec = try TableRecord.decode(Array(val), table: String(decoding: name, as: UTF8.self))
                    rec.root = rec.root == 0 ? 0 : try copier.copy(rec.root, depth: 0, &alloc, &pw)
                    records.append((name, rec))
                    return true
                }
                let builder = TreeWriter(pages: snap.pages, geometry: pw.geometry)
                var catalog: Child? = nil
                for (name, rec) in records { _ = try builder.put(&catalog, key: name, value: .inline(rec.encode())) }
                let catalogRef = try NodeWriter.tree(catalog, version: v, &alloc, &pw)
                let metaPage = alloc.allocate(1)
                let meta = Meta(
                    version: v, catalogRoot: catalogRef, tableCount: UInt64(records.count), freeListRef: 0,
                    pageCount: alloc.pageCount)
                let metaBytes = meta.encode(pw, page: metaPage)
                try pw.add(page: metaPage, metaBytes)
                try pw.flush()
                let slot = TopSlot(
                    ref: metaPage * UInt64(Layout.pageSize), version: v,
                    topChecksum: metaBytes.withUnsafeBytes(TopSlot.topChecksum))
                try out.write(FileHeader.initialPage(firstSlot: slot, encryption: cipher?.1), at: 0)
                CrashArming.reach(.copyWritten)
                if !BrokenVariant.on(.copyNoSync) { try out.fullSync() }
                CrashArming.reach(.copySynced)
            }
        } catch {
            unlink(tmp)
            throw error
        }
        return tmp
    }
}

/// Copies a committed tree into a new file with fresh refs: page by page while both files
/// lay pages out alike, or, when the copy changes encryption (and so node capacity), by
/// loading the entries in key order into a new tree.
struct TreeCopier {
    let src: PageSource
    let version: UInt64
    let geometry: PageGeometry

    func copy(_ ref: UInt64, depth: Int, _ alloc: inout FreeList, _ out: inout PageWriter) throws -> UInt64 {
        guard geometry == src.geometry else { return try reload(ref, &alloc, &out) }
        guard depth < Tree.maxDepth else { throw CorruptNode(ref: ref, detail: "tree too deep") }
        let n = try DirtyNode.decode(try src.page(ref))
        if n.isLeaf {
            for i in 0..<n.count {
                if case .overflow(let r, let len) = n.value(i) {
                    let bytes = try src.overflowValue(ref: r, length: len)
                    n.setValue(
                        at: i,
                        .overflow(ref: try NodeWriter.overflow(bytes, version: version, &alloc, &out), length: len))
                }
            }
        } else {
            for i in n.children.indices {
                guard case .page(let r) = n.children[i] else { continue }
                n.setChildRef(at: i, try copy(r, depth: depth + 1, &alloc, &out))
            }
        }
        return try NodeWriter.node(n, version: version, &alloc, &out)
    }

    /// The tree at `root` rebuilt for `geometry`: appended in key order, so its leaves are
    /// packed full, as a compacted copy's are.
    private func reload(_ root: UInt64, _ alloc: inout FreeList, _ out: inout PageWriter) throws -> UInt64 {
        let builder = TreeWriter(pages: src, geometry: geometry)
        var tree: Child? = nil
        try Tree.scan(.page(root), from: nil, to: nil, reverse: false, pages: src) { k, v in
            _ = try builder.put(&tree, key: k, value: LeafValue.make(keyCount: k.count, value: Array(v)))
            return true
        }
        return try NodeWriter.tree(tree, version: version, &alloc, &out)
    }
}
