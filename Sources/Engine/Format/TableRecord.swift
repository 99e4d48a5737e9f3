/// How a table's keys and values are typed. Storage is bytes; the kind says how to read them.
public enum KeyKind: UInt8, Sendable, CustomStringConvertible {
    case int64 = 1
    case bytes = 2
    public var description: String { self == .int64 ? "int64" : "bytes" }
}

public typealias ValueKind = KeyKind

/// A table's entry in the catalog tree (docs/FORMAT.md §1.5, "table record").
struct TableRecord {
    var root: UInt64
    var count: UInt64
    var keyKind: KeyKind
    var valueKind: ValueKind

    static let size = 24

    /// Byte offsets in a record; bytes 18..<24 are zero.
    enum Offset {
        static let root = 0
        static let count = 8
        static let keyKind = 16
        static let valueKind = 17
    }

    func encode() -> [UInt8] {
        var b = [UInt8](repeating: 0, count: TableRecord.size)
        b.withUnsafeMutableBytes { p in
            p.setU64(root, at: Offset.root)
            p.setU64(count, at: Offset.count)
            p.setU8(keyKind.rawValue, at: Offset.keyKind)
            p.setU8(valueKind.rawValue, at: Offset.valueKind)
        }
        return b
    }

    static func decode(_ b: [UInt8], table: String) throws -> TableRecord {
        guard b.count == size else {
            throw CorruptNode(ref: 0, detail: "catalog entry for '\(table)' has \(b.count) bytes")
        }
        return try b.withUnsafeBytes { p in
            guard let k = KeyKind(rawValue: p.u8(Offset.keyKind)), let v = ValueKind(rawValue: p.u8(Offset.valueKind))
            else {
                throw CorruptNode(ref: 0, detail: "catalog entry for '\(table)' has unknown key or value kind")
            }
            return TableRecord(root: p.u64(Offset.root), count: p.u64(Offset.count), keyKind: k, valueKind: v)
        }
    }
}
