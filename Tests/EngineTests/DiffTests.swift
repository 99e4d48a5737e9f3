import XCTest
@testable import Engine
import SeededRandomness

/// `Database.diff` against the slow truth: full scans of both versions compared key by key.
final class DiffTests: XCTestCase {
    /// Every table's entries in the version `pinned` holds.
    private func contents(_ db: Database, _ pinned: PinnedVersion) throws -> [String: [[UInt8]: [UInt8]]] {
        try db.read(pinned) { tx in
            var out: [String: [[UInt8]: [UInt8]]] = [:]
            for name in try tx.tableNames() {
                var rows: [[UInt8]: [UInt8]] = [:]
                try tx.scan(table: name) { k, v in
                    rows[Array(k)] = Array(v); return true
                }
                out[name] = rows
            }
            return out
        }
    }

    private func expected(
        _ a: [String: [[UInt8]: [UInt8]]], _ b: [String: [[UInt8]: [UInt8]]], from: UInt64, to: UInt64
    ) -> VersionDiff {
        var d = VersionDiff(from: from, to: to)
        d.created = Set(b.keys).subtracting(a.keys)
        d.dropped = Set(a.keys).subtracting(b.keys)
        for name in Set(a.keys).union(b.keys) {
            let x = a[name] ?? [:], y = b[name] ?? [:]
            var k = KeyDiff()
            k.deleted = x.keys.filter { y[$0] == nil }.sorted { compareBytes($0, $1) < 0 }
            k.inserted = y.keys.filter { x[$0] == nil }.sorted { compareBytes($0, $1) < 0 }
            k.modified = x.keys.filter { y[$0] != nil && y[$0] != x[$0] }.sorted { compareBytes($0, $1) < 0 }
            if !k.isEmpty { d.tables[name] = k }
        }
        return d
    }

    private func assertDiff(
        _ db: Database, _ p: PinnedVersion, _ q: PinnedVersion, _ truth: [UInt64: [String: [[UInt8]: [UInt8]]]],
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        var got = try db.diff(from: p, to: q)
        got.pagesRead = 0
        let want = expected(truth[p.version!]!, truth[q.version!]!, from: p.version!, to: q.version!)
        XCTAssertEqual(got, want, "diff \(p.version!) -> \(q.version!)", file: file, line: line)
    }

