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

    /// Where term `i` sits in a row of layout `l`: `placed[l.id * terms.count + i]`, worked
    /// out once per query for every layout of the class, so a row costs loads and compares,
    /// not a slot lookup, kind checks and bounds checks per term.
    struct Placed {
        enum Mode: UInt8 {
            /// The layout predates the property: the row answers `absentMatches`.
            case absent
            /// An 8-byte integer at `offset` (when its presence bit is set).
            case int
            /// An offset u32 and length u32 at `offset` into the row's var area.
            case bytes
            /// Through `slowMatch` (a kind the fast paths do not read).
            case slow
        }
        let mode: Mode
        let place: RowLayout.Place
        let slot: Int
        let fixedEnd: Int
    }

    private let terms: UnsafeMutableBufferPointer<Term>
    private let bytes: UnsafeMutableBufferPointer<UInt8>
    private let placed: UnsafeMutableBufferPointer<Placed>
    private let layoutCount: Int
    /// Each layout's fixed area, by layout id: a row shorter than its layout's is damage.
    private let fixedEnds: [Int]
    /// The comparisons, one per term: the slow path's operands, and what an AND merges.
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
        let comparisons = given.enumerated().sorted { (rank($0.element), $0.offset) < (rank($1.element), $1.offset) }.map(\.element)
        var terms: [Term] = [], pool: [UInt8] = []
        for c in comparisons {
            var value: Int64 = 0
            if case .int(let x) = c.value { value = x }
            terms.append(Term(kind: c.kind, pid: c.pid, op: c.op, value: value, bytesStart: pool.count, bytesCount: c.utf8?.count ?? 0,
                              absentMatches: QueryEvaluator.compare(c.absent, c.op, c.value, c.options)))
            pool.append(contentsOf: c.utf8 ?? [])
        }
        var placed: [Placed] = []
        for l in codec.layouts {
            for t in terms { placed.append(RowConjunction.place(t, in: l)) }
        }
        self.terms = .allocate(capacity: max(1, terms.count))
        _ = self.terms.initialize(from: terms)
        bytes = .allocate(capacity: max(1, pool.count))
        _ = bytes.initialize(from: pool)
        layoutCount = codec.layouts.count
        fixedEnds = codec.layouts.map(\.fixedEnd)
        self.placed = .allocate(capacity: max(1, placed.count))
        _ = self.placed.initialize(from: placed)
        self.comparisons = comparisons
    }

    private static func place(_ t: Term, in l: RowLayout) -> Placed {
        guard let s = l.slot(of: t.pid) else {
            return Placed(mode: .absent, place: RowLayout.Place(offset: 0, presenceByte: 0, presenceMask: 0), slot: -1, fixedEnd: 0)
        }
        var mode = Placed.Mode.slow
        if !l.lists[s] && t.kind == .int && l.kinds[s].isInteger { mode = .int }
        if !l.lists[s] && t.kind == .bytes && l.kinds[s].isVariableLength { mode = .bytes }
        return Placed(mode: mode, place: l.place(ofSlot: s), slot: s, fixedEnd: l.fixedEnd)
    }

    deinit {
        terms.deallocate()
        bytes.deallocate()
        placed.deallocate()
    }

    /// Whether a row matches, its layout read from its header here: the codec's checks, but
    /// without a call and a class reference (a retain and a release) per row.
    @inline(__always)
    func test(_ row: UnsafeRawBufferPointer, _ codec: RowCodec, _ src: CompiledPredicate.Source, _ key: Int64) throws -> Bool {
        guard row.count >= RowLayout.headerSize, row[0] == RowLayout.tag else { return try test(row, codec.layout(of: row), codec, src, key) }
        let id = Int(row.loadUnaligned(fromByteOffset: 1, as: UInt32.self).littleEndian)
        guard id < layoutCount, row.count >= fixedEnds[id] else { return try test(row, codec.layout(of: row), codec, src, key) }
        return try test(row, layoutID: id, nil, codec, src, key)
    }

    /// How many objects of one cluster match: a loop over its rows, no key or object made.
    func count(in v: ClusterView, number: Int64, _ codec: RowCodec, _ src: CompiledPredicate.Source) throws -> Int {
        var n = 0
        _ = try v.forEachObject(number: number) { k, row in
            if try test(row, codec, src, k) { n += 1 }
            return true
        }
        return n
    }

    /// Whether a row of layout `l` (already checked to hold `l.fixedEnd` bytes) matches.
    func test(_ row: UnsafeRawBufferPointer, _ l: RowLayout, _ codec: RowCodec, _ src: CompiledPredicate.Source, _ key: Int64) throws -> Bool {
        try test(row, layoutID: Int(l.id) < layoutCount ? Int(l.id) : -1, l, codec, src, key)
    }

    /// The test, with the terms placed for layout `id`, or placed now for `given` when `id` is
    /// -1 (a layout the query was not compiled for; never one from the same codec). `given`
    /// may be nil for a known id: only a term that needs the slow path then reads the layout.
    private func test(_ row: UnsafeRawBufferPointer, layoutID id: Int, _ given: RowLayout?, _ codec: RowCodec,
                      _ src: CompiledPredicate.Source, _ key: Int64) throws -> Bool {
        let n = terms.count
        let base = placed.baseAddress! + max(0, id) * n
        guard let r = row.baseAddress else { throw RowError("empty row") }
        for i in 0..<n {
            let p = id >= 0 ? base[i] : RowConjunction.place(terms[i], in: given!)
            switch p.mode {
            case .absent:
                if !terms[i].absentMatches { return false }
            case .int:
                guard p.place.isPresent(r) else {
                    if try !slowMatch(i, row, given ?? codec.layouts[id], p.slot, codec, src, key) { return false }
                    continue
                }
                let t = terms[i]
                if !t.op.holds(r.loadUnaligned(fromByteOffset: p.place.offset, as: Int64.self).littleEndian, t.value) { return false }
            case .bytes:
                let o = p.place.offset
                let off = Int(r.loadUnaligned(fromByteOffset: o, as: UInt32.self).littleEndian)
                let len = Int(r.loadUnaligned(fromByteOffset: o + 4, as: UInt32.self).littleEndian)
                guard p.place.isPresent(r), off != Int(RowLayout.outOfRow), off >= p.fixedEnd, off + len <= row.count else {
                    if try !slowMatch(i, row, given ?? codec.layouts[id], p.slot, codec, src, key) { return false }
                    continue
                }
                let t = terms[i]
                if !t.op.holds(UnsafeRawBufferPointer(start: r + off, count: len),
                               UnsafeRawBufferPointer(start: bytes.baseAddress! + t.bytesStart, count: t.bytesCount)) { return false }
            case .slow:
                if try !slowMatch(i, row, given ?? codec.layouts[id], p.slot, codec, src, key) { return false }
            }
        }
        return true
    }

    /// Term `i` through its comparison and `QueryEvaluator.compare`.
    private func slowMatch(_ i: Int, _ row: UnsafeRawBufferPointer, _ l: RowLayout, _ s: Int, _ codec: RowCodec,
                           _ src: CompiledPredicate.Source, _ key: Int64) throws -> Bool {
        let c = comparisons[i]
        let x = try codec.value(row, layout: l, slot: s, outOfRow: { try src.get(key, c.pid) })
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
        for i in 0..<n where a.load(fromByteOffset: i, as: UInt8.self) != b.load(fromByteOffset: i, as: UInt8.self) { return false }
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
