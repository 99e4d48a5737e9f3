/// Realm's rule for results whose query follows links: an object counts as modified when an
/// object it reaches along a key path of the predicate or the sort changed, not only when its
/// own row did (`car.model == "X"` sorted by `owner.name`: a renamed owner modifies the car).
enum LinkedChanges {
    /// Every key path the query reads from its root object, as property names.
    static func paths(_ predicate: Predicate?, _ sorts: [SortDescriptor]) -> [[String]] {
        var out = sorts.map { $0.keyPath.split(separator: ".").map(String.init) }
        func expression(_ e: QueryExpression, _ scope: [String: [String]]) {
            // `scope`: the root path of each SUBQUERY variable in reach.
            func root(_ k: KeyPathExpression) -> [String]? {
                guard let v = k.variable else { return k.components }
                return scope[v].map { $0 + k.components }
            }
            switch e {
            case .keyPath(let k): if let p = root(k) { out.append(p) }
            case .aggregate(let k, _, let rest): if let p = root(k) { out.append(p + rest) }
            case .subqueryCount(let k, let v, let q):
                if let p = root(k) {
                    out.append(p)
                    var inner = scope
                    inner[v] = p
                    predicateWalk(q, inner)
                }
            case .value, .values: break
            }
        }
        func predicateWalk(_ p: Predicate, _ scope: [String: [String]]) {
            switch p {
            case .constant: break
            case .and(let ps), .or(let ps): for q in ps { predicateWalk(q, scope) }
            case .not(let q): predicateWalk(q, scope)
            case .compare(let l, _, let r, _, _): expression(l, scope); expression(r, scope)
            case .between(let x, let lo, let hi, _): expression(x, scope); expression(lo, scope); expression(hi, scope)
            case .in(let l, let r, _): expression(l, scope); expression(r, scope)
            }
        }
        if let predicate { predicateWalk(predicate, [:]) }
        // Only paths that leave the root object can reach another object.
        return out.filter { $0.count > 1 }
    }
}

extension QueryEvaluator {
    /// The objects among `keys` (of class `c`) that reach, along one of `paths`, an object in
    /// `changed` (modified objects by class name), read at this evaluator's version.
    func reachingChanged(_ keys: [Int64], _ c: ClassSchema, paths: [[String]], changed: [String: Set<Int64>]) throws
        -> Set<Int64>
    {
        var out = Set<Int64>()
        for k in keys {
            search: for path in paths {
                var frontier: [(ClassSchema, Int64)] = [(c, k)]
                for name in path {
                    var next: [(ClassSchema, Int64)] = []
                    for (cls, key) in frontier {
                        guard let p = cls.property(name) else { continue }
                        if p.isLink {
                            let target = try t.cls(p.target ?? "")
                            let values = p.list ? try t.list(cls, key, p) : [try t.value(cls, key, p)]
                            for case .link(let to) in values { next.append((target, to)) }
                        } else if p.kind == .linkingObjects {
                            let origin = try t.cls(p.target ?? "")
                            guard let op = origin.property(p.originProperty ?? "") else { continue }
                            for from in try t.backlinks(to: cls, key, from: origin, op) { next.append((origin, from)) }
                        }
                    }
                    if next.contains(where: { changed[$0.0.name]?.contains($0.1) == true }) {
                        out.insert(k)
                        break search
                    }
                    if next.isEmpty { break }
                    frontier = next
                }
            }
        }
        return out
    }
}
