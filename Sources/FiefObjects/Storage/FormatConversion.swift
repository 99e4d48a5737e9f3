import Engine

/// Brings an older file's objects to the current object-layer format (3) in one write, so a
/// crash leaves one format or the other, whole:
/// - format 1 kept one fixed row per object in `fief/o/<cid>`: each row moves into its cluster
///   in `fief/c/<cid>`, written again as a compact row, and `fief/o/<cid>` goes;
/// - format 2 kept clusters of fixed rows: each cluster is written again in place, its rows
///   compact, its objects and its class's cluster size unchanged.
/// Lists, out-of-row values, backlinks and indexes are keyed by object key in every format, so
/// they stay as they are (a value kept out of its row stays out).
package enum FormatConversion {
    /// The format this build writes.
    package static let current = SchemaStore.format

    static func convert(_ tx: WriteTransaction, path: String) throws {
        let old = try SchemaStore.load(tx, path: path)
        guard old.format < SchemaStore.format else { return }
        var new = old
        new.format = SchemaStore.format
        let t = ObjectTables(tx: tx, schema: new, path: path)
        for c in old.classes.values.sorted(by: { $0.cid < $1.cid }) {
            let plan = t.plan(c)
            if old.format == 1 {
                let rows = Tables.objects(c.cid)
                guard try tx.tableInfo(rows) != nil else { continue }
                // Ascending keys: each cluster fills, is written once, and leaves memory.
                try tx.scan(table: rows) { k, v in
                    let key = KeyBytes.readObj(k, at: 0)
                    try t.putRowBytes(
                        plan, key, try t.decodeGuarded { try plan.codec.transcode(v, compact: true, key: key) })
                    return true
                }
                try tx.dropTable(rows)
            } else {
                try rewriteClusters(t, plan, compact: true)
            }
            try rewriteIndexes(tx, c, compact: true)
        }
        try t.flush()
        if BrokenObjectLayer.on(.conversionSplit) {
            // Broken on purpose: the format flips in a second write, after this one commits.
            try tx.put(table: Tables.meta, key: Array("format".utf8), value: old.format.valueBytes)
            return
        }
        try SchemaStore.save(new, tx)
    }

    /// Writes each index of a class again, every entry's object key in the other form
    /// (`KeyBytes.indexEntry`).
    static func rewriteIndexes(_ tx: WriteTransaction, _ c: ClassSchema, compact: Bool) throws {
        for p in c.properties where p.hasIndex {
            let name = Tables.index(c.cid, p.pid)
            guard try tx.tableInfo(name) != nil else { continue }
            var entries: [[UInt8]] = []
            try tx.scan(table: name) { k, _ in
                entries.append(Array(k))
                return true
            }
            try tx.dropTable(name)
            try tx.createTable(name, keyKind: .bytes, valueKind: .bytes)
            for e in entries {
                let key = e.withUnsafeBytes { KeyBytes.indexEntryKey($0, compact: !compact) }
                let value = Array(KeyBytes.indexEntryValue(e, compact: !compact))
                try tx.put(table: name, key: KeyBytes.indexEntry(value, key, compact: compact), value: [])
            }
        }
    }

    /// Writes each cluster of a class again in place, every row in the other encoding (a
    /// compact row's backlinks do not come along: the caller moved them).
    static func rewriteClusters(_ t: ObjectTables, _ plan: ObjectTables.ClassPlan, compact: Bool) throws {
        guard let w = t.writer, try t.tx.tableInfo(plan.objectsTable) != nil else { return }
        let shift = try t.clusterShift(plan)
        var numbers: [Int64] = []
        try t.tx.scan(table: plan.objectsTable) { k, _ in
            numbers.append(KeyBytes.readObj(k, at: 0))
            return true
        }
        for n in numbers {
            let rows = ClusterRows(shift: shift)
            try n.withKeyBytes { k in
                try t.tx.withValue(table: plan.objectsTable, keyBytes: k) { v in
                    guard let v else { return }
                    try t.decodeGuarded {
                        _ = try ClusterView(v, shift: shift).forEachObject(number: n) { key, row in
                            rows.put(
                                slot: Int(key - n << shift), try plan.codec.transcode(row, compact: compact, key: key))
                            return true
                        }
                    }
                }
            }
            if let bytes = rows.encoded(summary: compact ? ClusterSummary.of(rows, number: n, plan) : nil) {
                try n.withKeyBytes { try w.put(table: plan.objectsTable, keyBytes: $0, value: bytes) }
            }
        }
    }
}

