/// A result with its sort values and its place before sorting (ties keep it: stable). The
/// first sort value sits apart, so a one-key sort allocates nothing per row.
struct Ranked {
    let index: Int
    let key: Int64
    let first: ObjectValue
    let rest: [ObjectValue]

    func value(_ j: Int) -> ObjectValue { j == 0 ? first : rest[j - 1] }
}

/// The order `sorts` put results in: each key in turn, ties by the place before sorting.
struct ResultOrder {
    let sorts: [SortDescriptor]

    func before(_ a: Ranked, _ b: Ranked) -> Bool {
        for (j, s) in sorts.enumerated() {
            let o = ObjectValue.order(a.value(j), b.value(j))
            if o != 0 { return s.ascending ? o < 0 : o > 0 }
        }
        return a.index < b.index
    }

    /// Whether a row whose first sort value is `first`, seen after `last`, sorts after it on
    /// the first key alone (so it cannot enter a full top k). With one key, a tie does: the
    /// row seen first goes first.
    func afterOnFirstKey(_ first: ObjectValue, _ last: Ranked) -> Bool {
        let o = ObjectValue.order(first, last.first)
        if o == 0 { return sorts.count == 1 }
        return sorts[0].ascending ? o > 0 : o < 0
    }

    func sorted(_ rows: [Ranked], limit: Int?) -> [Int64] {
        guard !sorts.isEmpty else { return Array(rows.prefix(limit ?? rows.count).map(\.key)) }
        if let limit, limit < rows.count / 8 {
            var top = TopK(order: self, limit: limit)
            for r in rows { top.offer(r) }
            return top.keys
        }
        let s = rows.sorted(by: before)
        return (limit.map { Array(s.prefix(max(0, $0))) } ?? s).map(\.key)
    }
}

/// The best `limit` rows in order, fed one at a time: a row that cannot enter is rejected
/// against the current last before anything is built for it (see `mightTake`).
struct TopK {
    let order: ResultOrder
    let limit: Int
    private(set) var best: [Ranked] = []

    init(order: ResultOrder, limit: Int) {
        self.order = order
        self.limit = max(0, limit)
        best.reserveCapacity(self.limit + 1)
    }

    /// False when a row with this first sort value, coming after every row offered so far,
    /// cannot be among the best.
    func mightTake(first: ObjectValue) -> Bool {
        guard limit > 0 else { return false }
        guard best.count == limit, let last = best.last else { return true }
        return !order.afterOnFirstKey(first, last)
    }

    mutating func offer(_ r: Ranked) {
        if best.count == limit, let last = best.last, !order.before(r, last) { return }
        guard limit > 0 else { return }
        var lo = 0, hi = best.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if order.before(best[mid], r) { lo = mid + 1 } else { hi = mid }
        }
        best.insert(r, at: lo)
        if best.count > limit { best.removeLast() }
    }

    var keys: [Int64] { best.map(\.key) }

    /// The first sort value of the last row kept, once `limit` rows are kept.
    var worstFirst: ObjectValue? { best.count == limit ? best.last?.first : nil }
}
