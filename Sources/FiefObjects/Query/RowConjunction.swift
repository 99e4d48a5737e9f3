import Foundation

/// An AND of comparisons of the object's own scalars with constants (`age > 40 AND city ==
/// "c17"`; one comparison alone is an AND of one), laid out flat in memory it owns: a scan
/// tests each row with loads and compares and no reference counting. What the terms cannot
/// answer on the row's bytes (a null, an out-of-row string, options) goes through the term's
/// `CompiledPredicate.Comparison` and `QueryEvaluator.compare`.
final class RowConjunction {
    struct Term {
        /// `int`: the row's 8 bytes against `value`; `bytes`: the row's in-row UTF-8 against the
        /// constant's (`==`, `!=`, BEGINSWITH); `general`: through `QueryEvaluator.compare`.
        enum Kind: UInt8 { case int, bytes, general }
        let kind: Kind
        let pid: UInt32
        let op: CompareOperator
        let value: Int64
        let bytesStart: Int
        let bytesCount: Int
        /// The answer for a row whose layout predates the property.
        let absentMatches: Bool
    }

    /// How term `i` reads a row of layout `l`: `placed[l.id * terms.count + i]`, worked out
    /// once per query for every layout of the class, so a row costs a walk to the slot, loads
    /// and compares, not a slot lookup and kind checks per term.
    struct Placed {
        enum Mode: UInt8 {
            /// The layout predates the property: the row answers `absentMatches`.
            case absent
            /// An integer (serials 1…9 of an `int` slot).
            case int
            /// UTF-8 or data bytes kept in the row (odd serials of a `bytes` slot).
            case bytes
            /// Through `slowMatch` (a kind the fast paths do not read).
            case slow
        }
        let mode: Mode
        let slot: Int
    }

    private let terms: UnsafeMutableBufferPointer<Term>
    private let bytes: UnsafeMutableBufferPointer<UInt8>
    private let placed: UnsafeMutableBufferPointer<Placed>
    /// Per layout, the terms in the order a row's walk meets their slots (terms a layout
    /// lacks first): `order[l.id * terms.count + j]` is the j-th term to test. One walk over
    /// the serials serves every term, where a walk per term went over the first slots again.
    private let order: UnsafeMutableBufferPointer<Int>
    /// Every layout's slot widths, back to back (`widthStarts[id]` is where layout `id`'s
    /// begin): the walk to a slot reads them from memory this conjunction owns.
    private let widths: UnsafeMutableBufferPointer<RowLayout.Width>
    private let widthStarts: UnsafeMutableBufferPointer<Int>
    /// `CompactRow.steps`, held here: read from the global, every row's test went through its
    /// lazy initializer's check (`swift_once`).
    private let steps = CompactRow.steps
    private let layoutCount: Int
    /// The bytes every matching compact row contains, when one term is an `==` on a short
    /// string kept in the row (its serial, then its UTF-8): a row without them cannot match.
    /// A row whose layout lacks the property must not match either, and in every layout the
    /// property is read on its bytes. An out-of-row string is 64 bytes or more, longer than any
    /// needle's, and a null has serial 0, so neither can equal the constant.
    let needle: UnsafeMutableBufferPointer<UInt8>?
    /// The search for `needle`, set up once (its vectors) rather than per cluster.
    private let search: ByteSearch?
    /// The comparisons, one per term: the slow path's operands.
    let comparisons: [CompiledPredicate.Comparison]

