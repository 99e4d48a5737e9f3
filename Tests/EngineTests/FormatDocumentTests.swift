import Foundation
import XCTest

@testable import Engine

/// The records of `Engine/Format/` as `docs/FORMAT.md` §1 states them, pinned against the constants
/// the code reads and writes them with: a change to either without the other fails here.
final class FormatDocumentTests: XCTestCase {
    struct Row: Equatable, CustomStringConvertible {
        var offset: Int
        var size: Int
        var field: String
        var description: String { "\(field) at \(offset), \(size) bytes" }
    }

    /// The rows of the first table after the line that starts with `heading`.
    func table(after heading: String) throws -> [Row] {
        let doc = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../docs/FORMAT.md")
        let lines = try String(contentsOf: doc, encoding: .utf8).components(separatedBy: "\n")
        let start = try XCTUnwrap(lines.firstIndex { $0.hasPrefix(heading) }, "FORMAT.md has no '\(heading)'")
        var rows: [Row] = []
        for line in lines[(start + 1)...] {
            if !line.hasPrefix("|") {
                if rows.isEmpty { continue } else { break }
            }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count > 3, let o = Int(cells[1]), let n = Int(cells[2]) else { continue }
            rows.append(Row(offset: o, size: n, field: cells[3].replacingOccurrences(of: "**", with: "")))
        }
        return rows
    }

    func testHeaderPageMatchesTheDocument() throws {
        let rows = try table(after: "### 1.1 Header page")
        let expected = [
            "magic": (Layout.magicOffset, Layout.magic.count),
            "format version u32": (Layout.formatOffset, 4),
            "page size u32": (Layout.pageSizeOffset, 4),
            "header checksum u64": (Layout.headerChecksumOffset, 8),
            "select byte": (Layout.selectOffset, 1),
            "encryption record": (Layout.fileSaltOffset, Layout.encryptionChecksumOffset + 8 - Layout.fileSaltOffset),
            "top slot 0": (Layout.slotOffsets[0], Layout.slotSize),
            "top slot 1": (Layout.slotOffsets[1], Layout.slotSize)
        ]
        for (field, (offset, size)) in expected {
            XCTAssertTrue(
                rows.contains(Row(offset: offset, size: size, field: field)),
                "FORMAT.md §1.1 does not give \(field) at \(offset), \(size) bytes: \(rows)")
        }
        assertTiles(rows, bytes: Layout.pageSize)
        // Each of the select byte and the slots in a 512-byte sector of its own (I10).
        let sectors = [Layout.selectOffset / 512] + Layout.slotOffsets.map { $0 / 512 }
        XCTAssertEqual(Set(sectors).count, 3)
    }

    func testPageHeaderMatchesTheDocument() throws {
        let rows = try table(after: "### 1.2 Common page header")
        XCTAssertEqual(
            rows,
            [
                Row(offset: PageHeader.Offset.checksum, size: 8, field: "checksum u64"),
                Row(offset: PageHeader.Offset.kind, size: 1, field: "kind u8"),
                Row(offset: PageHeader.Offset.flags, size: 1, field: "flags u8"),
                Row(offset: PageHeader.Offset.count, size: 2, field: "count u16"),
                Row(offset: PageHeader.Offset.span, size: 4, field: "span u32"),
                Row(offset: PageHeader.Offset.version, size: 8, field: "version u64"),
                Row(offset: PageHeader.Offset.extra, size: 8, field: "extra u64")
            ])
        assertTiles(rows, bytes: Layout.pageHeaderSize)
        XCTAssertEqual(PageHeader.Offset.checksummed, PageHeader.Offset.checksum + 8)
        XCTAssertEqual(PageHeader.Offset.gapStart, PageHeader.Offset.extra)
        XCTAssertEqual(PageHeader.Offset.gapEnd, PageHeader.Offset.extra + 4)

        // What `fill` and `seal` write, read at the documented offsets and by `PageView`.
        var page = [UInt8](repeating: 0, count: Layout.pageSize)
        page.withUnsafeMutableBytes {
            PageHeader.fill($0, kind: .leaf, count: 3, span: 1, version: 42, extra: 0)
            PageHeader.seal($0, gap: 40..<4000, placedAt: 8192)
        }
        page.withUnsafeBytes { p in
            let v = PageView(raw: p, ref: 8192)
            XCTAssertEqual(p.u8(rows[1].offset), PageKind.leaf.rawValue)
            XCTAssertEqual(p.u8(rows[2].offset), PageHeader.gapFlag | PageHeader.placedFlag)
            XCTAssertEqual([v.count, v.span], [Int(p.u16(rows[3].offset)), Int(p.u32(rows[4].offset))])
            XCTAssertEqual([v.count, v.span], [3, 1])
            XCTAssertEqual(v.version, p.u64(rows[5].offset))
            XCTAssertEqual([p.u32(rows[6].offset), p.u32(rows[6].offset + 4)], [40, 4000])
            XCTAssertEqual(v.storedChecksum, p.u64(rows[0].offset))
            XCTAssertTrue(PageHeader.checksumMatches(p, ref: 8192))
            XCTAssertFalse(PageHeader.checksumMatches(p, ref: 4096), "a placed page read at another offset")
        }
    }

