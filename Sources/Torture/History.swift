import Foundation

/// One operation of a list-append transaction, as in Jepsen's Elle: append an element to a
/// key's list, or read a key's whole list.
public enum HistoryOp: Codable, Equatable, Sendable {
    case append(key: Int64, element: UInt64)
    case read(key: Int64, list: [UInt64])

    enum CodingKeys: String, CodingKey { case f, k, v }

    public init(from d: Decoder) throws {
        let c = try d.container(keyedBy: CodingKeys.self)
        let f = try c.decode(String.self, forKey: .f)
        let k = try c.decode(Int64.self, forKey: .k)
        if f == "append" {
            self = .append(key: k, element: try c.decode(UInt64.self, forKey: .v))
        } else {
            self = .read(key: k, list: try c.decode([UInt64].self, forKey: .v))
        }
    }

    public func encode(to e: Encoder) throws {
        var c = e.container(keyedBy: CodingKeys.self)
        switch self {
        case .append(let k, let v):
            try c.encode("append", forKey: .f); try c.encode(k, forKey: .k); try c.encode(v, forKey: .v)
        case .read(let k, let l):
            try c.encode("r", forKey: .f); try c.encode(k, forKey: .k); try c.encode(l, forKey: .v)
        }
    }
}

/// A finished transaction: committed ("ok") or rolled back ("fail").
public struct HistoryTxn: Codable, Sendable {
    public var process: Int
    public var thread: Int
    public var index: Int
    public var committed: Bool
    public var ops: [HistoryOp]
    public var id: String { "p\(process)t\(thread)#\(index)" }
}

public enum HistoryFile {
    public static func read(_ path: String) throws -> [HistoryTxn] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        let dec = JSONDecoder()
        return try data.split(separator: UInt8(ascii: "\n")).map { try dec.decode(HistoryTxn.self, from: Data($0)) }
    }

    public static func write(_ txns: [HistoryTxn], to path: String) throws {
        let enc = JSONEncoder()
        var out = Data()
        for t in txns { out += try enc.encode(t); out.append(UInt8(ascii: "\n")) }
        try out.write(to: URL(fileURLWithPath: path))
    }

    /// The history in Elle's list-append EDN format, for `elle-cli --model list-append`.
    public static func elle(_ txns: [HistoryTxn]) -> String {
        var lines: [String] = []
        for (i, t) in txns.enumerated() {
            let ops = t.ops.map { op -> String in
                switch op {
                case .append(let k, let v): return "[:append \(k) \(v)]"
                case .read(let k, let l): return "[:r \(k) [\(l.map(String.init).joined(separator: " "))]]"
                }
            }.joined(separator: " ")
            let invokeOps = t.ops.map { op -> String in
                switch op {
                case .append(let k, let v): return "[:append \(k) \(v)]"
                case .read(let k, _): return "[:r \(k) nil]"
                }
            }.joined(separator: " ")
            let process = t.process * 100 + t.thread
            lines.append("{:type :invoke, :f :txn, :value [\(invokeOps)], :process \(process), :index \(2 * i)}")
            lines.append(
                "{:type \(t.committed ? ":ok" : ":fail"), :f :txn, "
                    + ":value [\(ops)], :process \(process), :index \(2 * i + 1)}"
            )
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
