import Engine

/// Moves a format-1 file's objects (one row per object in `fief/o/<cid>`) into format 2's
/// clusters (`fief/c/<cid>`), in one write: a crash leaves one format or the other, whole.
/// Rows keep their bytes, and lists, out-of-row values, backlinks and indexes are keyed by
/// object key in both formats, so they stay as they are.
enum FormatConversion {
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
        try SchemaStore.save(new, tx)
    }
}
