/// What a full integrity check found.
public struct CheckReport: Sendable {
    public var version: UInt64 = 0
    public var problems: [String] = []
    /// Remarks that are not errors (for example, the inactive slot after a crash mid-commit).
    public var notes: [String] = []
    public var reachablePages: UInt64 = 0
    public var freePages: UInt64 = 0
    public var pageCount: UInt64 = 0
    public var tables: [TableInfo] = []
    public var isSound: Bool { problems.isEmpty }
}

extension Database {
    /// Checks the header, both slots, every node reachable from the newest version (checksums,
    /// kinds, key order, separator bounds, equal leaf depth, counts), every overflow value, and
    /// the free list: disjoint from reachable pages, and together with them covering the file.
    /// In an encrypted file every one of those pages is authenticated anew from the file.
    public func check() throws -> CheckReport {
        let pinned = try pin()
        defer { pinned.release() }
        guard let snap = pinned.snapshot else { throw EngineError.transactionClosed }
        // Every page from the file: a page decrypted earlier and cached may since have been damaged.
        let pages = PageSource(
            mapping: snap.pages.mapping, limit: snap.pages.limit, verifyChecksums: snap.pages.verifyChecksums,
            encrypted: snap.pages.encrypted.map { EncryptedPages(cipher: $0.cipher, cache: nil) },
            embeddedCatalog: snap.pages.embeddedCatalog)
        var walk = IntegrityWalk(
            pages: pages, version: snap.version, pageCount: snap.meta.pageCount, requirePlaced: format.checksumIsPlaced)
        walk.checkSlots(
            header: UnsafeRawBufferPointer(start: snap.pages.mapping.base, count: Layout.pageSize), select: snap.select)
        _ = walk.mark(snap.slot.ref, span: 1, what: "top node")
        if let top = try? pages.page(snap.slot.ref) { walk.checkGap(top, what: "top node") }
        walk.walkCatalog(snap.meta)
        walk.checkFreeList(snap.meta)
        walk.checkCoverage()
        return walk.report
    }
}

/// One pass over everything a version reaches, recording each page it claims.
struct IntegrityWalk {
    let pages: PageSource
    let version: UInt64
    let pageCount: UInt64
    var owner: [UInt8]  // per page: 0 unclaimed, 1 reachable, 2 free
    var report = CheckReport()
    /// Format 7: every page a version reaches was sealed at its own offset; one that was not
    /// came from another file or an older format, where its checksum proves nothing of place.
    let requirePlaced: Bool
    static let maxProblems = 50

    init(pages: PageSource, version: UInt64, pageCount: UInt64, requirePlaced: Bool = false) {
        self.pages = pages
        self.version = version
        self.pageCount = pageCount
        self.requirePlaced = requirePlaced
        owner = [UInt8](repeating: 0, count: Int(pageCount))
        owner[0] = 1  // header
        report.version = version
        report.pageCount = pageCount
    }

    /// A writer zeroes the gap a node's checksum leaves out (format 6), so anything else there
    /// was put there by the storage: harmless to the data, but a sign of damage the checksum
    /// cannot see.
    mutating func checkGap(_ page: PageView, what: String) {
        guard let gap = PageHeader.gap(page.raw), page.raw[gap].contains(where: { $0 != 0 }) else { return }
        problem(
            "\(what) at offset \(page.ref) has stray bytes in its free gap "
                + "(\(gap.lowerBound)..<\(gap.upperBound)), which its checksum does not cover"
        )
    }

    mutating func problem(_ s: String) {
        if report.problems.count < IntegrityWalk.maxProblems {
            report.problems.append(s)
        } else if report.problems.count == IntegrityWalk.maxProblems {
            report.problems.append("… more problems not listed")
        }
    }

