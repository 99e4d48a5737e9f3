import Engine
import Foundation

/// The clusters a write changes: decoded once and written back at flush, or patched in place.
extension ObjectTables {
    /// Puts an encoded row into its cluster (the row of a converted format-1 file, too).
    func putRowBytes(_ plan: ClassPlan, _ key: Int64, _ row: [UInt8]) throws {
        // Lent by address: captured by the closure, the row was retained and released.
        try row.withUnsafeBytes { try putRowBytes(plan, key, $0) }
    }

    /// As above, the row lent by address (a new row, from the write's row buffer).
    func putRowBytes(_ plan: ClassPlan, _ key: Int64, _ row: UnsafeRawBufferPointer) throws {
        _ = try withHotCluster(plan, key) { $0.put(slot: $1, row) }
    }

    /// Removes an object's row from its cluster.
    func removeRow(_ plan: ClassPlan, _ key: Int64) throws {
        _ = try withHotCluster(plan, key) { $0.remove(slot: $1) }
    }

    /// The class's cluster size: chosen from its layout by the write that makes its first
    /// cluster, and kept in `fief/meta` for the file's life.
    private func writableShift(_ plan: ClassPlan) throws -> Int {
        if let s = plan.clusters.shift { return s }
        if try hasObjectsTable(plan) { return try clusterShift(plan) }
        let s = ClusterShift.choose(plan.codec.current)
        try ensureTable(Tables.meta).put(
            table: Tables.meta, key: ObjectTables.shiftKey(plan.cid), value: Int64(s).valueBytes)
        plan.clusters.shift = s
        return s
    }

    /// Runs `body` on the cluster that holds (or will hold) `key`, decoded for this write to
    /// change, with the key's slot in it.
    func withHotCluster<T>(_ plan: ClassPlan, _ key: Int64, _ body: (ClusterRows, Int) throws -> T) throws -> T {
        guard !plan.legacyRows else {
            throw ObjectError.notInWriteTransaction("changing a format-1 file before it is converted")
        }
        let shift = try writableShift(plan)
        let number = key >> shift, slot = Int(key & ((1 << shift) - 1))
        hotChanges &+= 1
        let state = plan.clusters
        let rows: ClusterRows
        if let last = state.last, last.number == number {
            rows = last.rows
        } else if let hot = state.hotRows(number) {
            rows = hot
            state.last = (number, hot)
        } else {
            if !plan.objectsTableExists {
                _ = try ensureTable(plan.objectsTable, key: .int64)
                plan.objectsTableExists = true
            }
            if let found = plan.writeLookup, found.number == number, found.writes == tx.writes {
                if let v = found.view {
                    rows = try decodeGuarded { try ClusterRows(v) }
                } else {
                    rows = ClusterRows.empty(shift: shift)
                }
            } else {
                rows = try number.withKeyBytes { k in
                    try tx.withValue(table: plan.objectsTable, keyBytes: k) { v in
                        guard let v else { return ClusterRows.empty(shift: shift) }
                        return try decodeGuarded { try ClusterRows(ClusterView(v, shift: shift)) }
                    }
                }
            }
            plan.writeLookup = nil
            state.hot[number] = rows
            state.last = (number, rows)
        }
        let before = rows.count
        let out = try body(rows, slot)
        // A cluster an insert filled is written at once (a load in key order does not come
        // back to it), and many changed ones too, so a bulk load keeps few rows in memory.
        if rows.isFull && rows.count > before {
            try writeCluster(plan, number)
        } else if state.hot.count > ObjectTables.maxHotClusters {
            try writeClusters(plan)
        }
        return out
    }

    static let maxHotClusters = 64

    private func writeCluster(_ plan: ClassPlan, _ number: Int64) throws {
        guard let rows = plan.clusters.hot.removeValue(forKey: number), let w = writer else { return }
        hotChanges &+= 1
        if let bytes = rows.encoded(summary: ClusterSummary.of(rows, number: number, plan)) {
            try number.withKeyBytes { try w.put(table: plan.objectsTable, keyBytes: $0, value: bytes) }
        } else {
            try w.delete(table: plan.objectsTable, key: KeyBytes.obj(number))
        }
    }

