import Foundation
import XCTest
@testable import Engine

/// Format 6: a node's checksum leaves out its free gap (between the offset array and the cells,
/// or after a top node's entries), flagged in the page's own header.
final class GapChecksumTests: XCTestCase {
    private func fill(_ db: Database, keys: Range<Int>) throws {
        try db.write { tx in
            let t = try tx.openTable("t", key: Int64.self, value: [UInt8].self)
            for k in keys { try t.put(Int64(k), [UInt8](repeating: UInt8(k % 251), count: 40)) }
        }
    }

    /// Every page the latest version wrote, as (page number, a copy of its bytes).
    private func pagesWritten(_ db: Database) throws -> [(page: UInt64, bytes: [UInt8])] {
        let snap = try db.currentSnapshot(pin: false)
        var out: [(UInt64, [UInt8])] = []
        for page in 1..<snap.meta.pageCount {
            let raw = UnsafeRawBufferPointer(
                start: snap.pages.mapping.base + Int(page) * Layout.pageSize, count: Layout.pageSize)
            if raw.u64(16) == snap.version && raw.u32(12) == 1 { out.append((page, Array(raw))) }
        }
        return out
    }

    private func flipByte(_ path: String, at offset: Int) throws {
        let h = try XCTUnwrap(FileHandle(forUpdatingAtPath: path))
        defer { try? h.close() }
        try h.seek(toOffset: UInt64(offset))
        let b = try XCTUnwrap(h.readData(ofLength: 1).first)
        try h.seek(toOffset: UInt64(offset))
        h.write(Data([b ^ 0x5A]))
    }

