#if canImport(Glibc)
    import Glibc
#endif

/// A filesystem operation, as faults match on it and the trace names it.
public enum Operation: String, CaseIterable, Sendable, Codable {
    case open, create, read, write, truncate, fallocate, fsync, fsyncdir
    case unlink, rename, link, symlink, mkdir, rmdir
}

/// What a fault does when its rule fires.
public enum FaultKind: String, CaseIterable, Sendable, Codable {
    case eio
    case enospc
    case edquot
    case shortWrite = "short-write"
    case latency
    case bitflip
    case fsyncFail = "fsync-fail"
    case fsyncLie = "fsync-lie"
    case killCaller = "kill-caller"

    /// The operations a rule of this kind matches when it names none.
    var defaultOperations: Set<Operation> {
        switch self {
        case .eio: return [.read, .write]
        case .enospc, .edquot: return [.write, .truncate, .fallocate, .create]
        case .shortWrite: return [.write]
        case .latency: return Set(Operation.allCases)
        case .bitflip: return [.read]
        case .fsyncFail, .fsyncLie: return [.fsync]
        case .killCaller: return [.write, .fsync]
        }
    }

    /// The operations this kind can act on at all.
    var possibleOperations: Set<Operation> {
        switch self {
        case .shortWrite: return [.write]
        case .bitflip: return [.read]
        case .fsyncFail, .fsyncLie: return [.fsync, .fsyncdir]
        case .enospc, .edquot: return [.write, .truncate, .fallocate, .create]
        default: return Set(Operation.allCases)
        }
    }
}

/// A mistake in a fault description, from the command line or a config file.
public struct FaultSpecError: Error, CustomStringConvertible, Equatable {
    public let description: String
    init(_ d: String) { description = d }
}

/// One fault to inject: what it does, which operations it matches (kind of operation, path
/// pattern, from the n-th match on, with a probability), and whether it fires once or keeps
/// firing. Built from `key=value` words, the same in `ctl inject` and in config files.
public struct FaultRule: Sendable, Equatable, CustomStringConvertible {
    public var kind: FaultKind
    public var operations: Set<Operation>
    /// A shell glob matched against the path inside the mount ("dir/db.fief"); a pattern
    /// without a slash also matches the last component.
    public var pathPattern: String = "*"
    public var nth: Int = 1
    public var probability: Double = 1
    public var once: Bool = false
    /// Bytes of file data the mount may hold before `enospc`/`edquot` fire.
    public var quota: Int64?
    public var minDelayMicros: UInt32 = 0
    public var maxDelayMicros: UInt32 = 0
    public var bits: Int = 1
    /// `kill-caller`: kill before the operation takes effect, or after.
    public var killAfter = false

    public static let keys = [
        "op", "path", "nth", "probability", "once", "repeat", "quota", "ms", "min-ms", "max-ms", "bits", "when"
    ]

    public init(kind: FaultKind) {
        self.kind = kind
        operations = kind.defaultOperations
    }

