import Engine
import Foundation

/// Indexes: entries written sorted at flush, scans and lookups of a value, primary keys.
extension ObjectTables {
    /// Puts the pending entries of index `t` into its tree, in key order.
    func applyPendingIndex(_ t: String) throws {
        guard !pendingIndexKeys.isEmpty, let keys = pendingIndexKeys.take(t) else { return }
        let w = try ensureTable(t)
        try keys.apply(to: t, in: w)
    }

    /// Every index's pending entries, in their trees (before a check reads the indexes).
    func applyPendingIndexes() throws {
        for t in pendingIndexKeys.names.sorted() { try applyPendingIndex(t) }
    }

    /// Keys whose indexed value lies in [from, to) of index-key bytes.
    func indexScan(_ c: ClassSchema, _ p: Property, from: [UInt8]?, to: [UInt8]?, _ body: (Int64) throws -> Bool) throws
    {
        let t = Tables.index(c.cid, p.pid)
        try applyPendingIndex(t)
        guard try hasTable(t) else { return }
        let compact = plan(c).compactIndexKeys
        try tx.scan(table: t, from: from, to: to) { k, _ in try body(KeyBytes.indexEntryKey(k, compact: compact)) }
    }

    /// The entry of object `key` with value `v` in an index of the class.
    func indexEntry(_ plan: ClassPlan, _ v: ObjectValue, _ key: Int64) -> [UInt8] {
        KeyBytes.indexEntry(KeyBytes.indexValue(v), key, compact: plan.compactIndexKeys)
    }

    func indexLookup(_ c: ClassSchema, _ p: Property, _ v: ObjectValue) throws -> [Int64] {
        let prefix = KeyBytes.indexValue(v)
        var out: [Int64] = []
        try indexScan(c, p, from: prefix, to: KeyBytes.successor(prefix)) {
            out.append($0); return true
        }
        return out
    }

    /// The object with primary key `v`, if any.
    func lookupPrimaryKey(_ c: ClassSchema, _ v: ObjectValue) throws -> Int64? {
        guard let pk = c.primaryKey else { return nil }
        return try lookupPrimaryKey(c, pk, v)
    }

    /// As `lookupPrimaryKey(c, v)`, with the class's primary key at hand (its plan's): found
    /// in the schema, it was a search and a copy of the property per object added.
    func lookupPrimaryKey(_ c: ClassSchema, _ pk: Property, _ v: ObjectValue) throws -> Int64? {
        if pk.kind.isInteger {
            guard case .int(let k) = v else { return nil }
            return try exists(c, k) ? k : nil
        }
        return try indexLookup(c, pk, v).first
    }
}
