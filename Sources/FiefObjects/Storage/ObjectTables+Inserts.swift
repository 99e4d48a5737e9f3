import Engine
import Foundation

/// Inserts: a new object's row, its lists, its index entries and the backlinks of its links.
extension ObjectTables {
    /// Writes a new object's row, list contents, index entries and backlinks.
    /// `keyIsFree`: the caller has just seen that no object has `key` (a primary key lookup).
    /// `linkedFrom`: the entry of an origin being added with this object, which links to it;
    /// the new row holds it from the start (`PreLinks`).
    /// `plan`: the class's, at hand (an add's), lent: found again here, it was held (an atomic
    /// pair per object added, and one more for the existence check's own lookup).
    func insert(
        _ c: ClassSchema, _ plan: ClassPlan, _ key: Int64, values vals: inout PidMap<ObjectValue>,
        lists: PidMap<[ObjectValue]>, keyIsFree: Bool = false, linkedFrom: CompactRow.Backlink? = nil
    ) throws {
        if !keyIsFree, try exists(plan, key) {
            throw ObjectError.duplicatePrimaryKey(className: c.name, value: String(key))
        }
        // The properties by index, their fields read in place: a `for p in` copied each
        // `Property` (its name and target retained and released) for every object.
        let listProperties = plan.lists, indexed = plan.indexed
        for i in listProperties.indices {
            let pid = listProperties[i].pid
            vals[pid] = .int(Int64(lists[pid]?.count ?? 0))
        }
        // Each value lent where it lies (copied out, a string's retain and release apiece).
        var hint = 0
        for i in indexed.indices {
            func add(_ v: ObjectValue) throws {
                if indexed[i].primaryKey, !indexed[i].kind.isInteger || !keyIsFree,
                    try !indexLookup(c, indexed[i], v).isEmpty
                {
                    throw ObjectError.duplicatePrimaryKey(className: c.name, value: v.description)
                }
                let t = plan.indexTables[i]
                if !plan.indexTablesExist { _ = try ensureTable(t) }
                pendingIndexKeys.append(value: v, key: key, compact: plan.compactIndexKeys, to: t)
            }
            if try vals.lend(indexed[i].pid, hint: &hint, add) == nil { try add(ObjectTables.defaultValue(indexed[i])) }
        }
        plan.indexTablesExist = true
        // The write's map of inline lists, lent for this insert (no object is added during it).
        var inRow: PidMap<[UInt8]> = [:]
        swap(&inRow, &inlineListsBuffer)
        defer {
            inRow.removeAll()
            swap(&inRow, &inlineListsBuffer)
        }
        for i in listProperties.indices {
            let pid = listProperties[i].pid
            inRow[pid] = RowCodec.inlineBytes(lists[pid] ?? [])
        }
        let held = plan.legacyRows || BrokenObjectLayer.on(.skipBacklink) ? nil : linkedFrom
        try putRow(c, plan, key, vals, inlineLists: inRow, fresh: true, heldBacklink: held)
        if let held { preLinks.add(held, targetCid: c.cid, target: key) }
        // Entries new targets already hold for this object (added with it, before it).
        var pre = preLinks.take(cid: c.cid, key: key)
        // By index: a `for p in` copied each `Property` (its strings retained) per object.
        let links = plan.links
        for li in links.indices {
            // Held by rows of the property's target class only (a dynamic add may give an
            // object of another class, whose entry is then taken back).
            let pid = links[li].pid, tc = pre.isEmpty ? nil : linkTargetCid(plan, li)
            let mine = { (h: PreLinks.Held) in h.pid == pid && h.targetCid == tc }
            if links[li].list {
                let items = lists[pid] ?? []
                if !inRow.contains(pid) { try writeList(c, key, links[li], items, fresh: true) }
                // A new object has no backlink entries yet: each target's is put once, with
                // its multiplicity, in key order (no read of the entry first).
                // The write's buffers, lent while this list's entries are put (nothing in
                // between adds an object): two arrays per list of links added before.
                var targets: [Int64] = [], heldBy: [Int64] = []
                swap(&targets, &linkBuffers.targets)
                swap(&heldBy, &linkBuffers.heldBy)
                defer {
                    // One by one, as `PidMap.removeAll`: a list holds a few.
                    while !targets.isEmpty { targets.removeLast() }
                    while !heldBy.isEmpty { heldBy.removeLast() }
                    swap(&targets, &linkBuffers.targets)
                    swap(&heldBy, &linkBuffers.heldBy)
                }
                targets.reserveCapacity(items.count)
                for case .link(let t) in items { targets.append(t) }
                // Sorted only when out of order: sorting an empty list's array allocated a
                // buffer of its own for it, and targets added with their origin come in key
                // order already (sorting them anyway was a merge sort per list).
                if !ObjectTables.ascending(targets) { targets.sort() }
                // Each held entry counts one of its target's links (a target is added once).
                // Both sorted, they are matched in one merge walk (a Set of them cost an
                // allocation and a hash per target).
                if tc != nil, pre.contains(where: mine) {
                    // Split in one pass: `removeAll(where:)` after the search partitioned and
                    // moved the entries for each list.
                    var rest: [PreLinks.Held] = []
                    for h in pre {
                        if mine(h) { heldBy.append(h.target) } else { rest.append(h) }
                    }
                    pre = rest
                    if !ObjectTables.ascending(heldBy) { heldBy.sort() }
                }
                var unmatched: [Int64] = []
                var i = 0, h = 0
                while i < targets.count {
                    var j = i + 1
                    while j < targets.count && targets[j] == targets[i] { j += 1 }
                    while h < heldBy.count && heldBy[h] < targets[i] {
                        unmatched.append(heldBy[h])
                        h += 1
                    }
                    var n = j - i
                    if h < heldBy.count && heldBy[h] == targets[i] {
                        n -= 1
                        h += 1
                        // A target held twice (none should be) keeps its second entry unmatched.
                        while h < heldBy.count && heldBy[h] == targets[i] {
                            unmatched.append(heldBy[h])
                            h += 1
                        }
                    }
                    if n > 0 { try adjustBacklink(c, links[li], from: key, to: targets[i], by: Int64(n), fresh: true) }
                    i = j
                }
                // Only when some are left: a slice of `heldBy` holds its buffer (an atomic pair).
                if h < heldBy.count { unmatched.append(contentsOf: heldBy[h...]) }
                if let tc {
                    pre += unmatched.map { PreLinks.Held(cid: c.cid, origin: key, pid: pid, targetCid: tc, target: $0) }
                }
            } else if case .link(let t)? = vals[pid] {
                if tc != nil, let h = pre.firstIndex(where: { mine($0) && $0.target == t }) {
                    pre.remove(at: h)
                } else {
                    try adjustBacklink(c, links[li], from: key, to: t, by: 1)
                }
            }
        }
        // Held for a link the object did not keep (none should be): taken back.
        try revoke(pre)
        // Only for a class with lists of values: asking each list property whether it links
        // copied the `Property` (three retains and releases) for every object added.
        guard plan.layout.hasValueLists else { return }
        for i in listProperties.indices where !listProperties[i].isLink && !inRow.contains(listProperties[i].pid) {
            try writeList(c, key, listProperties[i], lists[listProperties[i].pid] ?? [], fresh: true)
        }
    }

