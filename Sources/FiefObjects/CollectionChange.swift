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

    init(deletions: [Int] = [], insertions: [Int] = [], modifications: [Int] = [], modificationsNew: [Int] = []) {
        self.deletions = deletions
        self.insertions = insertions
        self.modifications = modifications
        self.modificationsNew = modificationsNew
    }

    init(old: [Int64], new: [Int64], modified: Set<Int64>) {
        // The equal head and tail stay in place; only the window between them is compared
        // (one change in a large result is then a window of a few keys, not the whole array).
        var head = 0
        while head < old.count, head < new.count, old[head] == new[head] { head += 1 }
        var tail = 0
        while tail < old.count - head, tail < new.count - head, old[old.count - 1 - tail] == new[new.count - 1 - tail] { tail += 1 }
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
            for i in (old.count - tail)..<old.count where modified.contains(old[i]) { modifications.append(i); modificationsNew.append(i + shift) }
        }
        deletions += moved.map(\.old)
        deletions.sort()
        insertions = (head..<(new.count - tail)).filter { !inOld.contains($0) } + moved.map(\.new)
        insertions.sort()
    }

    /// Positions (into `xs`) of one longest strictly increasing subsequence (patience sorting).
    static func longestIncreasingRun(_ xs: [Int]) -> Set<Int> {
        var tails: [Int] = []            // index into xs of the smallest tail of a run of each length
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
