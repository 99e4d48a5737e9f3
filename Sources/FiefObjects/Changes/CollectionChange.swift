/// How a collection of distinct object keys went from `old` to `new`, in Realm's terms:
/// remove `deletions` (indices in `old`, ascending), then insert `insertions` (indices in
/// `new`, ascending), and `old` becomes `new`. An object that stayed but changed position (a
/// re-sort) is a deletion plus an insertion; the objects kept in place are the longest run
/// whose relative order did not change, so a move costs one pair, not a cascade.
/// `modifications` are indices in `old` of objects kept in place that changed;
/// `modificationsNew` the same objects' indices in `new`.
struct CollectionChange: Equatable {
    var deletions: [Int] = []
    var insertions: [Int] = []
    var modifications: [Int] = []
    var modificationsNew: [Int] = []

    var isEmpty: Bool { deletions.isEmpty && insertions.isEmpty && modifications.isEmpty }

    /// Hands the change to an observer's `.update` (a `ResultsChange`'s or a `ListChange`'s,
    /// which carry the same indices); an empty change is no news, so the observer hears nothing.
    func deliver(_ update: (_ deletions: [Int], _ insertions: [Int], _ modifications: [Int]) -> Void) {
        if !isEmpty { update(deletions, insertions, modifications) }
    }

    init(deletions: [Int] = [], insertions: [Int] = [], modifications: [Int] = [], modificationsNew: [Int] = []) {
        self.deletions = deletions
        self.insertions = insertions
        self.modifications = modifications
        self.modificationsNew = modificationsNew
    }

    /// `touched`, when known: the only objects that may have left, arrived or moved (what the
    /// commit deleted, inserted or modified; every other object keeps its sort values, so its
    /// relative order). Then one walk down both arrays finds the change.
    init(old: [Int64], new: [Int64], modified: Set<Int64>, touched: Set<Int64>? = nil) {
        if let touched,
            let walked = CollectionChange.walk(
                old, new, modified: FewKeys(modified), touched: FewKeys(touched),
                pureInserts: FewKeys(touched.subtracting(modified)))
        {
            self = walked
            return
        }
        // The equal head and tail stay in place; only the window between them is compared
        // (one change in a large result is then a window of a few keys, not the whole array).
        var head = 0
        while head < old.count, head < new.count, old[head] == new[head] { head += 1 }
        var tail = 0
        while tail < old.count - head, tail < new.count - head, old[old.count - 1 - tail] == new[new.count - 1 - tail] {
            tail += 1
        }
        let shift = new.count - old.count
        if !modified.isEmpty {
            for i in 0..<head where modified.contains(old[i]) { modifications.append(i); modificationsNew.append(i) }
        }
        var newIndex: [Int64: Int] = [:]
        for j in head..<(new.count - tail) { newIndex[new[j]] = j }
        // Objects in both, in old order, with their new positions.
        var common: [(old: Int, new: Int)] = []
        for i in head..<(old.count - tail) {
            if let j = newIndex[old[i]] { common.append((i, j)) } else { deletions.append(i) }
        }
        let kept = CollectionChange.longestIncreasingRun(common.map(\.new))
        var inOld = Set<Int>(), moved: [(old: Int, new: Int)] = []
        for (n, c) in common.enumerated() {
            if kept.contains(n) {
                if modified.contains(old[c.old]) {
                    modifications.append(c.old)
                    modificationsNew.append(c.new)
                }
            } else {
                moved.append(c)
            }
            inOld.insert(c.new)
        }
        if !modified.isEmpty {
            for i in (old.count - tail)..<old.count where modified.contains(old[i]) {
                modifications.append(i); modificationsNew.append(i + shift)
            }
        }
        deletions += moved.map(\.old)
        deletions.sort()
        insertions = (head..<(new.count - tail)).filter { !inOld.contains($0) } + moved.map(\.new)
        insertions.sort()
    }

    /// Equal keys stay in place (a modification when modified); where the arrays differ, a
    /// touched key steps aside, an arrival first (so an object modified in place next to it
    /// stays a modification), then a departure or a move. nil when an untouched key is out of
    /// place, which only a full comparison can explain.
    static func walk(_ old: [Int64], _ new: [Int64], modified: FewKeys, touched: FewKeys, pureInserts: FewKeys)
        -> CollectionChange?
    {
        old.withUnsafeBufferPointer { old in
            new.withUnsafeBufferPointer { new in
                walk(old, new, modified: modified, touched: touched, pureInserts: pureInserts)
            }
        }
    }

    private static func walk(
        _ old: UnsafeBufferPointer<Int64>, _ new: UnsafeBufferPointer<Int64>, modified: FewKeys, touched: FewKeys,
        pureInserts: FewKeys
    ) -> CollectionChange? {
        var c = CollectionChange()
        // Where the modified keys are in `old`, found in one pass: a run of equal keys then
        // takes those inside it, not a test of each of its keys.
        let modifiedAt = modified.positions(in: old)
        var m = 0
        var i = 0, j = 0
        while i < old.count || j < new.count {
            if i < old.count, j < new.count, old[i] == new[j] {
                // A run of equal keys (nearly all of a large result one commit changed).
                let end = i + equalRun(old, i, new, j)
                while m < modifiedAt.count, modifiedAt[m] < i { m += 1 }
                while m < modifiedAt.count, modifiedAt[m] < end {
                    c.modifications.append(modifiedAt[m])
                    c.modificationsNew.append(modifiedAt[m] - i + j)
                    m += 1
                }
                j += end - i
                i = end
            } else if j < new.count, pureInserts.contains(new[j]) || (i == old.count && touched.contains(new[j])) {
                c.insertions.append(j); j += 1
            } else if i < old.count, touched.contains(old[i]) {
                c.deletions.append(i); i += 1
            } else if j < new.count, touched.contains(new[j]) {
                c.insertions.append(j); j += 1
            } else {
                return nil
            }
        }
        return c
    }

