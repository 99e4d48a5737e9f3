import XCTest
@testable import Engine
import SeededRandomness

/// `DirtyNode` keeps its prefixes, offsets and cells in one buffer that grows and compacts by
/// moving whole: checked against a model through slot growth, compaction, splits, merges,
/// arenas past 64 KiB and copies to and from pages.
final class DirtyNodeTests: XCTestCase {
    /// Leaves side by side, as a one-level tree: each key goes to the last leaf whose first key
    /// is at most it, and a leaf that overflows splits.
    func testLeavesMatchAModelThroughInsertsReplacesRemovesAndSplits() throws {
        var rng = SeededRandom(seed: testSeed("dirty-node model", default: 25))
        var model: [[UInt8]: [UInt8]] = [:]
        var leaves = [DirtyNode(isLeaf: true, pageBytes: Layout.pageSize)]
        func leaf(for key: [UInt8]) -> Int {
            var l = 0
            for (j, n) in leaves.enumerated() where j > 0 && !key.lexicographicallyPrecedes(n.key(0)) { l = j }
            return l
        }
        for step in 0..<6_000 {
            // Short keys fill a leaf with hundreds of cells (slot growth); the odd large value
            // takes the arena past 64 KiB.
            let key = (0..<Int.random(in: 1...3, using: &rng)).map { _ in UInt8.random(in: 0...40, using: &rng) }
            let size = Int.random(in: 0..<100, using: &rng) == 0 ? 70_000 : Int.random(in: 0...12, using: &rng)
            let value = (0..<size).map { _ in UInt8(truncatingIfNeeded: step) }
            let l = leaf(for: key)
            let node = leaves[l]
            let (i, found) = node.search(key)
            if found && Bool.random(using: &rng) {
                node.remove(at: i)
                model[key] = nil
                if node.count == 0 && leaves.count > 1 {
                    leaves.remove(at: l)
                } else if l > 0 && leaves[l - 1].size + node.size <= node.capacity {
                    leaves[l - 1].append(contentsOf: node)
                    leaves.remove(at: l)
                }
            } else {
                let v = LeafValue.make(keyCount: key.count, value: value)
                if found {
                    node.setValue(at: i, v)
                } else {
                    key.withUnsafeBytes { node.insertLeaf(at: i, key: $0, value: v) }
                }
                model[key] = value
                if node.overflows { leaves.insert(node.split(appending: i == node.count - 1), at: l + 1) }
            }
            if step % 500 == 0 { try check(leaves, model) }
        }
        try check(leaves, model)
        // Every leaf, its large values moved out as a commit does, goes to a page and back as it was.
        for n in leaves {
            for i in 0..<n.count where n.isPendingLarge(i) {
                guard case .inline(let b) = n.value(i) else { continue }
                n.setValue(at: i, .overflow(ref: UInt64(4096 * (i + 1)), length: b.count))
            }
            let page = encode(n)
            let back = try page.withUnsafeBytes { try DirtyNode.decode(PageView(raw: $0, ref: 4096)) }
            XCTAssertEqual(encode(back), page)
            XCTAssertEqual(back.size, n.size)
        }
    }

    private func check(_ leaves: [DirtyNode], _ model: [[UInt8]: [UInt8]]) throws {
        var seen: [[UInt8]] = []
        for n in leaves {
            var size = 0
            for i in 0..<n.count {
                let key = Array(n.key(i))
                seen.append(key)
                guard case .inline(let v) = n.value(i) else { return XCTFail("a value left the node") }
                XCTAssertEqual(Array(v), model[key], "value of \(key)")
                size += n.cellSize(i)
            }
            XCTAssertEqual(n.size, size)
            XCTAssertLessThanOrEqual(n.size, n.capacity)
        }
        XCTAssertEqual(seen, model.keys.sorted { $0.lexicographicallyPrecedes($1) })
    }

    /// A branch's children stay beside their cells when the buffer moves, and `childIndex`
    /// finds each key's child.
    func testABranchKeepsItsChildrenAndRefs() throws {
        let branch = DirtyNode(isLeaf: false, pageBytes: Layout.pageSize)
        let keys = (0..<150).map { [UInt8(($0 * 7) % 256), UInt8($0)] }.sorted { $0.lexicographicallyPrecedes($1) }
        for (i, k) in keys.enumerated() {
            let first = i == 0 ? [] : k
            first.withUnsafeBytes { branch.insertBranch(at: i, key: $0, child: .page(UInt64(4096 * (i + 1)))) }
        }
        for (i, k) in keys.enumerated().dropFirst() {
            XCTAssertEqual(branch.childIndex(k), i)
            k.withUnsafeBytes { branch.setBranchKey(at: i, $0) }
            XCTAssertEqual(branch.childIndex(k), i)
        }
        let page = encode(branch)
        let back = try page.withUnsafeBytes { try DirtyNode.decode(PageView(raw: $0, ref: 4096)) }
        for i in 0..<back.count {
            guard case .page(let ref) = back.children[i] else { return XCTFail("child \(i) is not a ref") }
            XCTAssertEqual(ref, UInt64(4096 * (i + 1)))
        }
        XCTAssertEqual(encode(back), page)
    }

    private func encode(_ n: DirtyNode) -> [UInt8] {
        var page = [UInt8](repeating: 0, count: Layout.pageSize)
        page.withUnsafeMutableBytes { n.encode(into: $0, version: 3, checksumSkipsGap: false, placedAt: 4096) }
        return page
    }
}
