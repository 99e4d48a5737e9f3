/// The best `limit` rows of a scan, kept as the rows go by. With an integer first sort key
/// (`column`), once the top k is full a row whose stored integer sorts strictly after the last
/// kept one is passed over on its bytes alone: the column is read through a `PropertyAccess`
/// (the row's layout compared with the last one, one load), and the last kept integer is held
/// here, not unwrapped from an `ObjectValue` per row. A row it cannot read (a null, damage)
/// takes the full path. A cluster whose bounds cannot beat the last kept row is passed over
/// whole.
///
/// A row's place, which breaks ties, is its rank in the scan, or (`byKey`, for clusters
/// visited best first) its object key: the same order, as a scan goes in key order.
struct TopKScan {
    private(set) var top: TopK
    let column: PropertyAccess?
    let ascending: Bool
    let byKey: Bool
    /// The last kept row's integer and place, once the top k is full.
    private var worst: (value: Int64, index: Int)?
    /// One sort key: a row tying with the last kept one loses to it when its place is later.
    private let tiesLose: Bool
    /// Rows offered so far: the place of the next one, unless `byKey`.
    private var seen = 0

    init(top: TopK, column: PropertyAccess?, ascending: Bool, byKey: Bool = false) {
        self.top = top
        self.column = column
        self.ascending = ascending
        self.byKey = byKey
        tiesLose = top.order.sorts.count == 1
    }

    /// Offers the row of object `k`: the integer test here, inlined, and the rest through
    /// `consider` (a call per row retained the sort keys).
    @inline(__always)
    mutating func offer(_ k: Int64, _ row: UnsafeRawBufferPointer, _ keys: QueryEvaluator.SortKeys) throws {
        let index = byKey ? Int(k) : seen
        seen += 1
        let x = column?.storedInt(row, key: k)
        if let x, let w = worst,
            (ascending ? x > w.value : x < w.value) || (x == w.value && tiesLose && index > w.index)
        {
            return
        }
        try consider(k, index, row, keys, stored: x)
    }

    /// Offers the row of object `k`, read in full when it might enter the top k; `stored` is
    /// its integer on the sort column when the row gave it (then the first sort value).
    private mutating func consider(
        _ k: Int64, _ index: Int, _ row: UnsafeRawBufferPointer, _ keys: QueryEvaluator.SortKeys, stored: Int64?
    ) throws {
        let first = try stored.map { ObjectValue.int($0) } ?? keys.value(0, k, row: row)
        if top.mightTake(first: first, index: index) {
            var r = try keys.ranked(index, k, row: row, first: first)
            if byKey { r.row = row }
            top.offer(r)
            if column != nil, let last = top.worst, case .int(let w) = last.first {
                worst = (w, last.index)
            } else {
                worst = nil
            }
        }
    }

    /// Whether no row of cluster `number` can enter the full top k, by the bounds the cluster
    /// keeps for the sort column (`ClusterSummary`): every value sorts after the last kept
    /// one, or (one sort key) ties with it from a later place.
    @inline(__always)
    func passes(over v: ClusterView, number: Int64) -> Bool {
        guard let column, let w = worst, let b = v.bounds(of: column.property.pid) else { return false }
        let edge = ascending ? b.least : b.greatest
        if edge == w.value { return tiesLose && (byKey ? Int(number << v.shift) : seen) > w.index }
        return ascending ? edge > w.value : edge < w.value
    }

    /// Offers every row of cluster `number` that `flat` matches (every row without one), in
    /// one loop: one access to this scan per cluster, where a closure per row paid a dynamic
    /// exclusivity check and the retains of its captures on every row.
    mutating func take(
        _ v: ClusterView, number: Int64, _ keys: QueryEvaluator.SortKeys, _ flat: RowConjunction?,
        _ codec: RowCodec?, _ src: CompiledPredicate.Source
    ) throws {
        if passes(over: v, number: number) {
            seen += v.count
            return
        }
        if let flat, let codec {
            _ = try flat.forEachMatch(in: v, number: number, codec, src) { k, row in
                try offer(k, row, keys)
                return true
            }
            return
        }
        var rows = ClusterView.RowCursor(v)
        while let (s, row) = try rows.next() { try offer(number << v.shift | Int64(s), row, keys) }
    }
}
