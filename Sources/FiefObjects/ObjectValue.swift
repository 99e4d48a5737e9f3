import Foundation

/// One property value as the object layer moves it between rows, indexes, queries and Swift
/// types. Integers of every width travel as `int`; a to-one link travels as the target's key.
public enum ObjectValue: Hashable, Sendable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int64)
    case float(Float)
    case double(Double)
    case string(String)
    case data([UInt8])
    case date(Date)
    case uuid(UUID)
    case link(Int64)

    public var isNull: Bool { if case .null = self { return true } else { return false } }

    public var description: String {
        switch self {
        case .null: return "nil"
        case .bool(let b): return String(b)
        case .int(let i): return String(i)
        case .float(let f): return String(f)
        case .double(let d): return String(d)
        case .string(let s): return s
        case .data(let d): return d.map { String(format: "%02x", $0) }.joined()
        case .date(let d): return String(d.timeIntervalSince1970)
        case .uuid(let u): return u.uuidString
        case .link(let k): return "->\(k)"
        }
    }

    /// The number a comparison sees: ints, floats, doubles and dates compare as numbers.
    var numeric: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .float(let f): return Double(f)
        case .double(let d): return d
        case .date(let d): return d.timeIntervalSinceReferenceDate
        case .bool(let b): return b ? 1 : 0
        default: return nil
        }
    }

    /// Sort order: nil first, then by kind; numbers by value (ints exactly), strings by UTF-8 bytes.
    static func order(_ a: ObjectValue, _ b: ObjectValue) -> Int {
        switch (a, b) {
        case (.null, .null): return 0
        case (.null, _): return -1
        case (_, .null): return 1
        case (.int(let x), .int(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.string(let x), .string(let y)): return compareUTF8(x, y)
        case (.data(let x), .data(let y)): return x.lexicographicallyPrecedes(y) ? -1 : (x == y ? 0 : 1)
        case (.uuid(let x), .uuid(let y)): return compareUUID(x, y)
        case (.link(let x), .link(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        default:
            if let x = a.numeric, let y = b.numeric {
                if x.isNaN || y.isNaN { return x.isNaN ? (y.isNaN ? 0 : -1) : 1 }
                return x < y ? -1 : (x == y ? 0 : 1)
            }
            return a.kindRank < b.kindRank ? -1 : (a.kindRank == b.kindRank ? 0 : 1)
        }
    }

    private var kindRank: Int {
        switch self {
        case .null: return 0
        case .bool: return 1
        case .int, .float, .double: return 2
        case .date: return 3
        case .string: return 4
        case .data: return 5
        case .uuid: return 6
        case .link: return 7
        }
    }
}

func compareUTF8(_ a: String, _ b: String) -> Int {
    var i = a.utf8.makeIterator(), j = b.utf8.makeIterator()
    while true {
        switch (i.next(), j.next()) {
        case (nil, nil): return 0
        case (nil, _): return -1
        case (_, nil): return 1
        case (let x?, let y?): if x != y { return x < y ? -1 : 1 }
        }
    }
}

func compareUUID(_ a: UUID, _ b: UUID) -> Int {
    let x = withUnsafeBytes(of: a.uuid) { Array($0) }, y = withUnsafeBytes(of: b.uuid) { Array($0) }
    return x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
}

extension ObjectValue {
    /// Whether a row may store this value for `p` (a list's value is its element count): a
    /// compact row's serial says the value's kind, so a value of another kind would misplace
    /// every slot after it.
    func fits(_ p: Property) -> Bool { fits(kind: p.kind, list: p.list) }

    func fits(kind: PropertyKind, list: Bool) -> Bool {
        if list { if case .int = self { return true } else { return false } }
        switch (self, kind) {
        // A null takes no bytes in any kind (a required property reads it as its default).
        case (.null, _): return true
        case (.bool, .bool), (.float, .float), (.double, .double), (.date, .date), (.uuid, .uuid), (.string, .string),
            (.data, .data), (.data, .bytes), (.link, .object):
            return true
        case (.int, _): return kind.isInteger
        default: return false
        }
    }
}