    /// Random puts, overwrites (same and new values, inline and overflow), deletes, range
    /// deletes and table creates and drops, with a pin every few commits; then the diff of
    /// every ordered pair of pinned versions equals the key-wise comparison of their scans.
    func testDiffOfEveryPinnedPairEqualsKeyWiseComparison() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("diff.fief"), options: DatabaseOptions(durability: .none))
        var rng = SeededRandom(seed: testSeed("diff", default: 0xD1FF))
        try db.write { tx in _ = try tx.createTable("main", key: Int64.self, value: [UInt8].self) }
        var pins: [PinnedVersion] = []
        var truth: [UInt64: [String: [[UInt8]: [UInt8]]]] = [:]
        func pinNow() throws {
            let p = try db.pin()
            truth[p.version!] = try contents(db, p)
            pins.append(p)
        }
        try pinNow()
        for commit in 0..<120 {
            try db.write { tx in
                let names = try tx.tableNames()
                for _ in 0..<Int.random(in: 1...(commit % 10 == 0 ? 400 : 25), using: &rng) {
                    let name = names.randomElement(using: &rng)!
                    let key = Int64.random(in: 0..<3000, using: &rng)
                    switch Int.random(in: 0..<10, using: &rng) {
                    case 0..<5:
                        let big = Int.random(in: 0..<40, using: &rng) == 0
                        let value = [UInt8](
                            repeating: UInt8.random(in: 0...3, using: &rng),
                            count: big ? 5000 : Int.random(in: 0..<60, using: &rng))
                        try tx.put(table: name, key: key.keyBytes, value: value)
                    case 5..<8:
                        try tx.delete(table: name, key: key.keyBytes)
                    case 8:
                        // A range delete empties leaves, so branches merge and the tree shrinks.
                        for k in key..<(key + Int64.random(in: 1...200, using: &rng)) {
                            try tx.delete(table: name, key: k.keyBytes)
                        }
                    default:
                        // Rewrite a value with itself: a new page, the same entry.
                        if let v = try tx.get(table: name, key: key.keyBytes) {
                            try tx.put(table: name, key: key.keyBytes, value: v)
                        }
                    }
                }
                if commit % 17 == 5 { try tx.createTable("extra\(commit)", keyKind: .int64, valueKind: .bytes) }
                if commit % 23 == 11, let victim = try tx.tableNames().first(where: { $0.hasPrefix("extra") }) {
                    try tx.dropTable(victim)
                }
            }
            if Int.random(in: 0..<6, using: &rng) == 0 || commit % 12 == 0 { try pinNow() }
        }
        try pinNow()
        XCTAssertGreaterThanOrEqual(pins.count, 10)
        for p in pins {
            for q in pins { try assertDiff(db, p, q, truth) }
        }
        XCTAssertTrue(try db.check().isSound)
    }

    /// One changed value in a big tree reads the pages on its path (in both versions) and the
    /// catalog, not the tree.
    func testSmallChangeInBigTreeReadsOnlyItsPath() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("big.fief"), options: DatabaseOptions(durability: .none))
        let rows: Int64 = 100_000
        try db.write { tx in
            let t = try tx.createTable("big", key: Int64.self, value: Int64.self)
            for i in 0..<rows { try t.put(i, i) }
            _ = try tx.createTable("other", key: Int64.self, value: Int64.self)
        }
        let before = try db.pin()
        try db.write { tx in try tx.table("big", key: Int64.self, value: Int64.self).put(rows / 3, -1) }
        let after = try db.pin()
        let d = try db.diff(from: before, to: after)
        XCTAssertEqual(d.tables, ["big": KeyDiff(modified: [(rows / 3).keyBytes])])
        let height = try treeHeight(db, "big")
        let pagesInTree = Int(try db.stats().bytesInUse) / 4096
        print(
            "one change in \(rows) rows (height \(height), "
                + "\(pagesInTree) pages in use): the diff read \(d.pagesRead) pages"
        )
        // Per side: the catalog (one leaf), the tree's leftmost path (read to learn its height)
        // and the changed path below the root.
        XCTAssertLessThanOrEqual(d.pagesRead, 2 * (1 + (height + 1) + height))
        XCTAssertGreaterThan(pagesInTree, 40 * d.pagesRead)

        // An insert at the front and a delete at the back: still two paths.
        try db.write { tx in
            let t = try tx.table("big", key: Int64.self, value: Int64.self)
            try t.put(-5, 0)
            try t.delete(rows - 1)
        }
        let third = try db.pin()
        let e = try db.diff(from: after, to: third)
        XCTAssertEqual(e.tables, ["big": KeyDiff(deleted: [(rows - 1).keyBytes], inserted: [Int64(-5).keyBytes])])
        XCTAssertLessThanOrEqual(e.pagesRead, 2 * (1 + 3 * (height + 1)))

        // Equal versions read nothing at all.
        XCTAssertEqual(try db.diff(from: third, to: third).pagesRead, 0)
    }

    private func treeHeight(_ db: Database, _ table: String) throws -> Int {
        try db.read { tx in
            var ref = try tx.state(table).root.flatMap { if case .page(let r) = $0 { return r } else { return nil } }!
            var h = 0
            while try tx.pages.page(ref).kind() == .branch { ref = try tx.pages.page(ref).branchChild(0); h += 1 }
            return h
        }
    }

    /// Across a `compact` the refs of the two versions point into different files: the diff
    /// compares entries, not refs, and is still exact.
    func testDiffAcrossCompactComparesEntries() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("c.fief"), options: DatabaseOptions(durability: .none))
        try db.write { tx in
            let t = try tx.createTable("t", key: Int64.self, value: Int64.self)
            for i in 0..<2000 { try t.put(Int64(i), Int64(i)) }
        }
        let old = try db.pin()
        let truthOld = try contents(db, old)
        try db.write { tx in
            let t = try tx.table("t", key: Int64.self, value: Int64.self)
            for i in stride(from: 0, to: 2000, by: 7) { try t.delete(Int64(i)) }
        }
        try db.compact()
        try db.write { tx in try tx.table("t", key: Int64.self, value: Int64.self).put(5, 55) }
        let new = try db.pin()
        var d = try db.diff(from: old, to: new)
        d.pagesRead = 0
        XCTAssertEqual(d, expected(truthOld, try contents(db, new), from: old.version!, to: new.version!))
    }

    /// `move(to:)` reads the pinned version and keeps it readable after the pin is released.
    func testMoveToPinnedVersion() throws {
        let dir = TempDir()
        let db = try Database(path: dir.file("m.fief"))
        try db.write { tx in try tx.createTable("t", key: Int64.self, value: Int64.self).put(1, 1) }
        let tx = try db.beginRead()
        try db.write { tx in try tx.table("t", key: Int64.self, value: Int64.self).put(1, 2) }
        let pinned = try db.pin()
        try db.write { tx in try tx.table("t", key: Int64.self, value: Int64.self).put(1, 3) }
        XCTAssertEqual(try db.diff(from: tx, to: pinned).tables, ["t": KeyDiff(modified: [Int64(1).keyBytes])])
        try tx.move(to: pinned)
        XCTAssertEqual(tx.version, pinned.version)
        pinned.release()
        // Writers churn; the transaction's own pin keeps its version's pages.
        for i in 4...40 { try db.write { w in try w.table("t", key: Int64.self, value: Int64.self).put(1, Int64(i)) } }
        XCTAssertEqual(try tx.table("t", key: Int64.self, value: Int64.self).get(1), 2)
        tx.end()
        XCTAssertThrowsError(try tx.move(to: try db.pin()))
    }
}
