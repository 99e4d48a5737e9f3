import Engine
import Foundation

/// Lists: kept in their owner's row while small, in chunks in `fief/l` past that.
extension ObjectTables {
    /// Whether `row` keeps list `p` in itself (for `ObjectCheck`, which holds the row).
    func keepsListInRow(_ plan: ClassPlan, _ p: Property, row: UnsafeRawBufferPointer) throws -> Bool {
        try decodeGuarded { try plan.codec.inlineLists(row)[p.pid] != nil }
    }

    /// The lists the row of `key` keeps in itself, by pid.
    func inlineLists(_ plan: ClassPlan, _ key: Int64) throws -> PidMap<[UInt8]> {
        try withRow(plan, key) { row in try row.map { r in try decodeGuarded { try plan.codec.inlineLists(r) } } ?? [:]
        }
    }

    /// `ownerRow`: the owner's row when the caller holds it (valid now), so a list kept in
    /// the row costs no descent.
    func list(_ c: ClassSchema, _ key: Int64, _ p: Property, ownerRow: UnsafeRawBufferPointer? = nil) throws
        -> [ObjectValue]
    {
        try list(plan(c), key, p, ownerRow: ownerRow)
    }

    func list(_ plan: ClassPlan, _ key: Int64, _ p: Property, ownerRow: UnsafeRawBufferPointer? = nil) throws
        -> [ObjectValue]
    {
        try list(plan, key, pid: p.pid, ownerRow: ownerRow)
    }

    func list(_ plan: ClassPlan, _ key: Int64, pid: UInt32, ownerRow: UnsafeRawBufferPointer?) throws -> [ObjectValue] {
        func inline(_ row: UnsafeRawBufferPointer?) throws -> [ObjectValue]? {
            guard let row else { return nil }
            return try decodeGuarded {
                try plan.codec.inlineList(row, pid: pid).map { try TaggedValue.decodeAll($0) }
            }
        }
        let inRow = try ownerRow.map(inline) ?? withRow(plan, key, inline)
        if let inRow { return inRow }
        let t = plan.listsTable
        guard try hasTable(.lists, plan) else { return [] }
        var out: [ObjectValue] = []
        let prefix = KeyBytes.property(key, pid)
        try tx.scan(table: t, from: prefix, to: KeyBytes.successor(prefix)) { _, v in
            out.append(contentsOf: try decodeGuarded { try TaggedValue.decodeAll(v) })
            return true
        }
        return out
    }

    /// Replaces a list's contents (and its count in the row, and its backlinks).
    func setList(_ c: ClassSchema, _ key: Int64, _ p: Property, _ items: [ObjectValue]) throws {
        let old = try list(c, key, p)
        if p.isLink {
            var delta: [Int64: Int64] = [:]
            for case .link(let t) in old { delta[t, default: 0] -= 1 }
            for case .link(let t) in items { delta[t, default: 0] += 1 }
            for (t, d) in delta where d != 0 { try adjustBacklink(c, p, from: key, to: t, by: d) }
        }
        var vals = try values(c, key)
        vals[p.pid] = .int(Int64(items.count))
        let plan = plan(c)
        var inRow = try inlineLists(plan, key)
        inRow[p.pid] = RowCodec.inlineBytes(items)
        if inRow[p.pid] == nil { try writeList(c, key, p, items) } else { try deleteList(plan, key, pid: p.pid) }
        try putRow(c, plan, key, vals, inlineLists: inRow)
    }

    static let listChunk = 240

    func writeList(_ c: ClassSchema, _ key: Int64, _ p: Property, _ items: [ObjectValue], fresh: Bool = false)
        throws
    {
        if fresh && items.isEmpty { return }
        let t = plan(c).listsTable
        let w = try ensureTable(t)
        if !fresh { try deleteList(plan(c), key, pid: p.pid) }
        var chunk: UInt32 = BrokenObjectLayer.on(.listChunkFromOne) ? 1 : 0
        var i = 0
        while i < items.count {
            var bytes: [UInt8] = []
            for v in items[i..<min(i + ObjectTables.listChunk, items.count)] { TaggedValue.encode(v, into: &bytes) }
            try w.put(table: t, key: KeyBytes.listChunk(key, p.pid, chunk), value: bytes)
            chunk += 1
            i += ObjectTables.listChunk
        }
    }

    func deleteList(_ plan: ClassPlan, _ key: Int64, pid: UInt32) throws {
        let t = plan.listsTable
        guard try hasTable(.lists, plan), let w = writer else { return }
        let prefix = KeyBytes.property(key, pid)
        var old: [[UInt8]] = []
        try w.scan(table: t, from: prefix, to: KeyBytes.successor(prefix)) { k, _ in
            old.append(Array(k)); return true
        }
        for k in old { try w.delete(table: t, key: k) }
    }
}
