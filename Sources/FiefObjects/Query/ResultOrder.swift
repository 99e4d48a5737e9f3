/// A result with its sort values and its place before sorting (ties keep it: stable). The
/// first sort value sits apart, so a one-key sort allocates nothing per row.
struct Ranked {
    let index: Int
    let key: Int64
    let first: ObjectValue
    let rest: [ObjectValue]
    /// The object's row, when the scan lends stable bytes (for accessors that need no descent).
    var row: UnsafeRawBufferPointer? = nil

    func value(_ j: Int) -> ObjectValue { j == 0 ? first : rest[j - 1] }
}

/// The order `sorts` put results in: each key in turn, ties by the place before sorting.
struct ResultOrder {
    let sorts: [SortDescriptor]

    func before(_ a: Ranked, _ b: Ranked) -> Bool {
        // Two integers that differ decide it at once, without copying either value out.
        if case .int(let x) = a.first, case .int(let y) = b.first, x != y { return sorts[0].ascending ? x < y : x > y }
        for (j, s) in sorts.enumerated() {
            let o = ObjectValue.order(a.value(j), b.value(j))
            if o != 0 { return s.ascending ? o < 0 : o > 0 }
        }
        return a.index < b.index
    }

    /// Whether a row whose first sort value is `first` and whose place is `index` sorts after
    /// `last` on what is known before its other keys are read (so it cannot enter a full top
    /// k). With one key, a tie goes to the lower place.
    func after(first: ObjectValue, index: Int, _ last: Ranked) -> Bool {
        let o = ObjectValue.order(first, last.first)
        if o == 0 { return sorts.count == 1 && index > last.index }
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

    /// False when a row with this first sort value and place cannot be among the best.
    func mightTake(first: ObjectValue, index: Int) -> Bool {
        guard limit > 0 else { return false }
        guard best.count == limit, let last = best.last else { return true }
        return !order.after(first: first, index: index, last)
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
    /// The rows of `keys`, when every kept row came with one.
    var rows: [UnsafeRawBufferPointer]? {
        var out: [UnsafeRawBufferPointer] = []
        out.reserveCapacity(best.count)
        for r in best {
            guard let row = r.row else { return nil }
            out.append(row)
        }
        return out
    }

    /// The last row kept, once `limit` rows are kept.
    var worst: Ranked? { best.count == limit ? best.last : nil }
}
