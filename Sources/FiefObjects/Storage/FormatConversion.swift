import Engine

/// Moves a format-1 file's objects (one row per object in `fief/o/<cid>`) into format 2's
/// clusters (`fief/c/<cid>`), in one write: a crash leaves one format or the other, whole.
/// Rows keep their bytes, and lists, out-of-row values, backlinks and indexes are keyed by
/// object key in both formats, so they stay as they are.
package enum FormatConversion {
    static func convert(_ tx: WriteTransaction, path: String) throws {
        let old = try SchemaStore.load(tx, path: path)
        guard old.format < SchemaStore.format else { return }
        var new = old
        new.format = SchemaStore.format
        let t = ObjectTables(tx: tx, schema: new, path: path)
        for c in old.classes.values.sorted(by: { $0.cid < $1.cid }) {
            let rows = Tables.objects(c.cid)
            guard try tx.tableInfo(rows) != nil else { continue }
            let plan = t.plan(c)
            // Ascending keys: each cluster fills, is written once, and leaves memory.
            try tx.scan(table: rows) { k, v in
                try t.putRowBytes(plan, KeyBytes.readObj(k, at: 0), Array(v))
                return true
            }
            try tx.dropTable(rows)
        }
        try t.flush()
        if BrokenObjectLayer.on(.conversionSplit) {
            // Broken on purpose: the format flips in a second write, after this one commits.
            try tx.put(table: Tables.meta, key: Array("format".utf8), value: old.format.valueBytes)
            return
        }
        try SchemaStore.save(new, tx)
    }
}

extension FormatConversion {
    /// Writes a format-2 file back in format 1, one row per object in `fief/o/<cid>`, in one
    /// write: only for the torture suite, whose `objects` scenario kills the conversion of a
    /// format-1 file at each crash point (nothing else writes format 1 any more). False when
    /// the file holds no object layer yet (a writer killed before its first commit): nothing
    /// to write back.
    @discardableResult
    package static func downgrade(_ db: Database, path: String) throws -> Bool {
        try db.write { tx in
            guard try tx.tableInfo(Tables.meta) != nil else { return false }
            let s = try SchemaStore.load(tx, path: path)
            guard s.format == 2 else { return true }
            let t = ObjectTables(tx: tx, schema: s, path: path)
            for c in s.classes.values.sorted(by: { $0.cid < $1.cid }) where try tx.tableInfo(Tables.clusters(c.cid)) != nil {
                var rows: [(Int64, [UInt8])] = []
                try t.keys(c) { k, row in
                    rows.append((k, Array(row)))
                    return true
                }
                try tx.createTable(Tables.objects(c.cid), keyKind: .int64, valueKind: .bytes)
                for (k, row) in rows { try tx.put(table: Tables.objects(c.cid), key: KeyBytes.obj(k), value: row) }
                try tx.dropTable(Tables.clusters(c.cid))
                try tx.delete(table: Tables.meta, key: ObjectTables.shiftKey(c.cid))
            }
            try tx.put(table: Tables.meta, key: Array("format".utf8), value: Int64(1).valueBytes)
            let stamp = (try SchemaStore.meta(tx, "schemaStamp") ?? 0) + 1
            try tx.put(table: Tables.meta, key: Array("schemaStamp".utf8), value: stamp.valueBytes)
            return true
        }
    }

    /// The object-layer format a file's objects are in (1 or 2; 2 for a file without objects).
    package static func format(_ db: Database) throws -> Int64 {
        try db.read { try SchemaStore.meta($0, "format") ?? SchemaStore.format }
    }
}
