import Engine
import Foundation

/// Backlinks: how many times each origin links to an object, in the object's row while it has
/// room, in `fief/b` past that.
extension ObjectTables {
    /// Origins linking to `key` through `origin`'s property `p`, each once, in key order: those
    /// the target's row keeps, then any `fief/b` keeps.
    func backlinks(to target: ClassSchema, _ key: Int64, from origin: ClassSchema, _ p: Property) throws -> [Int64] {
        try backlinks(to: plan(target), key, fromCid: origin.cid, pid: p.pid)
    }

    /// As `backlinks(to:_:from:_:)`, for a caller holding the target's plan and the origin
    /// property's ids (a linking objects' count, asked at each step of a for-in).
    func backlinks(to plan: ClassPlan, _ key: Int64, fromCid cid: UInt32, pid: UInt32) throws -> [Int64] {
        var out: [Int64] = []
        try withRow(plan, key) { row in
            guard let row else { return }
            try decodeGuarded { try plan.codec.backlinkOrigins(row, cid: cid, pid: pid, into: &out) }
        }
        let t = plan.backlinksTable
        guard try hasTable(.backlinks, plan) else { return out }
        let inRow = out.count
        let prefix = KeyBytes.obj(key) + KeyBytes.u32(cid) + KeyBytes.u32(pid)
        try tx.scan(table: t, from: prefix, to: KeyBytes.successor(prefix)) { k, _ in
            out.append(KeyBytes.readObj(k, at: 16))
            return true
        }
        if inRow > 0 && out.count > inRow { out.sort() }
        return out
    }

    /// The backlinks the row of `key` keeps (none when it has no row).
    func rowBacklinks(_ target: ClassSchema, _ key: Int64) throws -> [CompactRow.Backlink] {
        try rowBacklinks(plan(target), key)
    }

    func rowBacklinks(_ plan: ClassPlan, _ key: Int64) throws -> [CompactRow.Backlink] {
        try withRow(plan, key) { row in try row.map { try rowBacklinks(plan, row: $0) } ?? [] }
    }

    /// The backlinks `row` keeps.
    func rowBacklinks(_ plan: ClassPlan, row: UnsafeRawBufferPointer) throws -> [CompactRow.Backlink] {
        try decodeGuarded { try plan.codec.backlinks(row) }
    }

    /// The backlink entries to `key` that `fief/b` keeps (those its row had no room for), appended
    /// to `out` as the row's are: (origin class id, property id, origin key, multiplicity).
    func tableBacklinks(_ plan: ClassPlan, _ key: Int64, into out: inout [CompactRow.Backlink]) throws {
        let t = plan.backlinksTable
        guard try hasTable(.backlinks, plan) else { return }
        let prefix = KeyBytes.obj(key)
        try tx.scan(table: t, from: prefix, to: KeyBytes.successor(prefix)) { k, v in
            out.append(
                CompactRow.Backlink(
                    cid: KeyBytes.readU32(k, at: 8), pid: KeyBytes.readU32(k, at: 12),
                    origin: KeyBytes.readObj(k, at: 16), count: try Int64(valueBytes: v)))
            return true
        }
    }

    /// Takes back the entries new rows hold for origin `key` of class `c`, which failed before
    /// its row was written.
    func revokePreLinks(_ c: ClassSchema, _ key: Int64) throws {
        try revoke(preLinks.take(cid: c.cid, key: key))
    }

    /// Takes `held` back from the rows that hold them, whatever the origin's property is now.
    func revoke(_ held: [PreLinks.Held]) throws {
        for h in held {
            guard let tc = schema.byCid(h.targetCid) else { continue }
            _ = try adjustBacklinkInRow(
                plan(tc), h.target, CompactRow.Backlink(cid: h.cid, pid: h.pid, origin: h.origin, count: -1))
        }
    }

    /// Changes by `delta` how many times `from` links to `target` through `p` (the entry goes at
    /// 0). The entry lives in the target's row when it has room (`CompactRow`), else in
    /// `fief/b`, where an old file's entries stay too. `fresh`: the origin is new, so no entry
    /// exists yet and `fief/b` is not read.
    func adjustBacklink(
        _ origin: ClassSchema, _ p: Property, from: Int64, to target: Int64, by delta: Int64,
        fresh: Bool = false
    ) throws {
        guard let tname = p.target, let tc = schema.classes[tname] else { return }
        if BrokenObjectLayer.on(.skipBacklink) && p.list && delta > 0 { return }
        let tplan = plan(tc)
        let t = tplan.backlinksTable
        let k = KeyBytes.backlink(target: target, originClass: origin.cid, pid: p.pid, origin: from)
        if !fresh, try hasTable(.backlinks, tplan), let w = writer, let cur = try w.get(table: t, key: k) {
            let (next, overflow) = try cur.withUnsafeBytes { try Int64(valueBytes: $0) }.addingReportingOverflow(delta)
            if next <= 0 || overflow {
                try w.delete(table: t, key: k)
            } else {
                try w.put(table: t, key: k, value: next.valueBytes)
            }
            return
        }
        let entry = CompactRow.Backlink(cid: origin.cid, pid: p.pid, origin: from, count: delta)
        if try adjustBacklinkInRow(tplan, target, entry) { return }
        guard delta > 0 else { return }
        try ensureTable(t, value: .int64).put(table: t, key: k, value: delta.valueBytes)
    }

    /// Adds `change.count` to the entry for `change`'s origin in the row of `target`; false,
    /// changing nothing, when there is no compact row or the entry does not fit in it.
    private func adjustBacklinkInRow(_ plan: ClassPlan, _ target: Int64, _ change: CompactRow.Backlink) throws -> Bool {
        guard !plan.legacyRows, try withRow(plan, target, { $0.map { CompactRow.header($0) != nil } }) == true else {
            return false
        }
        return try withHotCluster(plan, target) { rows, slot in
            let new = try rows.withRow(slot: slot) { row -> [UInt8]?? in
                guard let row else { return nil }
                var entries = try decodeGuarded { try plan.codec.backlinks(row) }
                if let i = entries.firstIndex(where: { $0.sameSource(change) }) {
                    entries[i].count += change.count
                    if entries[i].count <= 0 {
                        entries.remove(at: i)
                    } else if CompactRow.encode(entries) == nil {
                        // Grown past the row's room: the entry moves whole to fief/b, so it is
                        // never kept in both places.
                        let moved = entries.remove(at: i)
                        let t = plan.backlinksTable
                        let k = KeyBytes.backlink(
                            target: target, originClass: moved.cid, pid: moved.pid, origin: moved.origin)
                        try ensureTable(t, value: .int64).put(table: t, key: k, value: moved.count.valueBytes)
                    }
                } else {
                    guard change.count > 0 else { return .some(nil) }
                    entries.insert(change, at: entries.firstIndex { change.precedes($0) } ?? entries.count)
                }
                guard let bytes = CompactRow.encode(entries) else { return nil }
                return try decodeGuarded { try plan.codec.replacingBacklinks(row, with: bytes) }
            }
            guard let new else { return false }
            if let new { rows.put(slot: slot, new) }
            return true
        }
    }
}