    init(_ given: [CompiledPredicate.Comparison], _ codec: RowCodec) {
        // Equalities first, then prefixes, then the rest: without statistics, the usual
        // guess at which rejects most rows (SQLite's planner ranks `==` terms first too).
        // Only the cost changes: an AND's answer does not depend on its order.
        func rank(_ c: CompiledPredicate.Comparison) -> Int {
            switch c.op {
            case .equal: return c.kind == .general ? 3 : 0
            case .beginsWith: return c.kind == .general ? 3 : 1
            default: return c.kind == .general ? 3 : 2
            }
        }
        let comparisons = given.enumerated().sorted { (rank($0.element), $0.offset) < (rank($1.element), $1.offset) }
            .map(\.element)
        var terms: [Term] = [], pool: [UInt8] = []
        for c in comparisons {
            var value: Int64 = 0
            if case .int(let x) = c.value { value = x }
            terms.append(
                Term(
                    kind: c.kind, pid: c.pid, op: c.op, value: value, bytesStart: pool.count,
                    bytesCount: c.utf8?.count ?? 0,
                    absentMatches: QueryEvaluator.compare(c.absent, c.op, c.value, c.options)))
            pool.append(contentsOf: c.utf8 ?? [])
        }
        var placed: [Placed] = [], widths: [RowLayout.Width] = [], starts: [Int] = [], order: [Int] = []
        for l in codec.layouts {
            let these = terms.map { RowConjunction.place($0, in: l) }
            placed += these
            // Stable: terms on one slot keep their rank order.
            order += these.indices.sorted { (these[$0].slot, $0) < (these[$1].slot, $1) }
            starts.append(widths.count)
            widths.append(contentsOf: l.widths)
        }
        self.terms = .allocate(capacity: max(1, terms.count))
        _ = self.terms.initialize(from: terms)
        bytes = .allocate(capacity: max(1, pool.count))
        _ = bytes.initialize(from: pool)
        layoutCount = codec.layouts.count
        self.placed = .allocate(capacity: max(1, placed.count))
        _ = self.placed.initialize(from: placed)
        self.order = .allocate(capacity: max(1, order.count))
        _ = self.order.initialize(from: order)
        self.widths = .allocate(capacity: max(1, widths.count))
        _ = self.widths.initialize(from: widths)
        widthStarts = .allocate(capacity: max(1, starts.count))
        _ = widthStarts.initialize(from: starts)
        needle = RowConjunction.needle(terms, placed, pool)
        search = needle.map { ByteSearch(UnsafeRawBufferPointer($0)) }
        self.comparisons = comparisons
    }

    private static func place(_ t: Term, in l: RowLayout) -> Placed {
        guard let s = l.slot(of: t.pid) else { return Placed(mode: .absent, slot: -1) }
        var mode = Placed.Mode.slow
        if !l.lists[s] && t.kind == .int && l.kinds[s].isInteger { mode = .int }
        if !l.lists[s] && t.kind == .bytes && l.kinds[s].isVariableLength { mode = .bytes }
        return Placed(mode: mode, slot: s)
    }

    deinit {
        terms.deallocate()
        bytes.deallocate()
        placed.deallocate()
        order.deallocate()
        widths.deallocate()
        widthStarts.deallocate()
        needle?.deallocate()
    }

