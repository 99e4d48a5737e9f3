import XCTest
@testable import Engine
import Foundation
import SeededRandomness

/// Format 4: a small free list lives in the top node, so a small commit writes no free-list
/// page; a large one moves to chunk pages and back; format-2 files keep their layout.
final class InlineFreeListTests: XCTestCase {
    private func fill(_ db: Database, keys: Int) throws {
        try db.write { tx in
            let t = try tx.createTable("t", key: Int64.self, value: [UInt8].self)
            for k in 0..<keys { try t.put(Int64(k), [UInt8](repeating: 7, count: 60)) }
        }
    }

    /// The kinds of the pages a version wrote (their header carries its number).
    private func kindsWritten(_ snap: Snapshot) throws -> [PageKind] {
        var kinds: [PageKind] = []
        var page: UInt64 = 1
        while page < snap.meta.pageCount {
            let p = try snap.pages.page(page * UInt64(Layout.pageSize))
            if p.version == snap.version, let k = try? p.kind() { kinds.append(k) }
            page += UInt64(max(p.span, 1))
        }
        return kinds
    }

    func testSmallCommitsWriteNoFreeListPage() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("s.fief"), options: DatabaseOptions(durability: .none))
        try fill(db, keys: 3000)
        for k in 0..<40 {
            try db.write { tx in try tx.table("t", key: Int64.self, value: [UInt8].self).put(Int64(k * 71), [1, 2, 3]) }
            let snap = try db.currentSnapshot(pin: false)
            XCTAssertEqual(snap.meta.freeListRef, 0)
            XCTAssertEqual(snap.meta.freeListChunks, [], "commit \(k): the free list went to chunk pages")
            XCTAssertFalse(snap.meta.freeExtents.isEmpty, "commit \(k): the freed pages are not in the top node")
            let kinds = try kindsWritten(snap)
            XCTAssertFalse(kinds.contains(.freeListChunk) || kinds.contains(.freeList), "commit \(k) wrote \(kinds)")
            // Table leaf and branch, top node (with the catalog embedded in it).
            XCTAssertNotNil(snap.meta.embeddedCatalogOffset, "commit \(k): the catalog is not in the top node")
            XCTAssertLessThanOrEqual(kinds.count, 3, "commit \(k) wrote \(kinds)")
            let stored = try FreeListStorage.decode(snap.meta, pages: snap.pages)
            XCTAssertEqual(db.freeListCache.list(fileID: db.currentFileID, slot: snap.slot), stored, "commit \(k)")
        }
        let report = try db.check()
        XCTAssertTrue(report.isSound, "\(report.problems)")
        // Reopened from the file, the list is the same and keeps working.
        let again = try Database(path: dir.file("s.fief"))
        try again.write { tx in try tx.table("t", key: Int64.self, value: [UInt8].self).put(-1, [9]) }
        XCTAssertTrue(try again.check().isSound)
    }

    /// A list too large for the top node stays in chunk pages, but the recent extents and the
    /// pending run ride in the top node: small commits write no free-list page, and one at
    /// most while a reader pins an old version.
    func testLargeListSmallCommitsWriteNoFreeListPage() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("l.fief"), options: DatabaseOptions(durability: .none))
        var rng = SeededRandom(seed: testSeed("large free list", default: 41))
        let keys = (Int64(0)..<30_000).shuffled(using: &rng)
        for batch in stride(from: 0, to: keys.count, by: 3000) {
            try db.write { tx in
                let t = try tx.openTable("t", key: Int64.self, value: [UInt8].self)
                for k in keys[batch..<(batch + 3000)] { try t.put(k, [UInt8](repeating: 1, count: 100)) }
            }
        }
        var pin: PinnedVersion?
        var chunkPagesSeen = false
        var recentBefore = 0
        for k in 0..<60 {
            if k == 20 { pin = try db.pin() }
            if k == 40 { pin?.release(); pin = nil }
            try db.write { tx in
                try tx.table("t", key: Int64.self, value: [UInt8].self).put(
                    Int64.random(in: 0..<30_000, using: &rng), [UInt8](repeating: 2, count: 100))
            }
            let snap = try db.currentSnapshot(pin: false)
            chunkPagesSeen = chunkPagesSeen || !snap.meta.freeListChunks.isEmpty
            let kinds = try kindsWritten(snap)
            let listPages = kinds.filter { $0 == .freeListChunk || $0 == .freeList }.count
            // The recent extents outgrow their share of the top node once (how soon depends on
            // how the load left the tree): that commit moves them into a chunk page.
            let recent = try FreeListStorage.decode(snap.meta, pages: snap.pages).recent.count
            let spilled = recent < recentBefore / 2
            recentBefore = recent
            if k > 0 && k != 40 && !spilled {
                // While pinned, nothing is released: pages come from the chunked run, whose
                // chunk changes (one page); the pending run stays in the top node.
                XCTAssertLessThanOrEqual(listPages, (20..<40).contains(k) ? 1 : 0, "commit \(k) wrote \(kinds)")
            }
            XCTAssertEqual(
                db.freeListCache.list(fileID: db.currentFileID, slot: snap.slot),
                try FreeListStorage.decode(snap.meta, pages: snap.pages), "commit \(k)")
        }
        XCTAssertTrue(chunkPagesSeen, "the test needs a list in chunk pages")
        let report = try db.check()
        XCTAssertTrue(report.isSound, "\(report.problems)")
    }

    /// Past the top node's room the list goes to chunk pages; once it shrinks it comes back,
    /// and the chunk pages it leaves are freed like any other.
    func testListMovesToChunkPagesAndBack() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("m.fief"), options: DatabaseOptions(durability: .none))
        try fill(db, keys: 10)
        let pages = 2 * Meta.inlineExtentCapacity(.plain) + 10
        try db.write { tx in
            try tx.table("t", key: Int64.self, value: [UInt8].self).put(1, [1])
            let start = tx.freeList.allocate(pages)
            // Every other page first: no two frees merge, one extent per page.
            for p in stride(from: 0, to: pages, by: 2) {
                tx.freeList.free(start: start + UInt64(p), count: 1, at: tx.version)
            }
            for p in stride(from: 1, to: pages, by: 2) {
                tx.freeList.free(start: start + UInt64(p), count: 1, at: tx.version)
            }
        }
        var snap = try db.currentSnapshot(pin: false)
        XCTAssertFalse(snap.meta.freeListChunks.isEmpty, "a list of \(pages) extents must use chunk pages")
        XCTAssertEqual(snap.meta.freeExtents, [])
        XCTAssertTrue(try db.check().isSound)
        // The next commit releases them all: one reusable run, small again.
        try db.write { tx in try tx.table("t", key: Int64.self, value: [UInt8].self).put(2, [2]) }
        snap = try db.currentSnapshot(pin: false)
        XCTAssertEqual(snap.meta.freeListChunks, [])
        XCTAssertFalse(snap.meta.freeExtents.isEmpty)
        XCTAssertEqual(
            db.freeListCache.list(fileID: db.currentFileID, slot: snap.slot),
            try FreeListStorage.decode(snap.meta, pages: snap.pages))
        let report = try db.check()
        XCTAssertTrue(report.isSound, "\(report.problems)")
    }

    /// The catalog rides in the top node while it is one small leaf; with many tables it moves
    /// to pages of its own, and back once they are dropped. Every state reads back the same,
    /// in another handle too, plain and encrypted.
    func testCatalogMovesBetweenTopNodeAndPages() throws {
        for key in [nil, [UInt8](repeating: 9, count: 64)] {
            let dir = TempDir()
            let path = dir.file("c.fief")
            let db = try Database(path: path, options: DatabaseOptions(durability: .none, encryptionKey: key))
            let other = try Database(path: path, options: DatabaseOptions(durability: .none, encryptionKey: key))
            func tables(_ n: Int) throws {
                try db.write { tx in
                    for i in 0..<n where !(try tx.tableNames().contains("table-number-\(i)")) {
                        try tx.createTable("table-number-\(i)", key: Int64.self, value: Int64.self).put(
                            Int64(i), Int64(i))
                    }
                }
            }
            func expectTables(_ n: Int, embedded: Bool, _ what: String) throws {
                let snap = try db.currentSnapshot(pin: false)
                XCTAssertEqual(snap.meta.embeddedCatalogOffset != nil, embedded, "\(what): catalog embedded")
                for h in [db, other] {
                    try h.read { tx in
                        XCTAssertEqual(try tx.tableNames().count, n, what)
                        for i in 0..<n {
                            XCTAssertEqual(
                                try tx.table("table-number-\(i)", key: Int64.self, value: Int64.self).get(Int64(i)),
                                Int64(i), what)
                        }
                    }
                }
                let report = try db.check()
                XCTAssertTrue(report.isSound, "\(what): \(report.problems)")
            }
            try tables(3)
            try expectTables(3, embedded: true, "3 tables")
            try tables(60)
            try expectTables(60, embedded: false, "60 tables")
            try db.write { tx in for i in 3..<60 { try tx.dropTable("table-number-\(i)") } }
            // The first commit after the drop rewrites the catalog as a leaf; the next embeds it.
            try db.write { tx in try tx.table("table-number-0", key: Int64.self, value: Int64.self).put(0, 0) }
            try expectTables(3, embedded: true, "3 tables again")
        }
    }

    /// A top node whose catalog ref points inside some other page is refused, not followed.
    func testEmbeddedCatalogRefOutsideItsTopNodeIsCorruption() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("x.fief"), options: DatabaseOptions(durability: .none))
        try fill(db, keys: 500)
        let snap = try db.currentSnapshot(pin: false)
        let o = try XCTUnwrap(snap.meta.embeddedCatalogOffset)
        var page = [UInt8](
            UnsafeRawBufferPointer(start: snap.pages.mapping.base + Int(snap.slot.ref), count: Layout.pageSize))
        page.withUnsafeMutableBytes { p in
            p.setU64(snap.slot.ref + UInt64(Layout.pageSize) + UInt64(o), at: 40)
            PageHeader.seal(p, placedAt: snap.slot.ref)
        }
        XCTAssertThrowsError(try page.withUnsafeBytes { try Meta.decode(PageView(raw: $0, ref: snap.slot.ref)) }) {
            XCTAssertTrue("\($0)".contains("points inside a page"), "\($0)")
        }
    }

    /// A file of format 2 stays format 2, with its free list in chunk pages, so an engine
    /// that knows only format 2 can still read it; `compact` writes the current format.
    func testFormatTwoFilesKeepTheirLayoutUntilCompacted() throws {
        let dir = TempDir()
        let path = dir.file("old.fief")
        try fill(try Database(path: path), keys: 2000)
        try HeaderFormat.set(path, 2)
        let db = try Database(path: path, options: DatabaseOptions(durability: .none))
        XCTAssertEqual(db.format.number, 2)
        for k in 0..<20 {
            try db.write { tx in try tx.table("t", key: Int64.self, value: [UInt8].self).put(Int64(k), [1]) }
            let snap = try db.currentSnapshot(pin: false)
            XCTAssertEqual(snap.meta.freeExtents, [], "commit \(k) put extents in a format-2 top node")
            XCTAssertFalse(snap.meta.freeListChunks.isEmpty)
        }
        XCTAssertEqual(HeaderFormat.of(path), 2)
        XCTAssertTrue(try db.check().isSound)
        try db.compact()
        XCTAssertEqual(HeaderFormat.of(path), FileFormat.current.number)
        XCTAssertEqual(db.format, .current)
        for k in 0..<3 {
            try db.write { tx in try tx.table("t", key: Int64.self, value: [UInt8].self).put(Int64(k), [2]) }
        }
        XCTAssertFalse(try db.currentSnapshot(pin: false).meta.freeExtents.isEmpty)
        XCTAssertTrue(try db.check().isSound)
    }

    func testUnknownFormatsAreRefusedNamingTheKnownOnes() throws {
        let dir = TempDir()
        let path = dir.file("f.fief")
        try fill(try Database(path: path), keys: 1)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        for n: UInt32 in [1, 8, 99] {
            try HeaderFormat.set(path, n)
            XCTAssertThrowsError(try Database(path: path)) {
                XCTAssertEqual(
                    $0 as? EngineError, .unsupportedFormat(path: path, found: n, supported: [2, 3, 4, 5, 6, 7]))
                XCTAssertTrue("\($0)".contains("reads versions 2, 3, 4, 5, 6, 7"), "\($0)")
            }
        }
        try HeaderFormat.set(path, FileFormat.current.number)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
    }
}
