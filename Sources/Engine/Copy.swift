#if canImport(Glibc)
import Glibc
#endif

extension Database {
    /// Writes a compacted copy of the newest version to `destination`, which must not exist.
    /// The copy is built in a temporary file beside it, synced, and linked into place, so
    /// `destination` never holds a partial file.
    public func writeCopy(to destination: String) throws {
        if access(destination, F_OK) == 0 { throw EngineError.alreadyExists(path: destination) }
        let pinned = try pin()
        defer { pinned.release() }
        guard let snap = pinned.snapshot else { throw EngineError.transactionClosed }
        let tmp = try writeCompacted(snap, besides: destination)
        defer { unlink(tmp) }
        if link(tmp, destination) != 0 {
            let e = errno
            throw e == EEXIST ? EngineError.alreadyExists(path: destination) : EngineError.io(path: destination, operation: "link", errno: e)
        }
        CrashArming.reach(.copyLinked)
        try DatabaseFile.syncDirectory(of: destination)
    }

    /// Rewrites the file without free space: a compacted copy, synced, renamed over the
    /// original, directory synced. Refused while any other handle or process has it open.
    public func compact() throws {
        try exclusiveWrite {
            let snap = try currentSnapshot(pin: false)
            let tmp = try writeCompacted(snap, besides: path)
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

    /// Builds the compacted file; returns its temporary path.
    func writeCompacted(_ snap: Snapshot, besides target: String) throws -> String {
        let tmp = "\(target).compact-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let out = try DatabaseFile.open(path: tmp, writable: true, create: true, exclusive: true)
        defer { out.close() }
        do {
            try guarded {
                let v = snap.version
                var alloc = FreeList(pageCount: 1)
                var pw = PageWriter(file: out)
                let copier = TreeCopier(src: snap.pages, version: v)
                // Catalog: each table's tree copied, then a fresh catalog over the new roots.
                var records: [([UInt8], TableRecord)] = []
                try Tree.scan(snap.meta.catalogRoot == 0 ? nil : .page(snap.meta.catalogRoot), from: nil, to: nil, reverse: false, pages: snap.pages) { k, val in
                    let name = Array(k)
                    var rec = try TableRecord.decode(Array(val), table: String(decoding: name, as: UTF8.self))
                    rec.root = rec.root == 0 ? 0 : try copier.copy(rec.root, depth: 0, &alloc, &pw)
                    records.append((name, rec))
                    return true
                }
                let builder = TreeWriter(pages: snap.pages)
                var catalog: Child? = nil
                for (name, rec) in records { _ = try builder.put(&catalog, key: name, value: .inline(rec.encode())) }
                let catalogRef = try copier.writeDirty(catalog, &alloc, &pw)
                let metaPage = alloc.allocate(1)
                let meta = Meta(version: v, catalogRoot: catalogRef, tableCount: UInt64(records.count), freeListRef: 0, pageCount: alloc.pageCount)
                let metaBytes = meta.encode()
                try pw.add(page: metaPage, metaBytes)
                try pw.flush()
                let slot = TopSlot(ref: metaPage * UInt64(Layout.pageSize), version: v, topChecksum: metaBytes.withUnsafeBytes { $0.u64(0) })
                try out.write(FileHeader.initialPage(firstSlot: slot), at: 0)
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

/// Copies a committed tree into a new file, page by page, with fresh refs.
struct TreeCopier {
    let src: PageSource
    let version: UInt64

    func copy(_ ref: UInt64, depth: Int, _ alloc: inout FreeList, _ out: inout PageWriter) throws -> UInt64 {
        guard depth < Tree.maxDepth else { throw CorruptNode(ref: ref, detail: "tree too deep") }
        let n = try DirtyNode.decode(try src.page(ref))
        if n.isLeaf {
            for i in 0..<n.count {
                if case .overflow(let r, let len) = n.value(i) {
                    let bytes = try src.overflowValue(ref: r, length: len)
                    n.setValue(at: i, .overflow(ref: try NodeWriter.overflow(bytes, version: version, &alloc, &out), length: len))
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

    /// Writes a tree built in memory (no pages of its own yet).
    func writeDirty(_ c: Child?, _ alloc: inout FreeList, _ out: inout PageWriter) throws -> UInt64 {
        guard let c else { return 0 }
        switch c {
        case .page(let r): return r
        case .dirty(let n):
            if !n.isLeaf {
                for i in n.children.indices { n.setChildRef(at: i, try writeDirty(n.children[i], &alloc, &out)) }
            }
            return try NodeWriter.node(n, version: version, &alloc, &out)
        }
    }
}
