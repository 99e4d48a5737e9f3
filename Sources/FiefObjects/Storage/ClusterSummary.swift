/// The least and greatest value of each integer property over a cluster's rows, kept after
/// the rows when the cluster's flags have bit 1 (`ClusterView`):
///
///     count LEB | count × (pid LEB | least, zigzag LEB | greatest − least LEB)
///
/// A scan for the top k by an integer passes over a whole cluster whose bounds cannot beat the
/// k-th row kept, without reading a row: a zone map, as column stores keep per block. A
/// property is listed only when every row holds an integer for it (no null, no row of a layout
/// that lacks it), so the bounds hold for every value a reader would see.
///
/// The bounds may be wider than the values, never narrower. A full write of the cluster
/// computes them again; a write that patches one value in place (`ObjectTables.patchRow`)
/// clears the flag when the new value falls outside them. Files without the trailer (every
/// cluster written before it existed) read as clusters with no bounds: nothing is skipped.
struct ClusterSummary: Equatable {
    static let flag: UInt8 = 2

    struct Bounds: Equatable {
        var least: Int64
        var greatest: Int64

        func holds(_ v: Int64) -> Bool { v >= least && v <= greatest }
    }

    private(set) var columns: [(pid: UInt32, bounds: Bounds)] = []

    static func == (a: ClusterSummary, b: ClusterSummary) -> Bool {
        a.columns.count == b.columns.count
            && zip(a.columns, b.columns).allSatisfy { $0.pid == $1.pid && $0.bounds == $1.bounds }
    }

    /// The bounds of every integer property of `plan` over `rows` (the cluster `number`); nil
    /// when no property has an integer in every row.
    static func of(_ rows: ClusterRows, number: Int64, _ plan: ObjectTables.ClassPlan) -> ClusterSummary? {
        let ints = plan.summarized
        guard !ints.isEmpty, rows.count > 0 else { return nil }
        let n = ints.count
        let codec = plan.codec, current = codec.current
        // Each column's slot in the current layout, found once per cluster: a row of that
        // layout is read in place, and any other (an older layout, a fixed row) the general way.
        // Bounds on the stack: three arrays and a `PropertyAccess` per column per cluster were
        // a third of writing a cluster back.
        let slots = ints.map { current.slot(of: $0.pid) }
        return withUnsafeTemporaryAllocation(of: Int64.self, capacity: 2 * n) { bounds -> ClusterSummary? in
            withUnsafeTemporaryAllocation(of: Bool.self, capacity: n) { holds -> ClusterSummary? in
                for j in 0..<n {
                    bounds[2 * j] = .max
                    bounds[2 * j + 1] = .min
                    holds[j] = true
                }
                withExtendedLifetime(current) {
                    let widths = UnsafePointer(current.widths.baseAddress!)
                    rows.forEachRow { slot, row in
                        let key = number << rows.shift | Int64(slot)
                        let start = CompactRow.header(row).flatMap { $0.id == Int(current.id) ? $0.start : nil }
                        for j in 0..<n where holds[j] {
                            let v: Int64
                            if let start, let s = slots[j] {
                                guard let f = CompactRow.locate(row, from: start, widths: widths, slot: s),
                                    f.serial != 0
                                else {
                                    holds[j] = false
                                    continue
                                }
                                v = CompactRow.int(row, f, key: key)
                            } else if case .int(let slow)? = try? codec.value(
                                row, pid: ints[j].pid, key: key, outOfRow: { nil })
                            {
                                v = slow
                            } else {
                                holds[j] = false
                                continue
                            }
                            if v < bounds[2 * j] { bounds[2 * j] = v }
                            if v > bounds[2 * j + 1] { bounds[2 * j + 1] = v }
                        }
                    }
                }
                var s = ClusterSummary()
                // Every row was read (there is at least one), so a column that holds has its bounds.
                for j in 0..<n where holds[j] {
                    s.columns.append((ints[j].pid, Bounds(least: bounds[2 * j], greatest: bounds[2 * j + 1])))
                }
                return s.columns.isEmpty ? nil : s
            }
        }
    }

    /// The trailer's bytes.
    func encoded() -> [UInt8] {
        var out: [UInt8] = []
        CompactRow.appendLeb(UInt64(columns.count), to: &out)
        for (pid, b) in columns {
            CompactRow.appendLeb(UInt64(pid), to: &out)
            CompactRow.appendLeb(UInt64(bitPattern: (b.least << 1) ^ (b.least >> 63)), to: &out)
            CompactRow.appendLeb(UInt64(bitPattern: b.greatest &- b.least), to: &out)
        }
        return out
    }

    /// Reads a trailer; throws `RowError` when it is not one (damage), ending anywhere but at
    /// the end of `bytes`.
    init(_ bytes: UnsafeRawBufferPointer) throws {
        try ClusterSummary.walk(bytes) { pid, b in
            columns.append((pid, b))
            return true
        }
    }

    /// The bounds of property `pid` in a trailer, without making a summary (a scan asks once
    /// per cluster); nil when the trailer keeps none for it, or is damaged (the check reports
    /// that; a scan then reads every row).
    @inline(__always)
    static func bounds(in bytes: UnsafeRawBufferPointer, of pid: UInt32) -> Bounds? {
        var found: Bounds?
        _ = try? walk(bytes) { p, b in
            if p == pid { found = b }
            return p != pid
        }
        return found
    }

    /// Each column of a trailer in order, until `body` returns false; throws as `init` does.
    private static func walk(_ bytes: UnsafeRawBufferPointer, _ body: (UInt32, Bounds) throws -> Bool) throws {
        var at = 0
        let n = CompactRow.leb(bytes, &at)
        guard n >= 0, n <= bytes.count else { throw RowError("cluster summary of \(bytes.count) bytes is damaged") }
        for _ in 0..<n {
            let pid = CompactRow.leb(bytes, &at)
            guard pid >= 0, let z = CompactRow.leb64(bytes, &at), let span = CompactRow.leb64(bytes, &at) else {
                throw RowError("cluster summary of \(bytes.count) bytes is damaged")
            }
            let least = Int64(bitPattern: z >> 1) ^ -Int64(bitPattern: z & 1)
            // Wraps only when least + span passes Int64.max: no pair of integers is that far apart.
            let greatest = Int64(bitPattern: UInt64(bitPattern: least) &+ span)
            guard greatest >= least else { throw RowError("cluster summary bounds overflow") }
            if try !body(UInt32(pid), Bounds(least: least, greatest: greatest)) { return }
        }
        guard at == bytes.count else { throw RowError("cluster summary has \(bytes.count - at) bytes past its end") }
    }

    private init() {}

    /// A summary of the given bounds (what `of` builds from rows), in this order.
    init(columns: [(pid: UInt32, bounds: Bounds)]) { self.columns = columns }

    /// The bounds of property `pid`, nil when the cluster keeps none for it.
    func bounds(_ pid: UInt32) -> Bounds? { columns.first { $0.pid == pid }?.bounds }
}