extension FormatConversion {
    /// Writes a current-format file back in an older format (1: one fixed row per object in
    /// `fief/o/<cid>`; 2: clusters of fixed rows), in one write: only for the torture suite,
    /// whose `objects` scenario kills the conversion of an old file at each crash point
    /// (nothing else writes an old format any more). False when the file holds no object layer
    /// yet (a writer killed before its first commit): nothing to write back.
    @discardableResult
    package static func downgrade(_ db: Database, path: String, to format: Int64 = 1) throws -> Bool {
        precondition(format == 1 || format == 2, "an old format is 1 or 2")
        return try db.write { tx in
            guard try tx.tableInfo(Tables.meta) != nil else { return false }
            let s = try SchemaStore.load(tx, path: path)
            guard s.format == SchemaStore.format else { return true }
            let t = ObjectTables(tx: tx, schema: s, path: path)
            // The backlinks rows keep go to `fief/b`, where old formats keep them all.
            for c in s.classes.values.sorted(by: { $0.cid < $1.cid })
            where try tx.tableInfo(Tables.clusters(c.cid)) != nil {
                var entries: [([UInt8], Int64)] = []
                try t.keys(c) { k, row in
                    for e in try t.decodeGuarded({ try t.plan(c).codec.backlinks(row) }) {
                        entries.append(
                            (KeyBytes.backlink(target: k, originClass: e.cid, pid: e.pid, origin: e.origin), e.count))
                    }
                    return true
                }
                guard !entries.isEmpty else { continue }
                let bt = Tables.backlinks(c.cid)
                if try tx.tableInfo(bt) == nil { try tx.createTable(bt, keyKind: .bytes, valueKind: .int64) }
                for (k, n) in entries { try tx.put(table: bt, key: k, value: n.valueBytes) }
            }
            for c in s.classes.values.sorted(by: { $0.cid < $1.cid }) { try rewriteIndexes(tx, c, compact: false) }
            for c in s.classes.values.sorted(by: { $0.cid < $1.cid })
            where try tx.tableInfo(Tables.clusters(c.cid)) != nil {
                let plan = t.plan(c)
                if format == 2 {
                    try rewriteClusters(t, plan, compact: false)
                    continue
                }
                var rows: [(Int64, [UInt8])] = []
                try t.keys(c) { k, row in
                    rows.append((k, try t.decodeGuarded { try plan.codec.transcode(row, compact: false, key: k) }))
                    return true
                }
                try tx.createTable(Tables.objects(c.cid), keyKind: .int64, valueKind: .bytes)
                for (k, row) in rows { try tx.put(table: Tables.objects(c.cid), key: KeyBytes.obj(k), value: row) }
                try tx.dropTable(Tables.clusters(c.cid))
                try tx.delete(table: Tables.meta, key: ObjectTables.shiftKey(c.cid))
            }
            try tx.put(table: Tables.meta, key: Array("format".utf8), value: format.valueBytes)
            let stamp = (try SchemaStore.meta(tx, "schemaStamp") ?? 0) + 1
            try tx.put(table: Tables.meta, key: Array("schemaStamp".utf8), value: stamp.valueBytes)
            return true
        }
    }

    /// The object-layer format a file's objects are in (the current one for a file without
    /// objects).
    package static func format(_ db: Database) throws -> Int64 {
        try db.read { try SchemaStore.meta($0, "format") ?? SchemaStore.format }
    }
}