    /// `words` as on the command line: `KIND key=value ... [once|repeat]`.
    public init(words: [String]) throws {
        guard let first = words.first else {
            throw FaultSpecError("a fault needs a kind: \(FaultKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var fields: [(String, String)] = []
        for w in words.dropFirst() {
            if w == "once" || w == "repeat" { fields.append((w, "true")); continue }
            guard let eq = w.firstIndex(of: "="), eq != w.startIndex else {
                throw FaultSpecError("'\(w)' is not key=value (keys: \(FaultRule.keys.joined(separator: ", ")))")
            }
            fields.append((String(w[..<eq]), String(w[w.index(after: eq)...])))
        }
        try self.init(kindName: first, fields: fields)
    }

    public init(kindName: String, fields: [(String, String)]) throws {
        guard let kind = FaultKind(rawValue: kindName) else {
            throw FaultSpecError(
                "unknown fault '\(kindName)' (known: \(FaultKind.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        self.init(kind: kind)
        for (key, value) in fields { try set(key, value) }
        if (kind == .enospc || kind == .edquot) && quota == nil {
            throw FaultSpecError("\(kind.rawValue) needs quota=BYTES (e.g. quota=10M)")
        }
        if kind == .latency && maxDelayMicros == 0 {
            throw FaultSpecError("latency needs ms=N or min-ms=A max-ms=B")
        }
        let impossible = operations.subtracting(kind.possibleOperations)
        if !impossible.isEmpty {
            throw FaultSpecError(
                "\(kind.rawValue) cannot act on \(impossible.map(\.rawValue).sorted().joined(separator: ", "))")
        }
    }

    private mutating func set(_ key: String, _ value: String) throws {
        func number<T: LosslessStringConvertible>(_: T.Type) throws -> T {
            guard let v = T(value) else { throw FaultSpecError("\(key)=\(value): not a number") }
            return v
        }
        switch key {
        case "op", "ops":
            var ops = Set<Operation>()
            for name in value.split(separator: ",") {
                if name == "any" { ops.formUnion(kind.possibleOperations); continue }
                guard let op = Operation(rawValue: String(name)) else {
                    throw FaultSpecError(
                        "op=\(name): unknown operation (known: any, "
                            + "\(Operation.allCases.map(\.rawValue).joined(separator: ", ")))"
                    )
                }
                ops.insert(op)
            }
            guard !ops.isEmpty else { throw FaultSpecError("op= names no operation") }
            operations = ops
        case "path": pathPattern = value.hasPrefix("/") ? String(value.dropFirst()) : value
        case "nth":
            nth = try number(Int.self)
            guard nth >= 1 else { throw FaultSpecError("nth=\(value): counts from 1") }
        case "probability", "p":
            probability = try number(Double.self)
            guard (0...1).contains(probability) else {
                throw FaultSpecError("probability=\(value): must be within 0...1")
            }
        case "once": once = try FaultRule.flag(key, value)
        case "repeat": once = !(try FaultRule.flag(key, value))
        case "quota": quota = try FaultRule.bytes(value)
        case "ms":
            let ms = try number(UInt32.self)
            minDelayMicros = ms * 1000; maxDelayMicros = ms * 1000
        case "min-ms": minDelayMicros = try number(UInt32.self) * 1000
        case "max-ms": maxDelayMicros = try number(UInt32.self) * 1000
        case "bits":
            bits = try number(Int.self)
            guard bits >= 1 else { throw FaultSpecError("bits=\(value): at least 1") }
        case "when":
            guard value == "before" || value == "after" else { throw FaultSpecError("when=\(value): before or after") }
            killAfter = value == "after"
        default:
            throw FaultSpecError("unknown key '\(key)' (keys: \(FaultRule.keys.joined(separator: ", ")))")
        }
        if maxDelayMicros < minDelayMicros { maxDelayMicros = minDelayMicros }
    }

    static func flag(_ key: String, _ value: String) throws -> Bool {
        switch value {
        case "true", "yes", "1": return true
        case "false", "no", "0": return false
        default: throw FaultSpecError("\(key)=\(value): true or false")
        }
    }

    /// "4096", "64K", "10M", "1G".
    static func bytes(_ text: String) throws -> Int64 {
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        var digits = Substring(text), scale: Int64 = 1
        if let last = text.last?.uppercased().first, let u = units[last] { scale = u; digits = text.dropLast() }
        guard let n = Int64(digits), n >= 0 else {
            throw FaultSpecError("quota=\(text): a byte count such as 65536, 64K, 10M")
        }
        return n * scale
    }

    public func matches(_ op: Operation, path: String) -> Bool {
        guard operations.contains(op) else { return false }
        if pathPattern == "*" { return true }
        if fnmatch(pathPattern, path, 0) == 0 { return true }
        if !pathPattern.contains("/"), let slash = path.lastIndex(of: "/") {
            return fnmatch(pathPattern, String(path[path.index(after: slash)...]), 0) == 0
        }
        return false
    }

    /// The words that make this rule again (`status` shows them; `inject` takes them).
    public var description: String {
        var w = [kind.rawValue]
        if operations != kind.defaultOperations {
            w.append("op=" + operations.map(\.rawValue).sorted().joined(separator: ","))
        }
        if pathPattern != "*" { w.append("path=\(pathPattern)") }
        if nth != 1 { w.append("nth=\(nth)") }
        if probability != 1 { w.append("probability=\(probability)") }
        if let quota { w.append("quota=\(quota)") }
        if maxDelayMicros > 0 { w.append("min-ms=\(minDelayMicros / 1000) max-ms=\(maxDelayMicros / 1000)") }
        if kind == .bitflip && bits != 1 { w.append("bits=\(bits)") }
        if kind == .killCaller { w.append("when=\(killAfter ? "after" : "before")") }
        if once { w.append("once") }
        return w.joined(separator: " ")
    }
}
