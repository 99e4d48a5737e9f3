import Engine
import Foundation

/// Deletes: an object, its lists and index entries, its links' backlinks, and the cascade.
extension ObjectTables {
    /// Deletes objects: removes their rows, lists, index entries and outgoing backlinks,
    /// nullifies links to them and removes them from lists, then deletes cascade targets.
    /// Cycle-safe: each object is deleted once.
    func delete(_ c: ClassSchema, _ key: Int64) throws { try delete(plan(c), key) }

    func delete(_ plan: ClassPlan, _ key: Int64) throws {
        // Taken from the write, so a deletion inside this one (there is none) would make its own.
        var pending = deletionQueue, few = deletionVisits
        (deletionQueue, deletionVisits) = ([], [])
        defer {
            if !pending.isEmpty { pending.removeAll(keepingCapacity: true) }
            while few.popLast() != nil {}
            (deletionQueue, deletionVisits) = (pending, few)
        }
        pending.append((plan, key))
        // A cascade's first few in an array searched in order, the rest in a set: a set made
        // for each deletion (a person and its two dogs) cost a twentieth of deleting them.
        var many = Set<Visit>()
        while let (p, k) = pending.popLast() {
            let id = Visit(cid: p.cid, key: k)
            guard !few.contains(id), many.isEmpty || !many.contains(id), try exists(p, k) else { continue }
            if few.count < 16 { few.append(id) } else { many.insert(id) }
            try deleteOne(p, k, cascade: &pending)
        }
    }

    /// The values of `props` in `row`, the row of `key` (a property the row's layout predates
    /// has its default), into `out`, which is emptied first. Slot by slot: every field of the
    /// row, in an array, cost a deletion more than it read.
    private func values(
        _ plan: ClassPlan, _ key: Int64, row: UnsafeRawBufferPointer, of props: [Property],
        into out: inout PidMap<ObjectValue>
    ) throws {
        out.removeAll()
        try decodeGuarded {
            try plan.codecRef._withUnsafeGuaranteedRef { codec in
                let l = try codec.layout(of: row)
                // By index: `for p in props` copied each property, its strings retained.
                for i in props.indices {
                    let pid = props[i].pid
                    guard let s = l.slot(of: pid) else {
                        out.set(pid, ObjectTables.defaultValue(props[i]))
                        continue
                    }
                    out.set(
                        pid,
                        try codec.value(
                            row, layout: l, slot: s, key: key,
                            outOfRow: { try self.tx.get(table: plan.outOfRowTable, key: KeyBytes.property(key, pid)) }
                        ))
                }
            }
        }
    }

    /// Deletes one object; appends the cascade targets it linked to to `cascade`.
    private func deleteOne(_ plan: ClassPlan, _ key: Int64, cascade: inout [(plan: ClassPlan, key: Int64)]) throws {
        // The object's cluster, decoded for the removal below, first: the reads of its row
        // on the way (values, lists, backlinks) find it in memory, not by a descent each.
        if !plan.legacyRows { _ = try withHotCluster(plan, key) { _, _ in } }
        var vals = deletionValues
        deletionValues = PidMap()
        defer { deletionValues = vals }
        let links = plan.links
        // What the deletion reads from the row, in one visit of it (a visit each was a tenth of
        // deleting a person): the indexed values and to-one links, the lists of links (a
        // cascade's targets queued at once), and the links into the object the row keeps.
        var listed: [(link: Int, targets: [Int64])] = []
        var incoming: [CompactRow.Backlink] = []
        try withRow(plan, key) { row in
            guard let row else { throw ObjectError.objectDeleted(className: plan.name) }
            try values(plan, key, row: row, of: plan.deletionReads, into: &vals)
            for i in links.indices where links[i].list {
                guard let name = links[i].target, let targetPlan = try? self.plan(named: name) else { continue }
                let items = try list(plan, key, pid: links[i].pid, ownerRow: row)
                if links[i].onDelete == .cascade && !BrokenObjectLayer.on(.noCascade) {
                    for case .link(let t) in items { cascade.append((targetPlan, t)) }
                } else {
                    listed.append((i, items.compactMap { if case .link(let t) = $0 { return t } else { return nil } }))
                }
            }
            incoming = try decodeGuarded { try plan.codec.backlinks(row) }
        }
        // By index, the properties read in place (a copy of each, its strings retained, per
        // object), and the tables' existence asked once per transaction, not by name each time.
        let indexed = plan.indexed
        for i in indexed.indices {
            let t = plan.indexTables[i]
            try applyPendingIndex(t)
            let w: WriteTransaction
            if plan.indexTablesExist, let known = writer { w = known } else { w = try ensureTable(t) }
            try w.delete(
                table: t, key: indexEntry(plan, vals[indexed[i].pid] ?? ObjectTables.defaultValue(indexed[i]), key))
        }
        plan.indexTablesExist = true
        for i in links.indices {
            let targets: [Int64]
            if links[i].list {
                // Read above; a cascade's targets are queued already.
                guard let l = listed.first(where: { $0.link == i }) else { continue }
                targets = l.targets
            } else if case .link(let t)? = vals[links[i].pid] {
                // A target class the schema lacks has no objects to delete or entries to drop.
                guard let name = links[i].target, let targetPlan = try? self.plan(named: name) else { continue }
                if links[i].onDelete == .cascade && !BrokenObjectLayer.on(.noCascade) {
                    // Deleted next, its entries with it: one for an origin gone is passed over,
                    // and a target listed twice is deleted once (`delete` skips what it visited).
                    cascade.append((targetPlan, t))
                    continue
                }
                targets = [t]
            } else {
                continue
            }
            let c = try cls(plan.name)
            var seen = Set<Int64>()
            for t in targets where targets.count == 1 || seen.insert(t).inserted {
                // However many times it links there: the entry goes.
                try adjustBacklink(c, links[i], from: key, to: t, by: -(1 << 48))
            }
        }
        let lists = plan.lists
        for i in lists.indices { try deleteList(plan, key, pid: lists[i].pid) }
        let vt = plan.outOfRowTable
        if try hasTable(.outOfRow, plan) {
            let stored = plan.stored
            for i in stored.indices where stored[i].kind.isVariableLength {
                try writer?.delete(table: vt, key: KeyBytes.property(key, stored[i].pid))
            }
        }
        // Links into this object (its row keeps some, read above), read before the row goes:
        // nullify to-one links, drop list occurrences.
        try tableBacklinks(plan, key, into: &incoming)
        try removeRow(plan, key)
        for link in incoming {
            let (cid, pid, origin) = (link.cid, link.pid, link.origin)
            guard let oc = schema.byCid(cid), let op = oc.property(pid: pid), try exists(oc, origin) else { continue }
            if op.list {
                let items = try list(oc, origin, op).filter { $0 != .link(key) }
                try setList(oc, origin, op, items)
            } else {
                try set(oc, origin, op, .null)
            }
        }
        // Whatever the changes above left of those entries (an origin that is gone): nothing
        // adds entries under this key meanwhile, so no second scan is needed to find them.
        let bt = plan.backlinksTable
        guard try hasTable(.backlinks, plan) else { return }
        for link in incoming {
            try writer?.delete(
                table: bt,
                key: KeyBytes.backlink(target: key, originClass: link.cid, pid: link.pid, origin: link.origin))
        }
    }

    /// Removes every object of a class (its tables go; the class stays in the schema).
    func deleteAll(_ c: ClassSchema) throws {
        var keys: [Int64] = []
        try self.keys(c) { k, _ in
            keys.append(k); return true
        }
        for k in keys { try delete(c, k) }
    }
}
