import Engine

/// A predicate over one class's own scalar properties, resolved once per query so a scan
/// tests each row in place: no name lookups, no arrays, and string equality and prefixes
/// compared on the row's bytes. Anything else (links, lists, aggregates, subqueries) is left
/// to `QueryEvaluator.matches`.
/// Comparisons are `RowConjunction`s, which test a row on its bytes; the tree only combines
/// them. A class: a scan tests every row, and copying a struct of enums cost retains per row.
final class CompiledPredicate {
    indirect enum Node {
        case constant(Bool)
        case and([Node])
        case or([Node])
        case not(Node)
        /// Comparisons of the object's own scalars, all of which must hold.
        case terms(RowConjunction)
    }

    /// Property id, its value when a row predates it, the operator, the constant, the
    /// constant's UTF-8 bytes when strings compare on the row's bytes, and how a row answers.
    final class Comparison {
        let pid: UInt32
        let absent: ObjectValue
        let op: CompareOperator
        let value: ObjectValue
        let options: StringOptions
        let utf8: [UInt8]?
        let kind: RowConjunction.Term.Kind

        init(
            pid: UInt32, absent: ObjectValue, op: CompareOperator, value: ObjectValue, options: StringOptions,
            utf8: [UInt8]?,
            kind: RowConjunction.Term.Kind
        ) {
            self.pid = pid; self.absent = absent; self.op = op; self.value = value; self.options = options;
            self.utf8 = utf8
            self.kind = kind
        }
    }

    let root: Node
    let codec: RowCodec
    /// The whole predicate as flat terms, when it is an AND of comparisons (most are).
    let flat: RowConjunction?

    init?(_ p: Predicate, _ plan: ObjectTables.ClassPlan) {
        guard let d = CompiledPredicate.draft(p, plan) else { return nil }
        let n = CompiledPredicate.node(d, plan.codec)
        root = n
        codec = plan.codec
        if case .terms(let c) = n { flat = c } else { flat = nil }
    }

    /// A `Node` before its comparisons are laid out: an AND gathers its parts' comparisons
    /// here, so each conjunction is built once (building one per comparison and again per AND
    /// was a twentieth of an indexed query).
    private indirect enum Draft {
        case constant(Bool)
        case and([Draft])
        case or([Draft])
        case not(Draft)
        case comparisons([Comparison])
    }

    private static func node(_ d: Draft, _ codec: RowCodec) -> Node {
        switch d {
        case .constant(let b): return .constant(b)
        case .and(let ds): return .and(ds.map { node($0, codec) })
        case .or(let ds): return .or(ds.map { node($0, codec) })
        case .not(let d): return .not(node(d, codec))
        case .comparisons(let cs): return .terms(RowConjunction(cs, codec))
        }
    }

    private static func draft(_ p: Predicate, _ plan: ObjectTables.ClassPlan) -> Draft? {
        switch p {
        case .constant(let b): return .constant(b)
        case .and(let ps):
            let ds = ps.compactMap { draft($0, plan) }
            return ds.count == ps.count ? conjunction(ds) : nil
        case .or(let ps):
            let ds = ps.compactMap { draft($0, plan) }
            return ds.count == ps.count ? .or(ds) : nil
        case .not(let q): return draft(q, plan).map { .not($0) }
        case .compare(.keyPath(let k), let op, .value(let v), let opts, .implicit)
        where k.variable == nil && k.components.count == 1:
            guard let prop = plan.byName[k.components[0]], !prop.list, prop.kind != .linkingObjects else { return nil }
            var utf8: [UInt8]?
            if case .string(let s) = v, opts.isEmpty, op == .equal || op == .notEqual || op == .beginsWith {
                utf8 = Array(s.utf8)
            }
            let kind: RowConjunction.Term.Kind
            if prop.kind.isInteger, case .int = v,
                [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual].contains(op)
            {
                kind = .int
            } else {
                kind = utf8 == nil ? .general : .bytes
            }
            let c = Comparison(
                pid: prop.pid, absent: ObjectTables.defaultValue(prop), op: op, value: v, options: opts, utf8: utf8,
                kind: kind)
            return .comparisons([c])
        case .between(.keyPath(let k), .value(let lo), .value(let hi), .implicit):
            guard let a = draft(.compare(.keyPath(k), .greaterOrEqual, .value(lo), [], .implicit), plan),
                let b = draft(.compare(.keyPath(k), .lessOrEqual, .value(hi), [], .implicit), plan)
            else { return nil }
            return conjunction([a, b])
        case .in(.keyPath(let k), .values(let vs), .implicit):
            let ds = vs.compactMap { draft(.compare(.keyPath(k), .equal, .value($0), [], .implicit), plan) }
            return ds.count == vs.count ? .or(ds) : nil
        default:
            return nil
        }
    }

    /// An AND: one set of flat terms when every part is comparisons (or `TRUEPREDICATE`).
    private static func conjunction(_ ds: [Draft]) -> Draft {
        var comparisons: [Comparison] = []
        for d in ds {
            switch d {
            case .constant(true): continue
            case .comparisons(let cs): comparisons += cs
            default: return .and(ds)
            }
        }
        return .comparisons(comparisons)
    }

    /// Whether the row of object `key` matches; values kept out of the row come from `source`
    /// (made once per query, so a row costs no retains of its own).
    func matches(_ row: UnsafeRawBufferPointer, key: Int64, source: Source) throws -> Bool {
        try test(root, row, try codec.layout(of: row), source, key)
    }

    /// Where a class's out-of-row values are: `table` in `tx`.
    struct Source {
        let tx: Transaction
        let table: String
        func get(_ key: Int64, _ pid: UInt32) throws -> [UInt8]? {
            try tx.get(table: table, key: KeyBytes.property(key, pid))
        }
    }

    private func test(_ n: Node, _ row: UnsafeRawBufferPointer, _ l: RowLayout, _ src: Source, _ key: Int64) throws
        -> Bool
    {
        switch n {
        case .constant(let b): return b
        case .and(let ns):
            for x in ns where try !test(x, row, l, src, key) { return false }
            return true
        case .or(let ns):
            for x in ns where try test(x, row, l, src, key) { return true }
            return false
        case .not(let x): return try !test(x, row, l, src, key)
        case .terms(let c): return try c.test(row, l, codec, src, key)
        }
    }
}