    /// Writes the class's changed clusters back to its tree, one put each.
    func writeClusters(_ plan: ClassPlan) throws {
        guard !plan.clusters.hot.isEmpty else { return }
        for n in plan.clusters.hot.keys.sorted() { try writeCluster(plan, n) }
    }

    /// Patches a fixed-width value in the row of `key` where it lies: in a cluster this write
    /// holds decoded, or in the leaf this write copied (`mutateValue`: one descent, no decode
    /// of the cluster, no put). Returns nil when no object has `key`; `.some(nil)` when the
    /// row must be encoded again (its layout is not the current one).
    /// The write's engine transaction is reached through `tx` (the caller has seen it writes):
    /// bound from `writer`, it was an atomic pair per set.
    func patchRow(_ plan: ClassPlan, _ key: Int64, _ p: Property, _ v: ObjectValue) throws -> ObjectValue?? {
        guard try hasObjectsTable(plan), !plan.legacyRows else { return nil }
        let shift = try clusterShift(plan)
        let number = key >> shift, slot = Int(key & ((1 << shift) - 1))
        var old: ObjectValue?
        var found = false
        if let hot = plan.clusters.hotRows(number) {
            hotChanges &+= 1
            found = try hot.mutateRow(slot: slot) { row in
                old = try decodeGuarded { try plan.codec.patch(row, pid: p.pid, v, key: key) }
            }
        } else {
            // The cluster a lookup just found in a node this write copied is patched there,
            // with no second descent (an update finds its object, then sets a property).
            if let lookup = plan.writeLookup, lookup.number == number, let blob = lookup.owned,
                tx.claimOwned(at: lookup.writes)
            {
                plan.writeLookup = nil
                // The lookup's view is of these very bytes: not decoded again.
                let view = lookup.view.flatMap {
                    $0.bytes.baseAddress == UnsafeRawPointer(blob.baseAddress) && $0.bytes.count == blob.count
                        ? $0 : nil
                }
                (found, old) = try patchCluster(blob, view, plan, shift: shift, slot: slot, p, v, key: key)
            } else {
                _ = try number.withKeyBytes { k in
                    try tx.mutateValue(table: plan.objectsTable, keyBytes: k) { blob in
                        (found, old) = try patchCluster(blob, nil, plan, shift: shift, slot: slot, p, v, key: key)
                    }
                }
            }
        }
        return found ? .some(old) : nil
    }

    /// Patches property `p` of the object in `slot` of a cluster's bytes, changed in place:
    /// whether the slot holds an object, and the value it had (nil when the row must be
    /// encoded again). `decoded`: a view of `blob` already made (by the lookup that found it).
    private func patchCluster(
        _ blob: UnsafeMutableRawBufferPointer, _ decoded: ClusterView?, _ plan: ClassPlan, shift: Int, slot: Int,
        _ p: Property, _ v: ObjectValue, key: Int64
    ) throws -> (found: Bool, old: ObjectValue?) {
        try decodeGuarded {
            let view = try decoded ?? ClusterView(UnsafeRawBufferPointer(blob), shift: shift)
            guard let i = view.index(ofSlot: slot) else { return (false, nil) }
            let old = try plan.codecRef._withUnsafeGuaranteedRef {
                try $0.patch(
                    UnsafeMutableRawBufferPointer(rebasing: blob[try view.rowRange(at: i)]), pid: p.pid, v, key: key)
            }
            if let b = view.bounds(of: p.pid), !BrokenObjectLayer.on(.staleClusterSummary) {
                // Bounds that no longer hold are dropped, not widened: the new numbers may
                // not fit where the old ones were.
                if case .int(let x) = v, b.holds(x) { return (true, old) }
                blob[1] &= ~ClusterSummary.flag
            }
            return (true, old)
        }
    }
}
