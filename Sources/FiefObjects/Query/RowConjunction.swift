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

    private let terms: UnsafeMutableBufferPointer<Term>
    private let bytes: UnsafeMutableBufferPointer<UInt8>
    /// The comparisons, one per term: the slow path's operands, and what an AND merges.
    let comparisons: [CompiledPredicate.Comparison]

    init(_ given: [CompiledPredicate.Comparison]) {
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
        self.terms = .allocate(capacity: max(1, terms.count))
        _ = self.terms.initialize(from: terms)
        bytes = .allocate(capacity: max(1, pool.count))
        _ = bytes.initialize(from: pool)
        self.comparisons = comparisons
    }

    deinit {
        terms.deallocate()
        bytes.deallocate()
    }

    func test(_ row: UnsafeRawBufferPointer, _ l: RowLayout, _ codec: RowCodec, _ src: CompiledPredicate.Source, _ key: Int64) throws -> Bool {
        for i in 0..<comparisons.count {
            let t = terms[i]
            guard let s = l.slot(of: t.pid) else {
                if !t.absentMatches { return false }
                continue
            }
            switch t.kind {
            case .int:
                guard l.isPresent(row, s), !l.lists[s] else {
                    if try !slowMatch(i, row, l, s, codec, src, key) { return false }
                    continue
                }
                if !t.op.holds(row.loadUnaligned(fromByteOffset: l.offsets[s], as: Int64.self).littleEndian, t.value) { return false }
            case .bytes:
                guard let inRow = RowCodec.inRowBytes(row, layout: l, slot: s) else {
                    if try !slowMatch(i, row, l, s, codec, src, key) { return false }
                    continue
                }
                let constant = UnsafeRawBufferPointer(start: bytes.baseAddress! + t.bytesStart, count: t.bytesCount)
                if !t.op.holds(inRow, constant) { return false }
            case .general:
                if try !slowMatch(i, row, l, s, codec, src, key) { return false }
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
        let prefix = a.count >= n && (n == 0 || memcmp(a.baseAddress!, b.baseAddress!, n) == 0)
        switch self {
        case .equal: return prefix && a.count == n
        case .notEqual: return !(prefix && a.count == n)
        default: return prefix
        }
    }
}