    /// Whether `keys` are in ascending order (an empty list and one of one are).
    private static func ascending(_ keys: [Int64]) -> Bool {
        var i = 1
        while i < keys.count {
            if keys[i - 1] > keys[i] { return false }
            i += 1
        }
        return true
    }

    /// The class id of the target of link property `i` of `plan` (`plan.links[i]`), found by
    /// name once per plan: every object added with new targets looked it up by name.
    func linkTargetCid(_ plan: ClassPlan, _ i: Int) -> UInt32? {
        if plan.linkTargetCids == nil {
            plan.linkTargetCids = plan.links.map { p in p.target.flatMap { schema.classes[$0]?.cid } }
        }
        return plan.linkTargetCids![i]
    }

    /// A value of another kind than its property's, thrown before anything is written.
    private func checkKinds(_ c: ClassSchema, _ plan: ClassPlan, _ vals: PidMap<ObjectValue>) throws {
        // Against the kinds alone, each value lent: looking each stored property's value up
        // copied the value, and the property, per row.
        let kinds = plan.layout.storedKinds
        let bad = vals.firstPid { pid, v in
            // A value of no stored property (none should be) is not the row's: not checked.
            guard let k = kinds.first(where: { $0.pid == pid }) else { return false }
            return !v.fits(kind: k.kind, list: k.list)
        }
        guard let bad, let p = plan.stored.first(where: { $0.pid == bad }), let v = vals[bad] else { return }
        throw ObjectError.typeMismatch(className: c.name, property: p.name, expected: p.typeName, found: "\(v)")
    }