    func testNewFilesFlagTheGapOfEveryNodeAndTopNode() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("g.fief"), options: DatabaseOptions(durability: .none))
        XCTAssertEqual(db.format.number, 7)
        try fill(db, keys: 0..<2000)
        try fill(db, keys: 5000..<5001)
        let written = try pagesWritten(db)
        let kinds = written.compactMap { PageKind(rawValue: $0.bytes[8]) }
        XCTAssertTrue(kinds.contains(.leaf) && kinds.contains(.branch) && kinds.contains(.meta), "\(kinds)")
        for (page, bytes) in written {
            try bytes.withUnsafeBytes { raw in
                let v = PageView(raw: raw, ref: page * UInt64(Layout.pageSize))
                guard [.leaf, .branch, .meta].contains(try v.kind()) else { return }
                let kind = try v.kind()
                XCTAssertNotEqual(raw.u8(9) & PageHeader.gapFlag, 0, "page \(page) (\(kind))")
                let gap = try XCTUnwrap(PageHeader.gap(raw))
                XCTAssertTrue(raw[gap].allSatisfy { $0 == 0 }, "page \(page): the gap is not zeros")
                if kind != .meta {
                    XCTAssertEqual(gap.lowerBound, Layout.pageHeaderSize + 2 * v.count)
                    let lowest = (0..<v.count).map { Int(raw.u16(Layout.pageHeaderSize + 2 * $0)) }.min() ?? raw.count
                    XCTAssertEqual(gap.upperBound, lowest, "page \(page): the gap runs into the cells")
                }
                XCTAssertNotEqual(raw.u8(9) & PageHeader.placedFlag, 0, "page \(page) (\(kind)) is not placed")
                XCTAssertTrue(PageHeader.checksumMatches(raw, ref: page * UInt64(Layout.pageSize)))
                XCTAssertFalse(
                    PageHeader.checksumMatches(raw, ref: (page + 1) * UInt64(Layout.pageSize)),
                    "page \(page) passes at another offset")
            }
        }
        XCTAssertTrue(try db.check().isSound)
    }

    /// What the checksum covers and what it leaves out, on one sealed leaf.
    func testOnlyTheGapIsLeftOutAndDamagedBoundsFail() throws {
        let node = DirtyNode(isLeaf: true, pageBytes: Layout.pageSize)
        for k in 0..<20 {
            [UInt8](repeating: UInt8(k), count: 8).withUnsafeBytes {
                node.insertLeaf(at: k, key: $0, value: .inline([1, 2, 3]))
            }
        }
        var page = [UInt8](repeating: 0, count: Layout.pageSize)
        page.withUnsafeMutableBytes { node.encode(into: $0, version: 9, checksumSkipsGap: true, placedAt: nil) }
        let gap = try XCTUnwrap(page.withUnsafeBytes { PageHeader.gap($0) })
        XCTAssertEqual(gap.lowerBound, Layout.pageHeaderSize + 40)
        func matches(_ p: [UInt8]) -> Bool { p.withUnsafeBytes { PageHeader.checksumMatches($0, ref: 4096) } }
        XCTAssertTrue(matches(page))
        for offset in [gap.lowerBound, (gap.lowerBound + gap.upperBound) / 2, gap.upperBound - 1] {
            var p = page; p[offset] ^= 0xFF
            XCTAssertTrue(matches(p), "a byte in the gap, at \(offset), is covered")
        }
        for offset in [
            8, 9, 10, 24, 28, 31, Layout.pageHeaderSize, gap.lowerBound - 1, gap.upperBound, Layout.pageSize - 1
        ] {
            var p = page; p[offset] ^= 0x01
            XCTAssertFalse(matches(p), "a flipped bit at \(offset) went unseen")
        }
        var outside = page
        outside.withUnsafeMutableBytes { $0.setU32(UInt32(Layout.pageSize + 1), at: 28) }
        XCTAssertFalse(matches(outside))
        XCTAssertNil(outside.withUnsafeBytes { PageHeader.gap($0) })
        var inverted = page
        inverted.withUnsafeMutableBytes { $0.setU32(UInt32(gap.upperBound + 1), at: 24) }
        XCTAssertFalse(matches(inverted))
        XCTAssertFalse([UInt8](repeating: 0, count: 16).withUnsafeBytes { PageHeader.checksumMatches($0, ref: 4096) })

        // Unflagged (formats before 6), every byte counts.
        var whole = [UInt8](repeating: 0, count: Layout.pageSize)
        whole.withUnsafeMutableBytes { node.encode(into: $0, version: 9, checksumSkipsGap: false, placedAt: nil) }
        XCTAssertEqual(whole[9] & PageHeader.gapFlag, 0)
        XCTAssertTrue(matches(whole))
        whole[gap.lowerBound + 1] ^= 0xFF
        XCTAssertFalse(matches(whole))
    }

    /// A byte changed in a leaf's gap: reads, even verified ones, see nothing wrong (the data
    /// is intact), but `check` reports it; a byte changed in a cell fails the checksum.
    func testDamageInTheGapIsFoundByCheckAndInACellByTheChecksum() throws {
        let dir = TempDir()
        let path = dir.file("d.fief")
        var leafPage: UInt64 = 0, gap = 0..<0, cell = 0
        do {
            let db = try Database(path: path)
            try fill(db, keys: 0..<30)
            let leaf = try XCTUnwrap(pagesWritten(db).first { PageKind(rawValue: $0.bytes[8]) == .leaf })
            leafPage = leaf.page
            gap = try XCTUnwrap(leaf.bytes.withUnsafeBytes { PageHeader.gap($0) })
            cell = gap.upperBound + 3
            XCTAssertGreaterThan(gap.count, 100)
        }
        try flipByte(path, at: Int(leafPage) * Layout.pageSize + gap.lowerBound + gap.count / 2)
        var verified = DatabaseOptions()
        verified.verifyChecksums = true
        do {
            let db = try Database(path: path, options: verified)
            let n = try db.read { tx in try tx.table("t", key: Int64.self, value: [UInt8].self).count() }
            XCTAssertEqual(n, 30)
            let report = try db.check()
            XCTAssertTrue(report.problems.contains { $0.contains("stray bytes in its free gap") }, "\(report.problems)")
        }
        try flipByte(path, at: Int(leafPage) * Layout.pageSize + cell)
        let db = try Database(path: path, options: verified)
        XCTAssertThrowsError(
            try db.read { tx in try tx.table("t", key: Int64.self, value: [UInt8].self).get(Int64(29)) }
        ) {
            XCTAssertTrue("\($0)".contains("checksum"), "\($0)")
        }
        XCTAssertTrue(try db.check().problems.contains { $0.contains("checksum") })
    }

    /// A file of format 4 stays format 4 and its commits checksum whole pages, so an older
    /// engine can go on reading it; `compact` brings it to format 7.
    func testFormatFourFilesKeepWholePageChecksumsUntilCompacted() throws {
        let dir = TempDir()
        let path = dir.file("four.fief")
        try fill(try Database(path: path), keys: 0..<2000)
        try HeaderFormat.set(path, 4)
        let db = try Database(path: path, options: DatabaseOptions(durability: .none))
        XCTAssertEqual(db.format.number, 4)
        for k in 0..<10 {
            try fill(db, keys: (3000 + k)..<(3001 + k))
            let flagged = try pagesWritten(db).filter { $0.bytes[9] & PageHeader.gapFlag != 0 }
            XCTAssertEqual(flagged.map(\.page), [], "commit \(k) flagged a gap in a format-4 file")
        }
        XCTAssertEqual(HeaderFormat.of(path), 4)
        XCTAssertTrue(try db.check().isSound)
        try db.compact()
        XCTAssertEqual(HeaderFormat.of(path), 7)
        try fill(db, keys: 9000..<9001)
        XCTAssertFalse(try pagesWritten(db).filter { $0.bytes[9] & PageHeader.gapFlag != 0 }.isEmpty)
        XCTAssertTrue(try db.check().isSound)
    }

    /// A leaf whose span field is damaged (it claims to start an extent of several pages) is
    /// still checked as it is read: only an overflow value's first page defers its check to
    /// the whole extent (`fief db fuzz` found leaves read unchecked this way).
    func testADamagedSpanDoesNotSkipTheChecksum() throws {
        let dir = TempDir()
        let path = dir.file("span.fief")
        var leaf: UInt64 = 0
        do {
            let db = try Database(path: path)
            try fill(db, keys: 0..<300)
            leaf = try XCTUnwrap(pagesWritten(db).first { PageKind(rawValue: $0.bytes[8]) == .leaf }).page
        }
        try flipByte(path, at: Int(leaf) * Layout.pageSize + 13)
        var verified = DatabaseOptions(create: false)
        verified.verifyChecksums = true
        let db = try Database(path: path, options: verified)
        XCTAssertThrowsError(
            try db.read { tx in try tx.table("t", key: Int64.self, value: [UInt8].self).scan { _, _ in true } }
        ) {
            XCTAssertTrue("\($0)".contains("checksum"), "\($0)")
        }
    }

    /// A whole, well-formed page written over another (a misdirected write): its checksum is
    /// its own, but seeded with the offset it was written for, so reads and `check` refuse it
    /// where an unplaced checksum (format 6) let its cells pass for the other page's.
    func testAPageCopiedOverAnotherFailsItsChecksum() throws {
        let dir = TempDir()
        let path = dir.file("s.fief")
        var leaves: [UInt64] = []
        do {
            let db = try Database(path: path)
            try fill(db, keys: 0..<2000)
            let check = try db.check()
            XCTAssertTrue(check.isSound)
            leaves = try pagesWritten(db).filter { PageKind(rawValue: $0.bytes[8]) == .leaf }.map(\.page)
        }
        XCTAssertGreaterThan(leaves.count, 2)
        var d = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let ps = Layout.pageSize, from = Int(leaves[0]), to = Int(leaves[1])
        d.replaceSubrange((to * ps)..<((to + 1) * ps), with: d[(from * ps)..<((from + 1) * ps)])
        try Data(d).write(to: URL(fileURLWithPath: path))
        var verified = DatabaseOptions(create: false)
        verified.verifyChecksums = true
        let db = try Database(path: path, options: verified)
        XCTAssertThrowsError(
            try db.read { tx in try tx.table("t", key: Int64.self, value: [UInt8].self).scan { _, _ in true } }
        ) {
            XCTAssertTrue("\($0)".contains("checksum"), "\($0)")
        }
        XCTAssertTrue(
            try db.check().problems.contains { $0.contains("checksum") }, "check passes a page copied over another")
    }

    /// A page sealed without its offset (as formats before 7 seal) in a format-7 file passes
    /// its own checksum anywhere, so `check` refuses it for its missing place.
    func testAnUnplacedPageInAFormatSevenFileIsAProblem() throws {
        let dir = TempDir()
        let path = dir.file("u.fief")
        var leaf: UInt64 = 0
        do {
            let db = try Database(path: path)
            try fill(db, keys: 0..<300)
            leaf = try XCTUnwrap(pagesWritten(db).first { PageKind(rawValue: $0.bytes[8]) == .leaf }).page
            XCTAssertTrue(try db.check().isSound)
        }
        var d = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let o = Int(leaf) * Layout.pageSize
        d.withUnsafeMutableBytes { p in
            let page = UnsafeMutableRawBufferPointer(rebasing: p[o..<(o + Layout.pageSize)])
            page.setU8(UnsafeRawBufferPointer(page).u8(9) & ~PageHeader.placedFlag, at: 9)
            page.setU64(PageHeader.checksum(UnsafeRawBufferPointer(page), ref: 0)!, at: 0)
        }
        try Data(d).write(to: URL(fileURLWithPath: path))
        let db = try Database(path: path, options: DatabaseOptions(create: false))
        let problems = try db.check().problems
        XCTAssertTrue(problems.contains { $0.contains("not sealed at its offset") }, "\(problems)")
    }
}

/// Reads and rewrites a file header's format number (and the checksum that covers it).
enum HeaderFormat {
    static func set(_ path: String, _ n: UInt32) throws {
        var d = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        d.withUnsafeMutableBytes { p in
            p.setU32(n, at: Layout.formatOffset)
            p.setU64(
                Checksum.of(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(p)[0..<16])),
                at: Layout.headerChecksumOffset)
        }
        try Data(d).write(to: URL(fileURLWithPath: path))
    }

    static func of(_ path: String) -> UInt32? {
        guard let d = FileManager.default.contents(atPath: path) else { return nil }
        return [UInt8](d).withUnsafeBytes { $0.u32(Layout.formatOffset) }
    }
}