    /// Claims pages for a reachable structure; false if they were already claimed.
    mutating func mark(_ ref: UInt64, span: Int, what: String, as kind: UInt8 = 1) -> Bool {
        let ps = UInt64(Layout.pageSize)
        guard ref % ps == 0, ref / ps >= 1, ref / ps + UInt64(span) <= pageCount, span >= 1 else {
            problem("\(what) at offset \(ref) (\(span) pages) lies outside the file's \(pageCount) pages")
            return false
        }
        let first = Int(ref / ps)
        for p in first..<(first + span) {
            if owner[p] != 0 {
                problem(
                    "page \(p) is claimed twice (\(what) at offset \(ref), "
                        + "and \(owner[p] == 2 ? "the free list" : "another node"))"
                )
                return false
            }
            owner[p] = kind
        }
        if kind == 1 { report.reachablePages += UInt64(span) } else { report.freePages += UInt64(span) }
        if kind == 1, requirePlaced, pages.encrypted == nil, let p = try? pages.page(ref),
            p.raw.u8(PageHeader.Offset.flags) & PageHeader.placedFlag == 0
        {
            problem(
                "\(what) at offset \(ref) is not sealed at its offset, "
                    + "as every page of a format-7 file is (a page from another file or format?)"
            )
        }
        return true
    }

    mutating func checkSlots(header: UnsafeRawBufferPointer, select: SelectBit) {
        for i in 0..<2 {
            let slot = TopSlot(header: header, index: i)
            if i == select.index { continue }
            if slot.isBlank { report.notes.append("slot \(i) (inactive) is blank"); continue }
            if !slot.isSelfConsistent {
                report.notes.append("slot \(i) (inactive) is damaged; it is ignored until the next commit rewrites it")
            } else if slot.version >= version {
                report.notes.append(
                    "slot \(i) (inactive) names version \(slot.version), "
                        + "newer than the selected \(version): a commit died before its select-bit flip"
                )
            }
        }
    }

    mutating func walkCatalog(_ meta: Meta) {
        guard meta.catalogRoot != 0 else {
            if meta.tableCount != 0 { problem("top node counts \(meta.tableCount) tables but has no catalog") }
            return
        }
        var entries: [([UInt8], [UInt8])] = []
        walkTree(meta.catalogRoot, name: "catalog") { k, v in entries.append((k, v)) }
        if UInt64(entries.count) != meta.tableCount {
            problem("catalog holds \(entries.count) tables, the top node says \(meta.tableCount)")
        }
        for (k, v) in entries {
            let name = String(decoding: k, as: UTF8.self)
            guard let rec = try? TableRecord.decode(v, table: name) else {
                problem("catalog entry for table '\(name)' is damaged")
                continue
            }
            var count: UInt64 = 0
            var badKeys = 0, badValues = 0
            if rec.root != 0 {
                walkTree(rec.root, name: "table '\(name)'") { key, value in
                    count += 1
                    if rec.keyKind == .int64 && key.count != 8 { badKeys += 1 }
                    if rec.valueKind == .int64 && value.count != 8 { badValues += 1 }
                }
            }
            if badKeys > 0 { problem("table '\(name)': \(badKeys) int64 keys are not 8 bytes long") }
            if badValues > 0 { problem("table '\(name)': \(badValues) int64 values are not 8 bytes long") }
            if count != rec.count {
                problem("table '\(name)' holds \(count) entries, its catalog entry says \(rec.count)")
            }
            report.tables.append(
                TableInfo(name: name, keyKind: rec.keyKind, valueKind: rec.valueKind, count: Int(count)))
        }
    }

    /// Walks one tree; `visit` sees every entry in order.
    mutating func walkTree(_ root: UInt64, name: String, _ visit: ([UInt8], [UInt8]) -> Void) {
        var leafDepth: Int? = nil
        var last: [UInt8]? = nil
        walkNode(root, name: name, depth: 0, low: nil, high: nil, leafDepth: &leafDepth, last: &last, visit)
    }

