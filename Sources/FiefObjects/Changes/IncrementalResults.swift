import Engine

/// The objects of one class that a version diff touched (see `ObjectContext.changedObjects`).
struct ChangedObjects {
    var deleted: Set<Int64> = []
    var inserted: Set<Int64> = []
    /// Changed in place: the row, a value kept out of it, or one of its lists.
    var modified: Set<Int64> = []
    /// Whether the diff touched another class's objects, links or indexes, or the schema:
    /// then an object of this class may match or sort differently without being in the sets
    /// above (through a link), and only a full run of the query can tell.
    var otherClassesChanged = false

    var count: Int { deleted.count + inserted.count + modified.count }
}

extension QueryEvaluator {
    /// The new keys of a class query, from its previous keys and what changed, without
    /// running it over the whole class: unchanged objects keep their relative order (their
    /// sort values did not change), and each inserted or modified object is tested against
    /// the predicate and placed by binary search. nil when only a full run is right: results
    /// of a list or backlinks, a limit, another class changed, or more than a quarter of the
    /// results changed (a full run is then about as cheap).
    ///
    /// Exactly what `keys` gives: results of `.all` are in sort order with ties in object-key
    /// order (both the scan and the index plans hand candidates over in key order).
    func updatedKeys(
        _ old: [Int64], _ className: String, source: ResultsSource, predicate: Predicate?,
        sorts: [SortDescriptor], limit: Int?, changed: ChangedObjects
    ) throws -> [Int64]? {
        // A path through a link reaches other objects, possibly of this same class, whose
        // changes move results that are not in `changed` themselves.
        guard case .all = source, limit == nil, !changed.otherClassesChanged,
            LinkedChanges.paths(predicate, sorts).isEmpty,
            changed.count * 4 <= max(old.count, 16)
        else { return nil }
        let c = try t.cls(className)
        let touched = FewKeys(changed.deleted.union(changed.inserted).union(changed.modified))
        // Room for all at once: `filter` grew its array from empty, a sixth of a refresh. The
        // keys between two touched ones are copied as one run.
        var keys: [Int64] = []
        keys.reserveCapacity(old.count + changed.inserted.count)
        old.withUnsafeBufferPointer { b in
            var from = 0
            for p in touched.positions(in: b) {
                keys.append(contentsOf: UnsafeBufferPointer(rebasing: b[from..<p]))
                from = p + 1
            }
            keys.append(contentsOf: UnsafeBufferPointer(rebasing: b[from...]))
        }
        var candidates: [Int64] = []
        for k in changed.inserted.union(changed.modified).sorted() {
            guard try t.exists(c, k) else { continue }
            if let p = predicate, try !matches(p, Env(root: (c, k))) { continue }
            candidates.append(k)
        }
        let paths = sorts.map { $0.keyPath.split(separator: ".").map(String.init)[...] }
        func sortValues(_ k: Int64) throws -> [ObjectValue] { try paths.map { try walk(c, k, $0).first ?? .null } }
        func before(_ a: Int64, _ av: [ObjectValue], _ b: Int64, _ bv: [ObjectValue]) -> Bool {
            for (j, s) in sorts.enumerated() {
                let o = ObjectValue.order(av[j], bv[j])
                if o != 0 { return s.ascending ? o < 0 : o > 0 }
            }
            return a < b
        }
        for k in candidates {
            let v = try sortValues(k)
            var lo = 0, hi = keys.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if before(keys[mid], try sortValues(keys[mid]), k, v) { lo = mid + 1 } else { hi = mid }
            }
            keys.insert(k, at: lo)
        }
        return keys
    }
}
