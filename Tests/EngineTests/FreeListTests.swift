import XCTest
@testable import Engine
import SeededRandomness

/// The chunked free list: its in-memory operations against a page-set model, and its
/// incremental storage against a full decode of what each commit wrote.
final class FreeListTests: XCTestCase {
    /// Every page is free-and-reusable, free-but-pending (with its tag) or in use; random
    /// allocations, frees and releases must agree with that model and keep chunk invariants.
    func testOperationsMatchPageModel() throws {
        var rng = SeededRandom(seed: testSeed("free-list model", default: 11))
        var list = FreeList(pageCount: 1)
        var reusable = Set<UInt64>()
        var pending: [UInt64: UInt64] = [:]  // page -> freedAt
        var inUse = Set<UInt64>()
        var version: UInt64 = 1
        for step in 0..<20_000 {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<4:
                // Now and then a commit's run: single pages from a reserved run of neighbours,
                // what it does not use given back. The file grows for a run only while the list
                // holds fewer than 4 free pages a page of the run, and by the run alone.
                let reserving = Int.random(in: 0..<8, using: &rng) == 0
                if reserving {
                    let run = Int.random(in: 2...6, using: &rng)
                    let freeBefore = reusable.count, endBefore = list.pageCount
                    list.reserveRun(run)
                    if list.pageCount > endBefore {
                        XCTAssertLessThan(
                            freeBefore, 4 * run, "step \(step): the file grew for a run while it had room")
                        XCTAssertLessThanOrEqual(run, FreeList.growsForRunsUpTo, "step \(step): grew for a large run")
                        XCTAssertEqual(list.pageCount, endBefore + UInt64(run), "step \(step): grew by more than a run")
                        for p in endBefore..<list.pageCount { reusable.insert(p) }
                    }
                }
                let pagesBefore = list.pageCount
                for _ in 0..<(reserving ? Int.random(in: 1...7, using: &rng) : 1) {
                    let n =
                        !reserving && Int.random(in: 0..<20, using: &rng) == 0 ? Int.random(in: 2...5, using: &rng) : 1
                    let start = list.allocate(n)
                    for p in start..<(start + UInt64(n)) {
                        XCTAssertFalse(inUse.contains(p), "step \(step): page \(p) handed out twice")
                        XCTAssertTrue(
                            reusable.remove(p) != nil || p >= list.pageCount - UInt64(n),
                            "step \(step): page \(p) was not reusable")
                        XCTAssertNil(pending[p], "step \(step): pending page \(p) handed out")
                        inUse.insert(p)
                    }
                }
                if reserving {
                    list.returnUnusedRun()
                    XCTAssertLessThanOrEqual(list.pageCount, pagesBefore + 7, "step \(step): the file grew for a run")
                }
            case 4..<7:
                guard let p = inUse.randomElement(using: &rng) else { continue }
                inUse.remove(p)
                pending[p] = version
                list.free(start: p, count: 1, at: version)
            case 7..<9:
                version += 1
            default:
                let minLive = version - UInt64.random(in: 0...min(version - 1, 3), using: &rng)
                list.release(upTo: minLive)
                for (p, tag) in pending where tag <= minLive { pending[p] = nil; reusable.insert(p) }
            }
            if step % 500 == 0 || step == 19_999 {
                try assertInvariants(list, reusable: reusable, pending: pending, step: step)
            }
        }
    }

    /// Pages the last commit wrote and this one frees are reachable only from the versions in
    /// between: reused while an older pin stays, held while a pin lies between. A page whose
    /// birth the list does not know waits for every older pin, as before.
    func testPagesWrittenAfterAnOldPinAreReusedOnceNoPinSeesThem() {
        var list = FreeList(pageCount: 100)
        list.commitStarted(after: 9)
        let written = list.allocate(5)  // by version 10
        list.commitStarted(after: 10)
        list.free(start: written, count: 5, at: 11)
        list.free(start: 50, count: 1, at: 11)  // written long before: birth unknown
        XCTAssertEqual(list.pendingPages, 6)

        var betweenPins = list
        betweenPins.commitStarted(after: 11)
        betweenPins.release(upTo: 5, pins: [5, 10])
        XCTAssertEqual(betweenPins.pendingPages, 6, "version 10 is pinned and reaches the pages it wrote")

        var oldPinOnly = list
        oldPinOnly.commitStarted(after: 11)
        oldPinOnly.release(upTo: 5, pins: [5])
        XCTAssertEqual(oldPinOnly.pendingPages, 1, "only the page of unknown birth waits for version 5")
        XCTAssertEqual(oldPinOnly.reusablePages, 5)

        var pinAtTheFree = list
        pinAtTheFree.commitStarted(after: 11)
        pinAtTheFree.release(upTo: 5, pins: [5, 11])
        XCTAssertEqual(pinAtTheFree.reusablePages, 5, "version 11 freed them: a pin there does not see them")
    }

    /// A commit's run: with single free pages scattered below a larger extent, the pages a
    /// commit takes after `reserveRun` are neighbours from that extent (one write call) where
    /// first fit alone would take the scattered ones; what the commit leaves goes back.
    func testAReservedRunHandsOutNeighbours() {
        let ext = { (s: UInt64, n: UInt64) in FreeExtent(start: s, count: n, freedAt: 0) }
        let scattered = [ext(3, 1), ext(5, 1), ext(10, 1), ext(12, 1), ext(20, 10)]
        var plain = FreeList(
            reusable: [], recent: scattered, pending: [], pageCount: 40, rootPages: [], geometry: .plain)
        XCTAssertEqual((0..<4).map { _ in plain.allocate(1) }, [3, 5, 10, 12])

        var list = FreeList(
            reusable: [], recent: scattered, pending: [], pageCount: 40, rootPages: [], geometry: .plain)
        list.reserveRun(4)
        XCTAssertEqual((0..<3).map { _ in list.allocate(1) }, [20, 21, 22])
        list.returnUnusedRun()
        XCTAssertEqual(list.recent, [ext(3, 1), ext(5, 1), ext(10, 1), ext(12, 1), ext(23, 7)])
        XCTAssertEqual(list.allocate(1), 3, "after the run, first fit again")

        // No recent extent holds the run but the list has room elsewhere (at least 4 pages
        // a page of the run): nothing is reserved, and the file does not grow for it.
        let roomy =
            [ext(3, 1), ext(5, 2), ext(9, 1), ext(11, 1), ext(13, 1), ext(15, 1), ext(17, 2)]
            + (0..<8).map { ext(20 + 2 * $0, 1) }
        var tight = FreeList(reusable: [], recent: roomy, pending: [], pageCount: 40, rootPages: [], geometry: .plain)
        tight.reserveRun(4)
        XCTAssertEqual((0..<3).map { _ in tight.allocate(1) }, [3, 5, 6])
        tight.returnUnusedRun()
        XCTAssertEqual(tight.pageCount, 40)

        // Scattered recent pages and a large extent in the chunked run (what a large delete or
        // update leaves): a commit of a few pages takes the scattered ones (no chunk page to
        // write); one of many pages takes its run from the chunk.
        let singles = (0..<8).map { ext(3 + 2 * $0, 1) }
        func chunked() -> FreeList {
            FreeList(
                reusable: [FreeChunk(entries: [ext(30, 16)], page: 2)], recent: singles, pending: [], pageCount: 50,
                rootPages: [], geometry: .plain)
        }
        var few = chunked()
        few.reserveRun(FreeList.runsFromChunksFrom - 1)
        XCTAssertEqual((0..<3).map { _ in few.allocate(1) }, [3, 5, 7])
        var many = chunked()
        many.reserveRun(FreeList.runsFromChunksFrom)
        XCTAssertEqual((0..<3).map { _ in many.allocate(1) }, [30, 31, 32])
        many.returnUnusedRun()
        XCTAssertEqual(many.pageCount, 50)

        // A list of a few scattered pages (a stream of small commits that began on scattered
        // pages): the run comes from the file's end, and what the commit leaves of it joins the
        // free pages, so the commit two later finds a run.
        var scarce = FreeList(
            reusable: [], recent: [ext(3, 1), ext(5, 2)], pending: [], pageCount: 40, rootPages: [], geometry: .plain)
        scarce.reserveRun(4)
        XCTAssertEqual((0..<3).map { _ in scarce.allocate(1) }, [40, 41, 42])
        scarce.returnUnusedRun()
        XCTAssertEqual(scarce.pageCount, 44)
        XCTAssertEqual(scarce.recent, [ext(3, 1), ext(5, 2), ext(43, 1)])
    }

    private func assertInvariants(_ list: FreeList, reusable: Set<UInt64>, pending: [UInt64: UInt64], step: Int) throws
    {
        var seenReusable = Set<UInt64>()
        var lastEnd: UInt64 = 0
        for c in list.reusable {
            XCTAssertFalse(c.entries.isEmpty, "step \(step): empty reusable chunk")
            XCTAssertLessThanOrEqual(c.entries.count, FreeChunk.capacity)
            for e in c.entries {
                XCTAssertEqual(e.freedAt, 0)
                XCTAssertGreaterThan(
                    e.start, lastEnd == 0 ? 0 : lastEnd - 1,
                    "step \(step): reusable extents out of order or overlapping")
                XCTAssertNotEqual(e.start, lastEnd, "step \(step): adjacent reusable extents not merged")
                lastEnd = e.end
                for p in e.start..<e.end { seenReusable.insert(p) }
            }
        }
        var lastRecentEnd: UInt64 = 0
        for e in list.recent {
            XCTAssertEqual(e.freedAt, 0)
            XCTAssertTrue(
                lastRecentEnd == 0 || e.start > lastRecentEnd,
                "step \(step): recent extents out of order, overlapping or not merged")
            lastRecentEnd = e.end
            for p in e.start..<e.end {
                XCTAssertTrue(seenReusable.insert(p).inserted, "step \(step): page \(p) both recent and in a chunk")
            }
        }
        XCTAssertEqual(seenReusable, reusable, "step \(step): reusable pages differ from the model")
        var seenPending: [UInt64: UInt64] = [:]
        var lastTag: UInt64 = 0
        for c in list.pending {
            XCTAssertLessThanOrEqual(c.entries.count, FreeChunk.capacity)
            for e in c.entries {
                XCTAssertGreaterThanOrEqual(e.freedAt, lastTag, "step \(step): pending extents out of tag order")
                lastTag = e.freedAt
                for p in e.start..<e.end { seenPending[p] = e.freedAt }
            }
        }
        XCTAssertEqual(seenPending, pending, "step \(step): pending pages differ from the model")
    }

    /// After every commit, the list the writer keeps in memory equals the one decoded from the
    /// file, and the file passes the full check (every page reachable or free, exactly once);
    /// with readers pinning old versions, and with a second handle committing in between.
    func testCachedListEqualsStoredListAcrossCommits() throws {
        let dir = TempDir()
        let path = dir.file("f.fief")
        let db = try Database(path: path, options: DatabaseOptions(durability: .none))
        let other = try Database(path: path, options: DatabaseOptions(durability: .none))
        var rng = SeededRandom(seed: testSeed("free-list storage", default: 21))
        try db.write { tx in
            let t = try tx.createTable("t", key: Int64.self, value: [UInt8].self)
            for k in Int64(0)..<20_000 { try t.put(k, [UInt8](repeating: 3, count: 60)) }
        }
        var pins: [PinnedVersion] = []
        var decodes = 0
        for round in 0..<300 {
            let writer = Int.random(in: 0..<10, using: &rng) == 0 ? other : db
            try writer.write { tx in
                let t = try tx.table("t", key: Int64.self, value: [UInt8].self)
                for _ in 0..<Int.random(in: 1...(round % 50 == 0 ? 3000 : 20), using: &rng) {
                    let k = Int64.random(in: 0..<25_000, using: &rng)
                    if Bool.random(using: &rng) {
                        try t.put(k, [UInt8](repeating: 5, count: Int.random(in: 1...300, using: &rng)))
                    } else {
                        try t.delete(k)
                    }
                }
            }
            if Int.random(in: 0..<8, using: &rng) == 0 { pins.append(try db.pin()) }
            if !pins.isEmpty && Int.random(in: 0..<6, using: &rng) == 0 {
                pins.remove(at: Int.random(in: 0..<pins.count, using: &rng)).release()
            }

            let snap = try writer.currentSnapshot(pin: false)
            let stored = try FreeListStorage.decode(snap.meta, pages: snap.pages)
            let cached = try XCTUnwrap(
                writer.freeListCache.list(fileID: writer.currentFileID, slot: snap.slot),
                "round \(round): no cached list after a commit")
            XCTAssertEqual(cached, stored, "round \(round): the cached free list differs from the stored one")
            XCTAssertNil((writer === db ? other : db).freeListCache.list(fileID: writer.currentFileID, slot: snap.slot))
            decodes += 1
            if round % 25 == 0 {
                let report = try db.check()
                XCTAssertTrue(report.isSound, "round \(round): \(report.problems)")
            }
        }
        for p in pins { p.release() }
        let report = try db.check()
        XCTAssertTrue(report.isSound, "\(report.problems)")
        XCTAssertEqual(decodes, 300)
    }

    /// A large free list: a commit of one record rewrites only a few of its pages.
    func testSmallCommitRewritesFewFreeListPages() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("s.fief"), options: DatabaseOptions(durability: .none))
        var rng = SeededRandom(seed: testSeed("free-list size", default: 31))
        let keys = (Int64(0)..<30_000).shuffled(using: &rng)
        for batch in stride(from: 0, to: keys.count, by: 3000) {
            try db.write { tx in
                let t = try tx.openTable("t", key: Int64.self, value: [UInt8].self)
                for k in keys[batch..<(batch + 3000)] { try t.put(k, [UInt8](repeating: 1, count: 100)) }
            }
        }
        let before = try db.currentSnapshot(pin: false)
        let list = try FreeListStorage.decode(before.meta, pages: before.pages)
        XCTAssertGreaterThan(list.chunks.count, 3, "the test needs a free list of several chunks")
        for k in Int64(0)..<20 {
            try db.write { tx in try tx.table("t", key: Int64.self, value: [UInt8].self).put(100_000 + k, [1]) }
        }
        let after = try db.currentSnapshot(pin: false)
        let v = after.version
        let rewritten = try FreeListStorage.decode(after.meta, pages: after.pages)
            .chunks.compactMap(\.ownPage).filter { (try? after.pages.page($0 * UInt64(Layout.pageSize)).version) == v }
            .count
        XCTAssertLessThanOrEqual(
            rewritten, 3, "a one-record commit rewrote \(rewritten) of \(list.chunks.count) free-list chunks")
        XCTAssertTrue(try db.check().isSound)
    }

    /// More chunks than the top node holds: the refs go to a chain of root pages, and back
    /// inline once the list shrinks.
    func testRootChainBeyondInlineCapacity() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("c.fief"), options: DatabaseOptions(durability: .none))
        let pages = (Meta.inlineChunkCapacity + 20) * FreeChunk.capacity
        try db.write { tx in
            try tx.createTable("t", key: Int64.self, value: Int64.self).put(1, 1)
            let start = tx.freeList.allocate(pages)
            // Every other page first, so no two frees merge: one extent per page.
            for p in stride(from: 0, to: pages, by: 2) {
                tx.freeList.free(start: start + UInt64(p), count: 1, at: tx.version)
            }
            for p in stride(from: 1, to: pages, by: 2) {
                tx.freeList.free(start: start + UInt64(p), count: 1, at: tx.version)
            }
        }
        for round in 0..<3 {
            let snap = try db.currentSnapshot(pin: false)
            XCTAssertEqual(
                snap.meta.freeListRef != 0, round == 0,
                "round \(round): root chain expected only while the list is long")
            let stored = try FreeListStorage.decode(snap.meta, pages: snap.pages)
            XCTAssertEqual(db.freeListCache.list(fileID: db.currentFileID, slot: snap.slot), stored, "round \(round)")
            let report = try db.check()
            XCTAssertTrue(report.isSound, "round \(round): \(report.problems)")
            try db.write { tx in try tx.table("t", key: Int64.self, value: Int64.self).put(2, Int64(round)) }
        }
    }
}
