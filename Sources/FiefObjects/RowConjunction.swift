import Foundation

/// The common compiled predicate, an AND of comparisons of the object's own scalars with
/// constants (`age > 40 AND city == "c17"`), laid out flat in memory it owns: a scan tests
/// each row with loads and compares and no reference counting. Anything the flat terms
/// cannot answer on the row's bytes (a null, an out-of-row string, options) goes through the
/// term's `CompiledPredicate.Comparison`, as the tree would.
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
        /// Index into `general`, for the cases answered through `QueryEvaluator.compare`.
        let general: Int
    }

    private let terms: UnsafeMutableBufferPointer<Term>
    private let bytes: UnsafeMutableBufferPointer<UInt8>
    private let general: [CompiledPredicate.Comparison]

    /// nil unless `root` is one comparison or an AND of comparisons.
    init?(_ root: CompiledPredicate.Node) {
        var leaves: [CompiledPredicate.Node]
        switch root {
        case .and(let ns): leaves = ns
        case .compare, .compareInt: leaves = [root]
        default: return nil
        }
        var terms: [Term] = [], pool: [UInt8] = [], general: [CompiledPredicate.Comparison] = []
        for n in leaves {
            switch n {
            case .constant(true): continue
            case .compareInt(let t):
                let c = CompiledPredicate.Comparison(pid: t.pid, absent: .null, op: t.op, value: .int(t.value), options: [], utf8: nil)
                terms.append(Term(kind: .int, pid: t.pid, op: t.op, value: t.value, bytesStart: 0, bytesCount: 0,
                                  absentMatches: t.absentMatches, general: general.count))
                general.append(c)
            case .compare(let c):
                let onBytes = c.utf8 != nil && [.equal, .notEqual, .beginsWith].contains(c.op)
                let kind: Term.Kind = onBytes ? .bytes : .general
                let absent = QueryEvaluator.compare(c.absent, c.op, c.value, c.options)
                terms.append(Term(kind: kind, pid: c.pid, op: c.op, value: 0, bytesStart: pool.count, bytesCount: c.utf8?.count ?? 0,
                                  absentMatches: absent, general: general.count))
                pool.append(contentsOf: c.utf8 ?? [])
                general.append(c)
            default:
                return nil
            }
        }
        self.terms = .allocate(capacity: terms.count)
        _ = self.terms.initialize(from: terms)
        bytes = .allocate(capacity: max(1, pool.count))
        _ = bytes.initialize(from: pool)
        self.general = general
    }

    deinit {
        terms.deallocate()
        bytes.deallocate()
    }

    func test(_ row: UnsafeRawBufferPointer, _ l: RowLayout, _ codec: RowCodec, _ src: CompiledPredicate.Source, _ key: Int64) throws -> Bool {
        for i in 0..<terms.count {
            let t = terms[i]
            guard let s = l.slot(of: t.pid) else {
                if !t.absentMatches { return false }
                continue
            }
            switch t.kind {
            case .int:
                guard l.isPresent(row, s), !l.lists[s] else {
                    if try !slowMatch(t, row, l, s, codec, src, key) { return false }
                    continue
                }
                if !t.op.holds(row.loadUnaligned(fromByteOffset: l.offsets[s], as: Int64.self).littleEndian, t.value) { return false }
            case .bytes:
                guard let inRow = RowCodec.inRowBytes(row, layout: l, slot: s) else {
                    if try !slowMatch(t, row, l, s, codec, src, key) { return false }
                    continue
                }
                let constant = UnsafeRawBufferPointer(start: bytes.baseAddress! + t.bytesStart, count: t.bytesCount)
                if !t.op.holds(inRow, constant) { return false }
            case .general:
                if try !slowMatch(t, row, l, s, codec, src, key) { return false }
            }
        }
        return true
    }

    private func slowMatch(_ t: Term, _ row: UnsafeRawBufferPointer, _ l: RowLayout, _ s: Int, _ codec: RowCodec,
                           _ src: CompiledPredicate.Source, _ key: Int64) throws -> Bool {
        let c = general[t.general]
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
