import Engine
import Foundation

/// Reads and writes the stored schema (`fief/schema`, one JSON class record per class id)
/// and the object layer's own meta values (`fief/meta`: format, schema version).
enum SchemaStore {
    /// The object layer's format, stored in `fief/meta`; a file with a newer one is refused.
    /// 1: one fixed row per object in `fief/o/<cid>`; 2: clusters of fixed rows in
    /// `fief/c/<cid>` (`ClusterView`); 3: clusters of compact rows (`CompactRow`). An older
    /// file is read as it is, and converted by the first open that may write
    /// (`FormatConversion`).
    static let format: Int64 = 3

    static func load(_ tx: Transaction, path: String) throws -> StoredSchema {
        var s = StoredSchema()
        guard try tx.tableInfo(Tables.schema) != nil else { return s }
        let dec = JSONDecoder()
        try tx.scan(table: Tables.schema) { _, v in
            do {
                let c = try dec.decode(ClassSchema.self, from: Data(v))
                s.classes[c.name] = c
                s.nextCid = max(s.nextCid, c.cid + 1)
            } catch {
                throw EngineError.corrupt(
                    path: path, detail: "fief/schema holds a class record that does not decode: \(error)")
            }
            return true
        }
        if let f = try meta(tx, "format") {
            if f > format { throw SchemaError.newerObjectFormat(path: path, found: f, supported: format) }
            guard f >= 1 else { throw EngineError.corrupt(path: path, detail: "fief/meta gives object format \(f)") }
            s.format = f
        }
        s.version = UInt64(try meta(tx, "schemaVersion") ?? 0)
        if let n = try meta(tx, "nextCid") { s.nextCid = max(s.nextCid, UInt32(n)) }
        return s
    }

    static func meta(_ tx: Transaction, _ key: String) throws -> Int64? {
        guard try tx.tableInfo(Tables.meta) != nil, let b = try tx.get(table: Tables.meta, key: Array(key.utf8)) else {
            return nil
        }
        return try b.withUnsafeBytes { try Int64(valueBytes: $0) }
    }

    static func save(_ s: StoredSchema, _ tx: WriteTransaction, removed: [ClassSchema] = []) throws {
        if try tx.tableInfo(Tables.schema) == nil {
            try tx.createTable(Tables.schema, keyKind: .int64, valueKind: .bytes)
        }
        if try tx.tableInfo(Tables.meta) == nil { try tx.createTable(Tables.meta, keyKind: .bytes, valueKind: .bytes) }
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys]
        for c in removed { try tx.delete(table: Tables.schema, key: Int64(c.cid).keyBytes) }
        for c in s.classes.values {
            let new = [UInt8](try enc.encode(c))
            if try tx.get(table: Tables.schema, key: Int64(c.cid).keyBytes) != new {
                try tx.put(table: Tables.schema, key: Int64(c.cid).keyBytes, value: new)
            }
        }
        try tx.put(table: Tables.meta, key: Array("format".utf8), value: format.valueBytes)
        try tx.put(table: Tables.meta, key: Array("schemaVersion".utf8), value: Int64(s.version).valueBytes)
        try tx.put(table: Tables.meta, key: Array("nextCid".utf8), value: Int64(s.nextCid).valueBytes)
        let stamp = (try meta(tx, "schemaStamp") ?? 0) + 1
        try tx.put(table: Tables.meta, key: Array("schemaStamp".utf8), value: stamp.valueBytes)
    }
}
