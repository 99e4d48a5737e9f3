import Engine

/// A predicate over one class's own scalar properties, resolved once per query so a scan
/// tests each row in place: no name lookups, no arrays, and string equality and prefixes
/// compared on the row's bytes. Anything else (links, lists, aggregates, subqueries) is left
/// to `QueryEvaluator.matches`.
///
/// A class, with integer comparisons as plain values and the others boxed: a scan tests every
/// row, and copying a struct of enums with strings and arrays in them cost retains per row.
final class CompiledPredicate {
    indirect enum Node {
        case constant(Bool)
        case and([Node])
        case or([Node])
        case not(Node)
        case compare(Comparison)
        case compareInt(IntComparison)
    }

    /// Property id, its value when a row predates it, the operator, the constant, and the
    /// constant's UTF-8 bytes when strings compare on the row's bytes.
    final class Comparison {
        let pid: UInt32
        let absent: ObjectValue
        let op: CompareOperator
        let value: ObjectValue
        let options: StringOptions
        let utf8: [UInt8]?

        init(pid: UInt32, absent: ObjectValue, op: CompareOperator, value: ObjectValue, options: StringOptions, utf8: [UInt8]?) {
            self.pid = pid; self.absent = absent; self.op = op; self.value = value; self.options = options; self.utf8 = utf8
        }
    }

    /// An integer property against an integer constant: the row's 8 bytes compared as they
    /// are. A row that predates the property gives `absentMatches`; a null goes through
    /// `QueryEvaluator.compare`.
    struct IntComparison {
        let pid: UInt32
        let op: CompareOperator
        let value: Int64
        let absentMatches: Bool
    }

    let root: Node
    let codec: RowCodec
    /// The same predicate as flat terms, when it is an AND of comparisons (most are).
    let flat: RowConjunction?

    init?(_ p: Predicate, _ plan: ObjectTables.ClassPlan) {
        guard let n = CompiledPredicate.node(p, plan) else { return nil }
        root = n
        codec = plan.codec
        flat = RowConjunction(n)
    }

    private static func node(_ p: Predicate, _ plan: ObjectTables.ClassPlan) -> Node? {
        switch p {
        case .constant(let b): return .constant(b)
        case .and(let ps):
            let ns = ps.compactMap { node($0, plan) }
            return ns.count == ps.count ? .and(ns) : nil
        case .or(let ps):
            let ns = ps.compactMap { node($0, plan) }
            return ns.count == ps.count ? .or(ns) : nil
        case .not(let q): return node(q, plan).map { .not($0) }
        case .compare(.keyPath(let k), let op, .value(let v), let opts, .implicit) where k.variable == nil && k.components.count == 1:
            guard let prop = plan.byName[k.components[0]], !prop.list, prop.kind != .linkingObjects else { return nil }
            if prop.kind.isInteger, case .int(let x) = v, [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual].contains(op) {
                let absent = QueryEvaluator.compare(ObjectTables.defaultValue(prop), op, v, [])
                return .compareInt(IntComparison(pid: prop.pid, op: op, value: x, absentMatches: absent))
            }
            var utf8: [UInt8]?
            if case .string(let s) = v, opts.isEmpty, op == .equal || op == .notEqual || op == .beginsWith { utf8 = Array(s.utf8) }
            return .compare(Comparison(pid: prop.pid, absent: ObjectTables.defaultValue(prop), op: op, value: v, options: opts, utf8: utf8))
        case .between(.keyPath(let k), .value(let lo), .value(let hi), .implicit):
            guard let a = node(.compare(.keyPath(k), .greaterOrEqual, .value(lo), [], .implicit), plan),
                  let b = node(.compare(.keyPath(k), .lessOrEqual, .value(hi), [], .implicit), plan) else { return nil }
            return .and([a, b])
        case .in(.keyPath(let k), .values(let vs), .implicit):
            let ns = vs.compactMap { node(.compare(.keyPath(k), .equal, .value($0), [], .implicit), plan) }
            return ns.count == vs.count ? .or(ns) : nil
        default:
            return nil
        }
    }

    /// Whether the row of object `key` matches; values kept out of the row come from `source`
    /// (made once per query, so a row costs no retains of its own).
    func matches(_ row: UnsafeRawBufferPointer, key: Int64, source: Source) throws -> Bool {
        let layout = try codec.layout(of: row)
        if let flat { return try flat.test(row, layout, codec, source, key) }
        return try test(root, row, layout, source, key)
    }

    /// Where a class's out-of-row values are: `table` in `tx`.
    struct Source {
        let tx: Transaction
        let table: String
        func get(_ key: Int64, _ pid: UInt32) throws -> [UInt8]? { try tx.get(table: table, key: KeyBytes.property(key, pid)) }
    }

    private func test(_ n: Node, _ row: UnsafeRawBufferPointer, _ l: RowLayout, _ src: Source, _ key: Int64) throws -> Bool {
        switch n {
        case .constant(let b): return b
        case .and(let ns):
            for x in ns where try !test(x, row, l, src, key) { return false }
            return true
        case .or(let ns):
            for x in ns where try test(x, row, l, src, key) { return true }
            return false
        case .not(let x): return try !test(x, row, l, src, key)
        case .compare(let t):
            guard let s = l.slot(of: t.pid) else { return QueryEvaluator.compare(t.absent, t.op, t.value, t.options) }
            if let utf8 = t.utf8, let inRow = RowCodec.inRowBytes(row, layout: l, slot: s) {
                return utf8.withUnsafeBytes { t.op.holds(inRow, $0) }
            }
            let x = try codec.value(row, layout: l, slot: s, outOfRow: { try src.get(key, t.pid) })
            return QueryEvaluator.compare(x, t.op, t.value, t.options)
        case .compareInt(let t):
            guard let s = l.slot(of: t.pid) else { return t.absentMatches }
            guard l.isPresent(row, s), !l.lists[s] else {
                return QueryEvaluator.compare(try codec.value(row, layout: l, slot: s, outOfRow: { nil }), t.op, .int(t.value), [])
            }
            return t.op.holds(row.loadUnaligned(fromByteOffset: l.offsets[s], as: Int64.self).littleEndian, t.value)
        }
    }
}
