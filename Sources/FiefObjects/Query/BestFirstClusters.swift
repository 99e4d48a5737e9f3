/// A class's clusters in the order their bounds on an integer sort column promise for a top
/// k (`ClusterSummary`): the least first when ascending, the greatest first when descending,
/// clusters without bounds before all, ties by cluster number. A binary heap over their
/// indices: a top k that stops after a few clusters pays for those, not for sorting them all.
/// The views point into the transaction's pages, which must outlive the walk (a read's).
struct BestFirstClusters {
    private var views: [ClusterView] = []
    private var numbers: [Int64] = []
    private var edges: [Int64] = []
    private var bounded: [Bool] = []
    private var heap: [Int] = []
    private let ascending: Bool

    init(_ t: ObjectTables, _ c: ClassSchema, pid: UInt32, ascending: Bool) throws {
        self.ascending = ascending
        try t.clusters(c) { number, v in
            let b = v.bounds(of: pid)
            views.append(v)
            numbers.append(number)
            edges.append(b.map { ascending ? $0.least : $0.greatest } ?? 0)
            bounded.append(b != nil)
            return true
        }
        heap = Array(views.indices)
        for i in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(i) }
    }

    /// The next cluster, best first.
    mutating func next() -> (number: Int64, view: ClusterView)? {
        guard let top = heap.first else { return nil }
        heap[0] = heap[heap.count - 1]
        heap.removeLast()
        if !heap.isEmpty { siftDown(0) }
        return (numbers[top], views[top])
    }

    private func before(_ i: Int, _ j: Int) -> Bool {
        if bounded[i] != bounded[j] { return !bounded[i] }
        if edges[i] != edges[j] { return ascending ? edges[i] < edges[j] : edges[i] > edges[j] }
        return numbers[i] < numbers[j]
    }

    private mutating func siftDown(_ start: Int) {
        var i = start
        while true {
            let l = 2 * i + 1, r = l + 1
            var best = i
            if l < heap.count, before(heap[l], heap[best]) { best = l }
            if r < heap.count, before(heap[r], heap[best]) { best = r }
            if best == i { return }
            heap.swapAt(i, best)
            i = best
        }
    }
}