    func testCellsMatchTheDocument() throws {
        let leaf = try table(after: "**Leaf cell**")
        XCTAssertEqual(
            Array(leaf.prefix(5)).map { [$0.offset, $0.size] },
            [
                [LeafCell.Offset.keyLength, 2], [LeafCell.Offset.flags, 1], [LeafCell.Offset.pad, 1],
                [LeafCell.Offset.valueLength, 4], [LeafCell.Offset.overflowRef, 8]
            ])
        XCTAssertEqual(LeafCell.headerSize, LeafCell.Offset.overflowRef)
        XCTAssertEqual(LeafCell.overflowHeaderSize, LeafCell.Offset.overflowRef + 8)
        let branch = try table(after: "**Branch cell**")
        XCTAssertEqual(
            branch.map { [$0.offset, $0.size] }, [[BranchCell.Offset.child, 8], [BranchCell.Offset.keyLength, 2]])
        XCTAssertEqual(BranchCell.headerSize, BranchCell.Offset.keyLength + 2)

        // Cells a node writes, read back by the page reader and by the layout's own accessors.
        let node = DirtyNode(isLeaf: true, pageBytes: Layout.pageSize)
        let big = [UInt8](repeating: 9, count: 3)
        Array("k1".utf8).withUnsafeBytes { node.insertLeaf(at: 0, key: $0, value: .inline(big)) }
        Array("k2".utf8).withUnsafeBytes { node.insertLeaf(at: 1, key: $0, value: .overflow(ref: 12288, length: 5000)) }
        var page = [UInt8](repeating: 0, count: Layout.pageSize)
        page.withUnsafeMutableBytes { node.encode(into: $0, version: 1, checksumSkipsGap: false, placedAt: nil) }
        try page.withUnsafeBytes { p in
            let v = PageView(raw: p, ref: 4096)
            let o0 = CellOffsets.offset(p, 0), o1 = CellOffsets.offset(p, 1)
            XCTAssertGreaterThan(o0, o1, "cells are packed from the end, the last lowest")
            XCTAssertEqual(LeafCell.keyLength(p, at: o0), 2)
            XCTAssertEqual(LeafCell.valueLength(p, at: o0), 3)
            XCTAssertFalse(LeafCell.isOverflow(p, at: o0))
            XCTAssertTrue(LeafCell.isOverflow(p, at: o1))
            XCTAssertEqual(p.u64(o1 + LeafCell.Offset.overflowRef), 12288)
            XCTAssertEqual(LeafCell.length(p, at: o0), LeafCell.headerSize + 2 + 3)
            XCTAssertEqual(Array(try v.leafKey(1)), Array("k2".utf8))
            guard case .overflow(let ref, let length) = try v.leafValue(1) else { return XCTFail("not overflow") }
            XCTAssertEqual([ref, UInt64(length)], [12288, 5000])
        }
    }

    func testFreeListPagesAndOverflowExtentsMatchTheDocument() throws {
        let rows = try table(after: "**Free-list chunk**")
        XCTAssertEqual(rows.map { [$0.offset, $0.size] }, [[0, 8], [8, 8], [16, 8]])
        assertTiles(rows, bytes: FreeExtent.size)
        var b = [UInt8](repeating: 0, count: FreeExtent.size)
        b.withUnsafeMutableBytes { FreeExtent(start: 3, count: 4, freedAt: 5).encode(into: $0, at: 0) }
        b.withUnsafeBytes { p in XCTAssertEqual(rows.map { p.u64($0.offset) }, [3, 4, 5]) }
        // "From byte 32", and the capacities the document states.
        XCTAssertEqual(FreeListPages.chunkEntry(0), Layout.pageHeaderSize)
        XCTAssertEqual(FreeListPages.rootRef(0), Layout.pageHeaderSize)
        XCTAssertEqual(FreeListPages.extentsPerChunk(.plain), 169)
        XCTAssertEqual(FreeListPages.refsPerRootPage(.plain), 508)
        XCTAssertEqual(OverflowExtent.valueOffset, Layout.pageHeaderSize)
        XCTAssertEqual(OverflowExtent.span(valueLength: 4096 - 32, .plain), 1)
        XCTAssertEqual(OverflowExtent.span(valueLength: 4096 - 31, .plain), 2)
    }