    private mutating func walkNode(
        _ ref: UInt64, name: String, depth: Int, low: [UInt8]?, high: [UInt8]?,
        leafDepth: inout Int?, last: inout [UInt8]?, _ visit: ([UInt8], [UInt8]) -> Void
    ) {
        guard depth < Tree.maxDepth else { problem("\(name): deeper than \(Tree.maxDepth) levels"); return }
        // The embedded catalog leaf is part of the top node's page, already claimed.
        guard ref == pages.embeddedCatalog || mark(ref, span: 1, what: "\(name) node") else { return }
        let node: DirtyNode
        let page: PageView
        do {
            page = try pages.page(ref)
            node = try DirtyNode.decode(page)
        } catch let c as CorruptNode {
            problem("\(name): node at offset \(ref): \(c.detail)")
            return
        } catch {
            problem("\(name): node at offset \(ref): \(error)")
            return
        }
        if page.version > version {
            problem("\(name): node at offset \(ref) was written by version \(page.version), after \(version)")
        }
        checkGap(page, what: "\(name): node")
        let keys = (0..<node.count).map { Array(node.key($0)) }
        if keys.isEmpty { problem("\(name): node at offset \(ref) is empty") }
        for i in 0..<keys.count {
            let k = keys[i]
            let checkKey = node.isLeaf || i > 0
            if checkKey, let low, compareBytes(k, low) < 0 {
                problem("\(name): key below its parent's separator in node at offset \(ref)")
            }
            if checkKey, let high, compareBytes(k, high) >= 0 {
                problem("\(name): key at or above the next separator in node at offset \(ref)")
            }
            if i > 0 && compareBytes(keys[i - 1], k) >= 0 && (node.isLeaf || i > 1) {
                problem("\(name): keys out of order in node at offset \(ref)")
            }
        }
        if node.isLeaf {
            if let d = leafDepth, d != depth { problem("\(name): leaves at depths \(d) and \(depth)") }
            leafDepth = depth
            for i in 0..<keys.count {
                if let l = last, compareBytes(l, keys[i]) >= 0 {
                    problem("\(name): keys out of order across leaves at offset \(ref)")
                }
                last = keys[i]
                var value: [UInt8] = []
                switch node.value(i) {
                case .inline(let b): value = Array(b)
                case .overflow(let r, let len):
                    do {
                        let ext = try pages.extent(r)
                        _ = mark(r, span: try pages.page(r).span, what: "\(name) overflow value")
                        if !PageHeader.checksumMatches(ext, ref: r) {
                            problem("\(name): overflow value at offset \(r) fails its checksum")
                        }
                        value = Array(try pages.overflowValue(ref: r, length: len))
                    } catch let c as CorruptNode {
                        problem("\(name): overflow value at offset \(r): \(c.detail)")
                    } catch {
                        problem("\(name): overflow value at offset \(r): \(error)")
                    }
                }
                visit(keys[i], value)
            }
        } else {
            for i in 0..<node.children.count {
                guard case .page(let child) = node.children[i] else { continue }
                let lo = i == 0 ? low : keys[i]
                let hi = i + 1 < keys.count ? keys[i + 1] : high
                walkNode(
                    child, name: name, depth: depth + 1, low: lo, high: hi, leafDepth: &leafDepth, last: &last, visit)
            }
        }
    }

    mutating func checkFreeList(_ meta: Meta) {
        do {
            let list = try FreeListStorage.decode(meta, pages: pages)
            let ps = UInt64(Layout.pageSize)
            for p in list.rootPages { _ = mark(p * ps, span: 1, what: "free-list root") }
            for c in list.chunks { if let p = c.ownPage { _ = mark(p * ps, span: 1, what: "free-list chunk") } }
            for e in list.extents {
                if e.freedAt > version {
                    problem("free extent at page \(e.start) is tagged with future version \(e.freedAt)")
                }
                _ = mark(e.start * ps, span: Int(e.count), what: "free extent", as: 2)
            }
        } catch let c as CorruptNode {
            problem("free list: \(c.detail)")
        } catch {
            problem("free list: \(error)")
        }
    }

    mutating func checkCoverage() {
        var leaked = 0
        var first = -1
        for (i, o) in owner.enumerated() where o == 0 {
            leaked += 1
            if first < 0 { first = i }
        }
        if leaked > 0 { problem("\(leaked) pages are neither reachable nor free (first: page \(first))") }
    }
}
