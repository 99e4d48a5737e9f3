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
        var newIndex: [Int64: Int] = [:]
        newIndex.reserveCapacity(new.count)
        for (i, k) in new.enumerated() { newIndex[k] = i }
        // Objects in both, in old order, with their new positions.
        var common: [(old: Int, new: Int)] = []
        for (i, k) in old.enumerated() {
            if let j = newIndex[k] { common.append((i, j)) } else { deletions.append(i) }
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
        deletions += moved.map(\.old)
        deletions.sort()
        insertions = (0..<new.count).filter { !inOld.contains($0) } + moved.map(\.new)
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