    func testTopSlotMatchesTheDocument() throws {
        let rows = try table(after: "**Top slot**")
        XCTAssertEqual(
            rows,
            [
                Row(offset: TopSlot.Offset.ref, size: 8, field: "ref u64"),
                Row(offset: TopSlot.Offset.version, size: 8, field: "version u64"),
                Row(offset: TopSlot.Offset.topChecksum, size: 8, field: "top checksum u64"),
                Row(offset: TopSlot.Offset.slotChecksum, size: 8, field: "slot checksum u64")
            ])
        assertTiles(rows, bytes: Layout.slotSize)

        // The bytes a slot is written as, read back at the documented offsets, and by the one
        // reader every caller uses.
        let slot = TopSlot(ref: 3 * 4096, version: 77, topChecksum: 0xDEAD_BEEF)
        var header = [UInt8](repeating: 0, count: Layout.pageSize)
        header.withUnsafeMutableBytes { slot.encode(into: $0, at: Layout.slotOffsets[1]) }
        header.withUnsafeBytes { h in
            let at = { (row: Int) in h.u64(Layout.slotOffsets[1] + rows[row].offset) }
            XCTAssertEqual([at(0), at(1), at(2), at(3)], [slot.ref, slot.version, slot.topChecksum, slot.slotChecksum])
            XCTAssertEqual(TopSlot(header: h, index: 1), slot)
            XCTAssertTrue(TopSlot(header: h, index: 0).isBlank)
            XCTAssertEqual(
                slot.slotChecksum,
                Checksum.of(UnsafeRawBufferPointer(rebasing: h[Layout.slotOffsets[1]..<(Layout.slotOffsets[1] + 24)])))
        }
    }

    func testTopNodeMatchesTheDocument() throws {
        let rows = try table(after: "### 1.5 Top (meta) node")
        XCTAssertEqual(
            rows,
            [
                Row(offset: Meta.Offset.version, size: 8, field: "version u64"),
                Row(offset: Meta.Offset.catalogRoot, size: 8, field: "catalog root ref u64"),
                Row(offset: Meta.Offset.tableCount, size: 8, field: "table count u64"),
                Row(offset: Meta.Offset.freeListRef, size: 8, field: "free-list root ref u64"),
                Row(offset: Meta.Offset.pageCount, size: 8, field: "page count u64"),
                Row(offset: Meta.Offset.inlineChunkCount, size: 4, field: "inline chunk count *n* u32"),
                Row(offset: Meta.Offset.inlineExtentCount, size: 2, field: "inline extent count *m* u16"),
                Row(offset: Meta.Offset.reserved, size: 2, field: "—")
            ])
        XCTAssertEqual(rows.first?.offset, Layout.pageHeaderSize)
        XCTAssertEqual(rows.last.map { $0.offset + $0.size }, Meta.Offset.inline)

        let m = Meta(
            version: 9, catalogRoot: 5 * 4096, tableCount: 3, freeListRef: 0, pageCount: 12,
            freeListChunks: [7 * 4096], freeExtents: [FreeExtent(start: 10, count: 2, freedAt: 0)])
        var page = [UInt8](repeating: 0, count: Layout.pageSize)
        page.withUnsafeMutableBytes { m.encode(into: $0, checksumSkipsGap: true, placedAt: 4096) }
        page.withUnsafeBytes { p in
            XCTAssertEqual((0..<5).map { p.u64(rows[$0].offset) }, [9, 5 * 4096, 3, 0, 12])
            XCTAssertEqual(p.u32(rows[5].offset), 1)
            XCTAssertEqual(p.u16(rows[6].offset), 1)
            XCTAssertEqual(p.u64(Meta.Offset.inline), 7 * 4096)
        }
    }

    func testTableRecordMatchesTheDocument() throws {
        let rows = try table(after: "**Catalog**")
        XCTAssertEqual(rows.map(\.offset), [0, 8, 16, 17, 18])
        XCTAssertEqual(rows.map(\.size), [8, 8, 1, 1, 6])
        assertTiles(rows, bytes: TableRecord.size)
        let r = TableRecord(root: 8192, count: 41, keyKind: .int64, valueKind: .bytes)
        r.encode().withUnsafeBytes { p in
            XCTAssertEqual(p.u64(TableRecord.Offset.root), 8192)
            XCTAssertEqual(p.u64(TableRecord.Offset.count), 41)
            XCTAssertEqual(p.u8(TableRecord.Offset.keyKind), KeyKind.int64.rawValue)
            XCTAssertEqual(p.u8(TableRecord.Offset.valueKind), KeyKind.bytes.rawValue)
        }
        XCTAssertEqual(
            [
                TableRecord.Offset.root, TableRecord.Offset.count, TableRecord.Offset.keyKind,
                TableRecord.Offset.valueKind
            ],
            Array(rows.map(\.offset).prefix(4)))
    }

    /// The rows cover `bytes` from 0, each starting where the one before ends.
    private func assertTiles(_ rows: [Row], bytes: Int, file: StaticString = #filePath, line: UInt = #line) {
        var next = 0
        for r in rows {
            XCTAssertEqual(r.offset, next, "\(r) does not follow the row before", file: file, line: line)
            next = r.offset + r.size
        }
        XCTAssertEqual(next, bytes, "the rows end at \(next), not \(bytes)", file: file, line: line)
    }
}