    /// How many keys from `a[i]` and `b[j]` on are equal pair by pair: blocks of keys compared
    /// four to a vector operation, then the block that differs key by key.
    static func equalRun(_ a: UnsafeBufferPointer<Int64>, _ i: Int, _ b: UnsafeBufferPointer<Int64>, _ j: Int)
        -> Int
    {
        let n = min(a.count - i, b.count - j)
        guard n > 0, let pa = a.baseAddress.map({ $0 + i }), let pb = b.baseAddress.map({ $0 + j }) else { return 0 }
        let ra = UnsafeRawPointer(pa), rb = UnsafeRawPointer(pb)
        var start = 0
        while start < n {
            let end = min(start + FewKeys.block, n)
            var k = start
            var diff = FewKeys.Lanes(repeating: 0)
            while k + FewKeys.Lanes.scalarCount <= end {
                diff |=
                    ra.loadUnaligned(fromByteOffset: k * 8, as: FewKeys.Lanes.self)
                    ^ rb.loadUnaligned(fromByteOffset: k * 8, as: FewKeys.Lanes.self)
                k += FewKeys.Lanes.scalarCount
            }
            if diff != FewKeys.Lanes(repeating: 0) || k < end {
                k = start
                while k < end, pa[k] == pb[k] { k += 1 }
                if k < end { return k }
            }
            start = end
        }
        return n
    }

    /// The change between two arrays that may repeat elements (a list's values): what a
    /// longest common subsequence keeps stays in place, the rest of `old` is deleted and the rest
    /// of `new` inserted. `modifiedAt(i)`: whether the kept element at old index `i` changed (a
    /// link to an object that changed).
    init<T: Equatable>(oldValues old: [T], newValues new: [T], modifiedAt: (Int) -> Bool) {
        var keptOld = Set<Int>(), keptNew = Set<Int>()
        for (i, j) in CollectionChange.commonPairs(old, new) {
            keptOld.insert(i)
            keptNew.insert(j)
            if modifiedAt(i) {
                modifications.append(i)
                modificationsNew.append(j)
            }
        }
        deletions = (0..<old.count).filter { !keptOld.contains($0) }
        insertions = (0..<new.count).filter { !keptNew.contains($0) }
    }

    /// Index pairs of one longest common subsequence of `a` and `b`, in order: Myers' O((N+M)D)
    /// greedy walk after trimming the equal head and tail (D, the edits, is small for a list
    /// that one commit changed).
    static func commonPairs<T: Equatable>(_ a: [T], _ b: [T]) -> [(Int, Int)] {
        var head = 0
        while head < a.count, head < b.count, a[head] == b[head] { head += 1 }
        var tail = 0
        while tail < a.count - head, tail < b.count - head, a[a.count - 1 - tail] == b[b.count - 1 - tail] { tail += 1 }
        var pairs = (0..<head).map { ($0, $0) }
        let x0 = head, n = a.count - head - tail, m = b.count - head - tail
        if n > 0 && m > 0 {
            // v[k + off]: the furthest x on diagonal k (y = x - k) after d edits; trace[d]: v
            // before step d, to walk back from (n, m).
            let off = n + m + 1
            var v = [Int](repeating: 0, count: 2 * off + 1)
            var trace: [[Int]] = []
            search: for d in 0...(n + m) {
                trace.append(v)
                for k in stride(from: -d, through: d, by: 2) {
                    var x =
                        (k == -d || (k != d && v[k - 1 + off] < v[k + 1 + off])) ? v[k + 1 + off] : v[k - 1 + off] + 1
                    var y = x - k
                    while x < n, y < m, a[x0 + x] == b[x0 + y] { x += 1; y += 1 }
                    v[k + off] = x
                    if x >= n && y >= m { break search }
                }
            }
            var middle: [(Int, Int)] = []
            var x = n, y = m
            for d in stride(from: trace.count - 1, through: 0, by: -1) {
                let w = trace[d], k = x - y
                let prevK = (k == -d || (k != d && w[k - 1 + off] < w[k + 1 + off])) ? k + 1 : k - 1
                let prevX = w[prevK + off], prevY = prevX - prevK
                while x > prevX, y > prevY {
                    x -= 1; y -= 1
                    middle.append((x0 + x, x0 + y))
                }
                x = prevX; y = prevY
            }
            pairs += middle.reversed()
        }
        pairs += (0..<tail).map { (a.count - tail + $0, b.count - tail + $0) }
        return pairs
    }

    /// Positions (into `xs`) of one longest strictly increasing subsequence (patience sorting).
    static func longestIncreasingRun(_ xs: [Int]) -> Set<Int> {
        var tails: [Int] = []  // index into xs of the smallest tail of a run of each length
        var previous = [Int](repeating: -1, count: xs.count)
        for (i, x) in xs.enumerated() {
            var lo = 0, hi = tails.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if xs[tails[mid]] < x { lo = mid + 1 } else { hi = mid }
            }
            if lo > 0 { previous[i] = tails[lo - 1] }
            if lo == tails.count { tails.append(i) } else { tails[lo] = i }
        }
        var run = Set<Int>()
        var i = tails.last ?? -1
        while i >= 0 { run.insert(i); i = previous[i] }
        return run
    }
}