    /// The first term whose serial and bytes every match contains (see `needle`).
    private static func needle(_ terms: [Term], _ placed: [Placed], _ pool: [UInt8])
        -> UnsafeMutableBufferPointer<UInt8>?
    {
        for (i, t) in terms.enumerated() where t.kind == .bytes && t.op == .equal && !t.absentMatches {
            guard (1...63).contains(t.bytesCount) else { continue }
            let inRow = stride(from: i, to: placed.count, by: terms.count).allSatisfy {
                placed[$0].mode == .bytes || placed[$0].mode == .absent
            }
            guard inRow else { continue }
            let n = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 1 + t.bytesCount)
            n[0] = UInt8(2 * t.bytesCount + 1)
            _ = UnsafeMutableBufferPointer(rebasing: n[1...]).initialize(
                from: pool[t.bytesStart..<t.bytesStart + t.bytesCount])
            return n
        }
        return nil
    }

    /// Whether a row matches, its layout read from its header here: the codec's checks, but
    /// without a call and a class reference (a retain and a release) per row.
    @inline(__always)
    func test(_ row: UnsafeRawBufferPointer, _ codec: RowCodec, _ src: CompiledPredicate.Source, _ key: Int64) throws
        -> Bool
    {
        guard let (id, start) = CompactRow.header(row), id < layoutCount else {
            return try slowTest(row, codec.layout(of: row), codec, src, key)
        }
        return try test(row, layoutID: id, start: start, codec, src, key)
    }

    /// How many objects of one cluster match: a loop over its rows, no key or object made.
    func count(in v: ClusterView, number: Int64, _ codec: RowCodec, _ src: CompiledPredicate.Source) throws -> Int {
        var n = 0
        _ = try forEachMatch(in: v, number: number, codec, src) { _, _ in
            n += 1
            return true
        }
        return n
    }

    /// Each object of cluster `number` whose row matches, with its key and row, in key order,
    /// until `body` returns false (then false). The rows are walked in this loop, not through
    /// a closure per row, which retained this conjunction, the codec and the source for every
    /// row; inlined, so a caller's `body` is too.
    ///
    /// With a `needle`, from one occurrence of it to the next, each time to the row that holds
    /// it (a binary search over the row ends), and only that row tested: the rows between are
    /// not read at all, as SQLite does not decode a record its query passes over.
    @inline(__always)
    func forEachMatch(
        in v: ClusterView, number: Int64, _ codec: RowCodec, _ src: CompiledPredicate.Source,
        _ body: (Int64, UnsafeRawBufferPointer) throws -> Bool
    ) throws -> Bool {
        let base = number << v.shift
        guard let search else {
            var rows = ClusterView.RowCursor(v)
            while let (s, row) = try rows.next() {
                let k = base | Int64(s)
                if try test(row, codec, src, k), try !body(k, row) { return false }
            }
            return true
        }
        // The rows only: a summary's bytes after them could hold the needle too.
        let bytes = UnsafeRawBufferPointer(rebasing: v.bytes[..<v.rowsEnd])
        var i = 0, from = v.rowsStart
        while i < v.count, let hit = search.firstOffset(in: bytes, from: from) {
            i = v.rowIndex(holding: hit, from: i)
            guard i < v.count else { break }
            let r = try v.rowRange(at: i)
            let row = UnsafeRawBufferPointer(rebasing: bytes[r]), k = base | Int64(v.slot(atIndex: i))
            if try test(row, codec, src, k), try !body(k, row) { return false }
            i += 1
            from = max(r.upperBound, hit + 1)
        }
        return true
    }

    /// Whether a row of layout `l` matches.
    func test(
        _ row: UnsafeRawBufferPointer, _ l: RowLayout, _ codec: RowCodec, _ src: CompiledPredicate.Source, _ key: Int64
    ) throws -> Bool {
        guard Int(l.id) < layoutCount, codec.layouts[Int(l.id)] === l, let (_, start) = CompactRow.header(row) else {
            return try slowTest(row, l, codec, src, key)
        }
        return try test(row, layoutID: Int(l.id), start: start, codec, src, key)
    }

    /// The test of a compact row of layout `id` (one the query was compiled for), its first
    /// serial at `start`: one walk over the serials, each term tested when the walk reaches
    /// its slot. The walk steps over a one-byte serial with one load (`CompactRow.skip`); a term
    /// decided on its serial and a few bytes (an integer of up to 8 bytes, in-row UTF-8) is
    /// tested in place. Anything else (a null, a string kept out of the row, a long serial,
    /// damage) goes through `field` and, where that cannot answer, `slowMatch`, which reports
    /// damage.
    private func test(
        _ row: UnsafeRawBufferPointer, layoutID id: Int, start: Int, _ codec: RowCodec,
        _ src: CompiledPredicate.Source, _ key: Int64
    ) throws -> Bool {
        let n = terms.count
        // `id` is below `layoutCount` (the callers check): no overflow or bounds to check.
        let base = placed.baseAddress! + id &* n
        let order = self.order.baseAddress! + id &* n
        let widths = UnsafePointer(self.widths.baseAddress! + widthStarts[id])
        let steps = self.steps
        guard let r = row.baseAddress else { return try slowTest(row, codec.layouts[id], codec, src, key) }
        let end = row.count
        var at = start, slot = 0
        for j in 0..<n {
            let i = order[j]
            let p = base[i]
            if p.mode == .absent {
                if !terms[i].absentMatches { return false }
                continue
            }
            // Past the slots before this term's.
            var damaged = false
            while slot < p.slot {
                guard CompactRow.skip(row, &at, widths[slot], steps) else {
                    damaged = true
                    break
                }
                slot += 1
            }
            if !damaged && at < end {
                let b = Int(r.load(fromByteOffset: at, as: UInt8.self))
                let t = terms[i]
                switch p.mode {
                case .int where b >= 1 && b <= 9 && at + b <= end:
                    if !t.op.holds(CompactRow.int(row, at: at + 1, bytes: b - 1), t.value) { return false }
                    continue
                case .int where b == CompactRow.ownKey:
                    if !t.op.holds(key, t.value) { return false }
                    continue
                case .bytes where b & 1 == 1 && b < 0x80 && at + 1 + b >> 1 <= end:
                    if !t.op.holds(
                        UnsafeRawBufferPointer(start: r + at + 1, count: b >> 1),
                        UnsafeRawBufferPointer(start: bytes.baseAddress! + t.bytesStart, count: t.bytesCount))
                    {
                        return false
                    }
                    continue
                default: break
                }
            }
            var next = at
            let f = damaged ? nil : CompactRow.field(row, at: &next, widths[slot])
            switch p.mode {
            case .int:
                guard let f, f.serial != 0 else {
                    if try !slowMatch(i, row, codec.layouts[id], p.slot, codec, src, key) { return false }
                    continue
                }
                let t = terms[i]
                if !t.op.holds(CompactRow.int(row, f, key: key), t.value) { return false }
            case .bytes:
                guard let f, f.serial & 1 == 1 else {
                    if try !slowMatch(i, row, codec.layouts[id], p.slot, codec, src, key) { return false }
                    continue
                }
                let t = terms[i]
                if !t.op.holds(
                    UnsafeRawBufferPointer(start: r + f.offset, count: f.count),
                    UnsafeRawBufferPointer(start: bytes.baseAddress! + t.bytesStart, count: t.bytesCount))
                {
                    return false
                }
            case .slow, .absent:
                if try !slowMatch(i, row, codec.layouts[id], p.slot, codec, src, key) { return false }
            }
        }
        return true
    }

    /// Every term through `slowMatch`: a fixed row (a file not yet converted) or a layout the
    /// query was not compiled for.
    private func slowTest(
        _ row: UnsafeRawBufferPointer, _ l: RowLayout, _ codec: RowCodec, _ src: CompiledPredicate.Source,
        _ key: Int64
    ) throws -> Bool {
        for i in 0..<terms.count {
            guard let s = l.slot(of: terms[i].pid) else {
                if !terms[i].absentMatches { return false }
                continue
            }
            if try !slowMatch(i, row, l, s, codec, src, key) { return false }
        }
        return true
    }

    /// Term `i` through its comparison and `QueryEvaluator.compare`.
    private func slowMatch(
        _ i: Int, _ row: UnsafeRawBufferPointer, _ l: RowLayout, _ s: Int, _ codec: RowCodec,
        _ src: CompiledPredicate.Source, _ key: Int64
    ) throws -> Bool {
        let c = comparisons[i]
        let x = try codec.value(row, layout: l, slot: s, key: key, outOfRow: { try src.get(key, c.pid) })
        return QueryEvaluator.compare(x, c.op, c.value, c.options)
    }
}