    /// `heldBacklink`: a new row's first backlink entry (`fresh` only). `plan`: the class's,
    /// which each caller has at hand (found again here and for the codec, each was a lookup
    /// and an atomic pair per row).
    func putRow(
        _ c: ClassSchema, _ plan: ClassPlan, _ key: Int64, _ vals: PidMap<ObjectValue>, inlineLists: PidMap<[UInt8]>,
        fresh: Bool = false, heldBacklink: CompactRow.Backlink? = nil
    ) throws {
        let varLength = plan.varLength
        var hint = 0
        for i in varLength.indices {
            let n =
                vals.lend(varLength[i].pid, hint: &hint) { v -> Int in
                    switch v {
                    case .string(let s): return s.utf8.count
                    case .data(let d): return d.count
                    default: return 0
                    }
                } ?? 0
            if n > 16 << 20 { throw ObjectError.valueTooLarge(className: c.name, property: varLength[i].name, size: n) }
        }
        try checkKinds(c, plan, vals)
        let held = fresh ? heldBacklink.map { RowCodec.backlinksSize(CompactRow.size(of: $0)) } ?? 0 : 0
        // The write's row buffer, taken while this row is encoded and put (nothing in between
        // puts another row). The row goes after those before it; the buffer is emptied now
        // and then.
        var row: [UInt8] = []
        swap(&row, &rowBuffer)
        defer { swap(&row, &rowBuffer) }
        if row.count > 1 << 12 { row.removeAll(keepingCapacity: true) }
        let start = row.count
        let moved = plan.codecRef._withUnsafeGuaranteedRef {
            $0.encode(vals, inlineLists: inlineLists, key: key, extraCapacity: held, into: &row)
        }
        guard let w = writer else { throw ObjectError.notInWriteTransaction("changing objects") }
        if !fresh && !BrokenObjectLayer.on(.rewriteDropsBacklinks) {
            // The links to the object that its row kept stay with it, appended from where the
            // old row lies (its own bytes, not the buffer's).
            try withRow(plan, key) { old in
                guard let old else { return }
                try decodeGuarded { RowCodec.appendBacklinks(try plan.codec.backlinkBytes(old), to: &row) }
            }
        } else if fresh, let heldBacklink {
            RowCodec.appendBacklink(heldBacklink, to: &row)
        }
        // Values that moved out before and stay in row now must not linger in fief/v. (The
        // table's name read only where it is used: a new row of short values retained and
        // released it.)
        if !fresh, try hasTable(.outOfRow, plan) {
            let vt = plan.outOfRowTable
            for p in plan.varLength where moved[p.pid] == nil {
                try w.delete(table: vt, key: KeyBytes.property(key, p.pid))
            }
        }
        if !moved.isEmpty {
            let vt = plan.outOfRowTable
            let w2 = try ensureTable(vt)
            for (pid, bytes) in moved { try w2.put(table: vt, key: KeyBytes.property(key, pid), value: bytes) }
        }
        try row.withUnsafeBytes { all in
            let r = UnsafeRawBufferPointer(rebasing: all[start...])
            let cut = BrokenObjectLayer.on(.shortRow) && key % 4 == 1 && r.count > 8
            try putRowBytes(plan, key, cut ? UnsafeRawBufferPointer(rebasing: r.dropLast(8)) : r)
        }
    }
}
