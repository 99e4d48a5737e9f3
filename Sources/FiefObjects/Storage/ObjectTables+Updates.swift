import Engine
import Foundation

/// Updates: one property set, its index entry and backlinks kept in step.
extension ObjectTables {
    /// Sets one stored, non-list property, keeping its index and backlinks in step.
    func set(_ c: ClassSchema, _ key: Int64, _ p: Property, _ v: ObjectValue) throws {
        try set(plan(c), key, p, v, schema: c)
    }

    /// As above, with the class's plan at hand (an accessor's setter finds it by name): the
    /// class schema is looked up only where an index, a link or a whole row needs it, so an
    /// age or a flag set costs no lookup and copy of it.
    /// `schema`: the class schema, when the caller has it (a migration's may not be the one
    /// stored yet).
    func set(_ plan: ClassPlan, _ key: Int64, _ p: Property, _ v: ObjectValue, schema c: ClassSchema? = nil) throws {
        guard v.fits(p) else {
            throw ObjectError.typeMismatch(className: plan.name, property: p.name, expected: p.typeName, found: "\(v)")
        }
        if !p.primaryKey, !p.list, !p.kind.isVariableLength, writer != nil {
            // A fixed-width value in a row of the current layout: its bytes patched in place
            // (no decode into a dictionary, no re-encode).
            guard let patched = try patchRow(plan, key, p, v) else {
                throw ObjectError.objectDeleted(className: plan.name)
            }
            if let old = patched {
                if old == v, !(old.numeric?.isNaN ?? false) { return }
                if p.hasIndex || p.isLink {
                    try changeIndexAndBacklinks(try c ?? cls(plan.name), key, p, from: old, to: v)
                }
                return
            }
        }
        let c = try c ?? cls(plan.name)
        var vals = try values(c, key)
        let old = vals[p.pid] ?? ObjectTables.defaultValue(p)
        if p.primaryKey && (!migrating || p.kind.isInteger) {
            if old != v { throw ObjectError.primaryKeyChange(className: c.name, property: p.name) }
            return
        }
        if old == v, !(old.numeric?.isNaN ?? false) { return }
        vals[p.pid] = v
        try changeIndexAndBacklinks(c, key, p, from: old, to: v)
        try putRow(c, plan, key, vals, inlineLists: try inlineLists(plan, key))
    }

    /// Keeps a property's index entry and, for a link, the target's backlinks in step with a
    /// change of its value.
    private func changeIndexAndBacklinks(
        _ c: ClassSchema, _ key: Int64, _ p: Property, from old: ObjectValue, to v: ObjectValue
    ) throws {
        if p.hasIndex {
            let t = Tables.index(c.cid, p.pid)
            try applyPendingIndex(t)
            let w = try ensureTable(t)
            if !BrokenObjectLayer.on(.staleIndex) {
                try w.delete(table: t, key: indexEntry(plan(c), old, key))
            }
            try w.put(table: t, key: indexEntry(plan(c), v, key), value: [])
        }
        if p.isLink {
            if case .link(let t) = old { try adjustBacklink(c, p, from: key, to: t, by: -1) }
            if case .link(let t) = v { try adjustBacklink(c, p, from: key, to: t, by: 1) }
        }
    }
}