extension RowConjunction {
    /// Whether `n` bytes at `a` and `b` are equal: a loop for the short strings most
    /// constants are (a call to `memcmp` per row cost more than the compare), `memcmp` past.
    @inline(__always)
    static func sameBytes(_ a: UnsafeRawPointer?, _ b: UnsafeRawPointer?, _ n: Int) -> Bool {
        guard n > 0, let a, let b else { return true }
        guard n <= 16 else { return memcmp(a, b, n) == 0 }
        for i in 0..<n where a.load(fromByteOffset: i, as: UInt8.self) != b.load(fromByteOffset: i, as: UInt8.self) {
            return false
        }
        return true
    }
}

extension CompareOperator {
    /// `a op b` for an integer comparison (equality or ordering).
    @inline(__always)
    func holds(_ a: Int64, _ b: Int64) -> Bool {
        switch self {
        case .equal: return a == b
        case .notEqual: return a != b
        case .less: return a < b
        case .lessOrEqual: return a <= b
        case .greater: return a > b
        default: return a >= b
        }
    }

    /// `a op b` on UTF-8 bytes for `==`, `!=` and BEGINSWITH (the operators whose answer on
    /// bytes is the answer on strings, without options).
    @inline(__always)
    func holds(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        let n = b.count
        let prefix = a.count >= n && RowConjunction.sameBytes(a.baseAddress, b.baseAddress, n)
        switch self {
        case .equal: return prefix && a.count == n
        case .notEqual: return !(prefix && a.count == n)
        default: return prefix
        }
    }
}
